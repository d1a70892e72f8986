"""Types every layer shares (entities of an alert, …): below the domains, importing none of them."""
