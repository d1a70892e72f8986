"""SigmaHQ rules evaluated in-process against evidence: the bundle compiled once (`rules.ruleset`), an event's
fields read as Sigma reads them (`event`), and where each alert format carries events of a log source
(`formats`). Every match keeps its rule's title, id and author, which DRL 1.1 asks any view of it to show."""
