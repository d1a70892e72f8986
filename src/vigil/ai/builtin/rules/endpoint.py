"""Rules over endpoint evidence, whichever EDR returned it: event rows, machine records, other alerts on the
machine (D, H, N). The vendor folder maps its field names onto these kinds (`vigil.evidence.knowledge`).

Event rows are read for what they show — the process command line, its parent, the remote address, the
account — not merely counted; the same artefact on other machines still means spread.
"""

from __future__ import annotations

import re

from vigil.ai.builtin.patterns import CLOUD_AGENTS, NETWORK_PROCESSES, SCRIPT_PROCESSES, behaviours_in
from vigil.ai.builtin.rules.alert import HIGH_VALUE_TAG, TESTING_TAG, VENDOR_AUTHORISED, VENDOR_WRONG
from vigil.core.entities import Entities, is_public_ip
from vigil.evidence import records as read
from vigil.evidence.knowledge import AlertRecords, AssetRecords, EventRows
from vigil.evidence.signals import AlertFacts, Explains, Signal, SkillReader, StepOutput

SPREAD_WIDE = 5
METADATA_ALERT = re.compile(r"metadata|imds|instance credential|credential exfiltration", re.IGNORECASE)
EXFIL_BYTES = 100 * 1024 * 1024
#: The vendor's machine risk levels that count, as it spells them.
RISK_POINTS = {"High": 1.0, "Medium": 0.5}


_cite = Signal.from_step


def reader(reading: EventRows | AssetRecords | AlertRecords) -> SkillReader:
    """The rule that reads a skill's output mapped onto one of these kinds."""
    if isinstance(reading, EventRows):
        return lambda item, alert, entities: event_rows(reading, item, alert, entities)
    if isinstance(reading, AssetRecords):
        return lambda item, alert, entities: machine_details(reading, item)
    return lambda item, alert, entities: machine_alerts(reading, item, alert)


def rows_of(columns: EventRows, item: StepOutput) -> tuple[str, list[dict[str, object]]]:
    """The rows and the key they came under (for locators), under a common envelope or the vendor's own."""
    output = item.output or {}
    key = next((key for key in columns.envelopes if key in output), columns.envelopes[0])
    declared = output.get(key)
    own = [row for row in declared if isinstance(row, dict)] if isinstance(declared, list) else []
    return key, read.records(output) or own


def event_rows(columns: EventRows, item: StepOutput, alert: AlertFacts, entities: Entities) -> list[Signal]:
    key, rows = rows_of(columns, item)
    signals: list[Signal] = []
    seen: set[str] = set()
    for index, row in enumerate(rows):
        for field in columns.text_columns:
            text = read.raw(row, field)
            if not text:
                continue
            agent = read.raw(row, columns.process).lower() in CLOUD_AGENTS
            for behaviour in behaviours_in(text):
                if behaviour.rule in seen or (behaviour.rule == "H2" and agent):
                    continue  # the platform agent reading metadata is how it works (see below)
                seen.add(behaviour.rule)
                device = read.raw(row, columns.device)
                where = f" on {device}" if device else ""
                signals.append(
                    _cite(
                        item,
                        behaviour.rule,
                        behaviour.points,
                        f"'{item.step_name}' shows {behaviour.name}{where}",
                        f"{key}[{index}].{field}",
                        text,
                        entities=tuple(value for value in (device, read.raw(row, columns.account)) if value),
                    )
                )
    signals.extend(_platform_agent_metadata_reads(columns, item, alert, rows, key))
    signals.extend(_unusual_connections(columns, item, rows, key))
    signals.extend(_volume(columns, item, rows, key))
    signals.extend(_spread(columns, item, rows, entities))
    return signals


def _platform_agent_metadata_reads(
    columns: EventRows, item: StepOutput, alert: AlertFacts, rows: list[dict[str, object]], key: str
) -> list[Signal]:
    """Instance-metadata credential reads made only by the cloud platform's own agent are how it works.

    It explains the alert away only when the alert is about metadata credentials; any read by another
    process (here or in another step) keeps H2 malicious (scoring withdraws the explanation then).
    """
    if not METADATA_ALERT.search(alert.alert_type):
        return []
    readers = [
        (index, read.raw(row, columns.process).lower())
        for index, row in enumerate(rows)
        if any(b.rule == "H2" for field in columns.text_columns for b in behaviours_in(read.raw(row, field)))
    ]
    if not readers or any(process not in CLOUD_AGENTS for _, process in readers):
        return []
    index, process = readers[0]
    finding = f"Every instance-metadata credential read in '{item.step_name}' comes from the platform agent {process}"
    return [
        _cite(
            item,
            "H2",
            -4.0,
            finding,
            f"{key}[{index}].{columns.process}",
            process,
            explains=Explains.WRONG_DETECTION,
        )
    ]


def _unusual_connections(columns: EventRows, item: StepOutput, rows: list[dict[str, object]], key: str) -> list[Signal]:
    """A process that has no business on the internet talking to a public address: a script host or LOLBin
    (downloads, C2) weighs 2.0, any other non-network process 1.0; the strongest row is cited."""
    best: tuple[float, int, str, str] | None = None
    for index, row in enumerate(rows):
        remote = read.raw(row, columns.remote_ip)
        process = read.raw(row, columns.process).lower()
        if not remote or not process or process in NETWORK_PROCESSES or not is_public_ip(remote):
            continue
        points = 2.0 if process in SCRIPT_PROCESSES else 1.0
        if best is None or points > best[0]:
            best = (points, index, process, remote)
    if best is None:
        return []
    points, index, process, remote = best
    prefix = "" if points == 2.0 else "Unusual process "
    finding = f"{prefix}{process} connected to the external address {remote}"
    locator = f"{key}[{index}].{columns.process}"
    return [_cite(item, "N1", points, finding, locator, f"{process} -> {remote}", entities=(remote,))]


def _volume(columns: EventRows, item: StepOutput, rows: list[dict[str, object]], key: str) -> list[Signal]:
    for index, row in enumerate(rows):
        for field in columns.sent_bytes:
            text = read.raw(row, field)
            sent = read.as_count(text)
            if sent is not None and sent >= EXFIL_BYTES:
                remote = read.raw(row, columns.remote_ip) or read.raw(row, columns.remote_url)
                finding = f"{sent // (1024 * 1024)} MB sent out" + (f" to {remote}" if remote else "")
                return [
                    _cite(
                        item, "H8", 3.0, finding, f"{key}[{index}].{field}", text, entities=(remote,) if remote else ()
                    )
                ]
    return []


def _spread(columns: EventRows, item: StepOutput, rows: list[dict[str, object]], entities: Entities) -> list[Signal]:
    """Machines in the rows other than the alert's own: the same artefact elsewhere means spread."""
    own = {name.split(".")[0] for name in entities.hosts} | set(entities.device_ids)
    machines = {read.text(row, *columns.machine) for row in rows} - {""}
    others = sorted(machine for machine in machines if machine.split(".")[0] not in own)
    if len(others) >= SPREAD_WIDE:
        return [
            _cite(
                item,
                "D3",
                3.0,
                f"'{item.step_name}' found {len(others)} other machines",
                columns.device,
                ", ".join(others[:10]),
            )
        ]
    if others:
        listed = ", ".join(others)
        return [
            _cite(
                item,
                "D3",
                2.0,
                f"'{item.step_name}' found {len(others)} other machine(s): {listed}",
                columns.device,
                listed,
                entities=tuple(others),
            )
        ]
    return []


def machine_details(asset: AssetRecords, item: StepOutput) -> list[Signal]:
    """The machine the lookup asked for: tags that say security testing or high value, the vendor's risk."""
    signals: list[Signal] = []
    for index, machine in enumerate(read.records(item.output)):
        name = next(filter(None, (read.raw(machine, column) for column in asset.name)), "")
        raw_tags = read.field(machine, asset.tags)
        tags = [tag for tag in raw_tags if isinstance(tag, str)] if isinstance(raw_tags, list) else []
        base = f"{asset.envelope}[{index}]"
        testing = next((tag for tag in tags if TESTING_TAG.search(tag)), None)
        if testing:
            signals.append(
                _cite(
                    item,
                    "D4",
                    -5.0,
                    f"{asset.product} tags {name} as security testing ('{testing}')",
                    f"{base}.{asset.tags}",
                    testing,
                    explains=Explains.WRONG_DETECTION,
                    entities=(name,),
                )
            )
        risk = read.text(machine, asset.risk)
        for level, points in RISK_POINTS.items():
            if risk == level.lower():
                finding = f"{asset.product} rates {name}'s risk {level}"
                signals.append(_cite(item, "D2", points, finding, f"{base}.{asset.risk}", level))
        value = read.text(machine, asset.value)
        valuable = next((tag for tag in tags if HIGH_VALUE_TAG.search(tag)), None)
        if value == "high" or valuable:
            reason = "device value High" if value == "high" else f"tag '{valuable}'"
            signals.append(
                _cite(
                    item,
                    "V1",
                    0.0,
                    f"{name} is a high-value machine ({reason})",
                    f"{base}.{asset.value}",
                    value or str(valuable),
                    asset_value=True,
                )
            )
        break  # the first machine is the one the lookup asked for
    return signals


def machine_alerts(alerts: AlertRecords, item: StepOutput, alert: AlertFacts) -> list[Signal]:
    """Other alerts of the vendor on the device; the alert under investigation itself is not counted."""
    content = alert.alert_content.lower()
    records = read.records(item.output)
    others = [
        (index, record)
        for index, record in enumerate(records)
        if not _is_this_alert(read.text(record, alerts.id), content)
    ]
    signals = _current_verdict(alerts, item, records, content)
    ranked = sorted(others, key=lambda pair: {"high": 0, "medium": 1}.get(read.text(pair[1], alerts.severity), 2))
    if signals:
        return signals
    if not ranked:
        finding = f"{alerts.product} has no other alerts on the machine"
        return [_cite(item, "D1", -0.5, finding, alerts.envelope, "[]")]
    index, top = ranked[0]
    severity = read.text(top, alerts.severity)
    title = read.raw(top, alerts.title) or read.raw(top, alerts.id)
    confirmed = read.text(top, alerts.verdicts[0]) == "truepositive"
    if severity == "high":
        points = 3.0 if confirmed else 2.0
    elif severity == "medium":
        points = 1.0
    else:
        return []
    count = sum(1 for _, record in others if read.text(record, alerts.severity) == severity)
    finding = f"{alerts.product} has {count} other {severity}-severity alert(s) on the machine, e.g. '{title}'"
    if confirmed:
        finding += " (classified TruePositive)"
    return [_cite(item, "D1", points, finding, f"{alerts.envelope}[{index}].{alerts.title}", title)]


def _current_verdict(
    alerts: AlertRecords, item: StepOutput, records: list[dict[str, object]], content: str
) -> list[Signal]:
    """The vendor's own, later verdict on this alert (its automated investigation or an analyst resolved it)."""
    for index, record in enumerate(records):
        if not _is_this_alert(read.text(record, alerts.id), content):
            continue
        for name in alerts.verdicts:
            verdict = read.raw(record, name)
            word = verdict.lower().replace(" ", "")
            locator = f"{alerts.envelope}[{index}].{name}"
            if word in VENDOR_WRONG:
                status = read.raw(record, alerts.status)
                finding = f"{alerts.product} has since classified this alert {verdict} (status {status})"
                return [_cite(item, "D5", -5.0, finding, locator, verdict, explains=Explains.WRONG_DETECTION)]
            if word in VENDOR_AUTHORISED:
                finding = f"{alerts.product} has since classified this alert {verdict}"
                return [_cite(item, "D5", -4.0, finding, locator, verdict, explains=Explains.AUTHORISED)]
    return []


def _is_this_alert(alert_id: str, content: str) -> bool:
    """Vendor alert ids are long and unique; a short id could occur in any content by chance."""
    return len(alert_id) >= 8 and alert_id in content
