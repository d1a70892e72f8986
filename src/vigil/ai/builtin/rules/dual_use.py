"""Dual-use software read against the public catalogues (RM, LB, HJ, LD, RO rules; docs/analyst.md): remote-
management tools (LOLRMM), Windows binaries with catalogued abuse (LOLBAS), DLL side-loading (HijackLibs) and
drivers known to be malicious or vulnerable (LOLDrivers).

A catalogued tool says what a process *is*; who started it, from where and how many machines at once says what
it is doing. The help desk's AnyDesk installed by the deployment agent and approved by the organization explains
the alert; the same AnyDesk started by Word or from an archive in Downloads is an intruder's foothold. Records are
read through each vendor's Sigma field mapping (`vigil.ai.builtin.mapped`), so any EDR that maps its columns is
read, and every finding cites the catalogue it came from.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from vigil.ai.builtin.document import Field, fields_of, values
from vigil.ai.builtin.mapped import MappedRecord, mapped_records
from vigil.ai.builtin.patterns import SCRIPT_PROCESSES, behaviours_in
from vigil.ai.builtin.rules.alert import DEPLOYMENT_AGENTS
from vigil.ai.builtin.rules.context_lists import field_of
from vigil.ai.builtin.rules.org_facts import EVENT_TIME_KEYS, epoch, event_times
from vigil.ai.builtin.rules.sigma import organization_facts
from vigil.ai.schemas import Evidence
from vigil.core.entities import Entities, EntityKind, normalize_key
from vigil.evidence import records as read
from vigil.evidence.facts import OrgFact, OrgFacts
from vigil.evidence.signals import ALERT_SOURCE, AlertFacts, Explains, Signal
from vigil.knowledge import hijacklibs, lolbas, loldrivers, lolrmm
from vigil.knowledge.loldrivers import DriverCategory

#: Explanations here rest on a process name or a fact's name match: like A6, they yield to a strong behaviour.
WEAK_EXPLANATIONS = frozenset({"RM2", "RO1"})

# --- who starts a process -------------------------------------------------------------------------------------
OFFICE_APPS = frozenset(
    {"winword.exe", "excel.exe", "powerpnt.exe", "onenote.exe", "msaccess.exe", "mspub.exe", "visio.exe"}
)
MAIL_CLIENTS = frozenset({"outlook.exe", "olk.exe", "hxoutlook.exe", "thunderbird.exe"})
BROWSERS = frozenset(
    {"chrome.exe", "msedge.exe", "firefox.exe", "iexplore.exe", "brave.exe", "opera.exe", "vivaldi.exe"}
)
ARCHIVERS = frozenset(
    {"7zfm.exe", "7zg.exe", "7z.exe", "winrar.exe", "rar.exe", "winzip32.exe", "winzip64.exe", "bandizip.exe"}
)
#: Script hosts that install software when a person or a dropper runs a script (not LOLBins in general).
SCRIPT_HOSTS = SCRIPT_PROCESSES & frozenset(
    {"powershell.exe", "pwsh.exe", "cmd.exe", "wscript.exe", "cscript.exe", "mshta.exe"}
)
#: Where a phishing chain leaves what it runs: downloads, opened attachments, archives unpacked into Temp.
DELIVERY_FOLDER = re.compile(
    r"\\downloads\\|\\content\.outlook\\|\\inetcache\\|\\appdata\\local\\temp\\(?:rar\$|7z[^\\]*\\|temp\d+_|[^\\]+\.zip\\)",
    re.IGNORECASE,
)
#: Folders any user can write to: a DLL a legitimate program loads from one is a side-load candidate.
USER_WRITABLE = re.compile(
    r"^[a-z]:\\(?:users|programdata|perflogs|temp|tmp|\$recycle\.bin|windows\\temp|windows\\tasks|windows\\tracing)"
    r"(?:\\|$)",
    re.IGNORECASE,
)
#: Switches of an unattended install (AnyDesk ``--silent``, NSIS ``/S``, MSI ``/qn``, ScreenConnect ``/quiet``).
SILENT_SWITCH = re.compile(
    r"(?:^|\s)(?:--?silent|/silent|/verysilent|/s|/q[nb]?|/quiet|--?quiet|--?unattended|/unattended|"
    r"--start-with-win|--install)(?=\s|$|\")",
    re.IGNORECASE,
)
HELP_DESK_ACCOUNT = re.compile(r"help\s*-?desk|service\s*-?desk|it[-_. ]?support", re.IGNORECASE)

# --- points ---------------------------------------------------------------------------------------------------
APPROVED_POINTS = -3.0
PHISHING_CHAIN_POINTS = 2.0
SILENT_INSTALL_POINTS = 2.0
#: LOLBAS categories whose abuse has little legitimate use; the rest (Execute, Copy, Compile, ...) weigh less.
STRONG_ABUSE = frozenset(
    {"Download", "AWL Bypass", "UAC Bypass", "Dump", "Credentials", "Upload", "Tamper", "Conceal", "ADS"}
)
STRONG_ABUSE_POINTS = 1.5
OTHER_ABUSE_POINTS = 0.5
#: A resemblance on one literal alone (``regsvr32 /s``) is context: installers do that every day.
WEAK_RESEMBLANCE = 1
SIDE_LOAD_POINTS = 2.0
SIDE_LOAD_PAIR_POINTS = 2.5  # the loader is the very executable HijackLibs names for this DLL
DRIVER_POINTS = {DriverCategory.MALICIOUS: 4.0, DriverCategory.VULNERABLE: 2.0}
ROLLOUT_POINTS = -3.0
SPREAD_POINTS = 1.0
ROLLOUT_MACHINES = 3
#: A deployment wave: every copy from a deployment agent within one maintenance window (a working day at most).
ROLLOUT_SECONDS = 12 * 60 * 60
MAX_FINDINGS = 3
#: Alert fields naming the process and its parent, for alert formats without a Sigma mapping.
PROCESS_KEYS = ("fileName", "processName", "imageFileName", "processFileName", "image")
PARENT_KEYS = ("parentProcessFileName", "parentProcessName", "initiatingProcessFileName", "parentImage")
UNSIGNED = frozenset({"false", "unsigned", "invalid", "notsigned", "revoked"})
SIGNATURE_KEYS = ("IsSigned", "Signed", "SignatureStatus", "SignatureState")
HASH_FIELD = re.compile(r"(SHA256|SHA1|MD5)=([0-9A-Fa-f]+)")


@dataclass(frozen=True)
class _Context:
    facts: OrgFacts
    scope: tuple[str, ...]  # the alert's hosts and accounts, which a scoped fact must name
    at: int | None  # when the alert's event happened: a fact must not have expired by then
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class _Process:
    """A process (or a written file) as the rules weigh it: what it is, who started it, where it was read."""

    image: str
    command_line: str
    parent: str
    parent_command_line: str
    account: str
    source: str
    skill_id: str | None
    locator: str
    quote: str


def dual_use_signals(
    alert: AlertFacts, document: object, evidence: Sequence[Evidence], entities: Entities
) -> list[Signal]:
    fields = fields_of(alert.alert_content)
    times = event_times(fields)
    scope = (*entities.hosts, *entities.users, *entities.emails)
    context = _Context(organization_facts(evidence), scope, times[0] if times else None, fields)
    records = list(mapped_records(alert, document, evidence))
    return [
        *_remote_tools(records, entities, context),
        *_lolbins(records),
        *_side_loads(records),
        *_drivers(records, entities, context),
        *_rollouts(records, entities),
    ]


def _name(path: str) -> str:
    return lolbas.file_name(path)


def _signal(
    process: _Process,
    rule: str,
    points: float,
    finding: str,
    explains: Explains | None = None,
    entities: tuple[str, ...] = (),
) -> Signal:
    return Signal(
        rule,
        points,
        finding,
        source=process.source,
        skill_id=process.skill_id,
        locator=process.locator,
        quote=process.quote,
        explains=explains,
        entities=entities,
    )


def _where(process: _Process) -> str:
    return "the alert" if process.source == ALERT_SOURCE else f"'{process.source}'"


# --- RM: remote-management tools ------------------------------------------------------------------------------


def _processes(records: Iterable[MappedRecord]) -> Iterator[_Process]:
    """Every process start, file write and connection in the records, as the process that acted or was made."""
    for record in records:
        if record.is_of("process_creation"):
            image, parent = record.value("Image"), record.value("ParentImage")
            field = "Image"
        elif record.is_of("file_event"):
            image, parent, field = record.value("TargetFilename"), record.value("Image"), "TargetFilename"
        else:
            continue
        if image:
            yield _Process(
                image,
                record.value("CommandLine"),
                parent,
                record.value("ParentCommandLine"),
                record.value("User"),
                record.source,
                record.skill_id,
                record.locator(field),
                image,
            )


def _alert_processes(fields: Sequence[Field]) -> Iterator[_Process]:
    """The alert's process and parent fields, for formats no Sigma mapping describes."""
    parent = next((field.value for field in values(fields, *PARENT_KEYS)), "")
    for field in values(fields, *PROCESS_KEYS):
        yield _Process(field.value, "", parent, "", "", ALERT_SOURCE, None, field.path, field.value)


def _connections(
    records: Iterable[MappedRecord], entities: Entities, fields: Sequence[Field]
) -> Iterator[tuple[_Process, str]]:
    """(the process that connected, the host it reached) from connection and DNS rows, and the alert's subject
    domains (with no process: the alert itself reached it)."""
    for record in records:
        host = record.value("DestinationHostname") or record.value("QueryName")
        if host and (record.is_of("network_connection") or record.is_of("dns_query")):
            column = "DestinationHostname" if record.value("DestinationHostname") else "QueryName"
            locator = record.locator(column)
            user = record.value("User")
            yield _Process(record.value("Image"), "", "", "", user, record.source, record.skill_id, locator, host), host
    for domain in entities.subject(EntityKind.DOMAINS)[:MAX_FINDINGS]:
        field = field_of(fields, domain)
        yield _Process("", "", "", "", "", ALERT_SOURCE, None, field.path if field else "entities", domain), domain


@dataclass(frozen=True)
class _Judged:
    rule: str
    points: float
    finding: str
    process: _Process
    fact: OrgFact | None = None


def _remote_tools(records: Sequence[MappedRecord], entities: Entities, context: _Context) -> list[Signal]:
    """Per catalogued tool, the strongest reading of how it came to run (RM1-RM4)."""
    sightings: dict[str, list[tuple[lolrmm.RmmTool, _Process, bool]]] = {}
    processes = list(_processes(records))
    if not any(process.source == ALERT_SOURCE for process in processes):
        processes.extend(_alert_processes(context.fields))
    for process in processes:
        for tool in lolrmm.by_executable(process.image)[:1]:
            sightings.setdefault(tool.name, []).append((tool, process, False))
    for process, host in _connections(records, entities, context.fields):
        for tool in lolrmm.by_domain(host)[:1]:
            sightings.setdefault(tool.name, []).append((tool, process, True))
    signals: list[Signal] = []
    for found in list(sightings.values())[:MAX_FINDINGS]:
        judged = [_judge(tool, process, by_domain, context) for tool, process, by_domain in found]
        positive = [item for item in judged if item.points > 0 and item.rule != "RM1"]
        explained = [item for item in judged if item.rule == "RM2"]
        if positive:
            best = max(positive, key=lambda item: item.points)
        elif explained:
            best = next((item for item in explained if item.process.source == ALERT_SOURCE), explained[0])
        else:
            best = next((item for item in judged if item.process.source == ALERT_SOURCE), judged[0])
        signals.append(_rmm_signal(best, about_alert=any(p.source == ALERT_SOURCE for _, p, _ in found)))
    return signals


def _judge(tool: lolrmm.RmmTool, process: _Process, by_domain: bool, context: _Context) -> _Judged:
    kind = "remote-access tool (RAT)" if tool.category.upper() == "RAT" else "remote-management tool"
    what = f"reached {process.quote}, a domain of" if by_domain else f"{_name(process.image)} is"
    cited = f"[LOLRMM] {tool.name}: {what} a {kind}"
    parent = _name(process.parent)
    folder = process.image.replace("/", "\\")
    if parent in OFFICE_APPS | MAIL_CLIENTS | BROWSERS | ARCHIVERS:
        origin = "an Office application" if parent in OFFICE_APPS else "a mail client" if parent in MAIL_CLIENTS else (
            "a browser" if parent in BROWSERS else "an archive tool"
        )  # fmt: skip
        finding = f"{cited}, brought by {origin} ({parent}): a phishing chain delivering remote access"
        return _Judged("RM3", PHISHING_CHAIN_POINTS, finding, process)
    if not by_domain and DELIVERY_FOLDER.search(folder):
        finding = f"{cited}, run from {folder.rsplit(chr(92), 1)[0]}: a download or an unpacked attachment"
        return _Judged("RM3", PHISHING_CHAIN_POINTS, finding, process)
    if parent in DEPLOYMENT_AGENTS:
        finding = f"{cited}, started by the software-deployment agent {parent}: IT rolling it out"
        return _Judged("RM2", APPROVED_POINTS, finding, process)
    names = (tool.name, *tool.executables, process.image)
    fact = context.facts.approved_tool(names, context.scope, context.at)
    if fact is None and parent:
        fact = context.facts.approved_tool((process.parent,), context.scope, context.at)
        if fact is not None:
            finding = f"{cited}, started by {parent}, the organization's approved tool ({fact.citation()}): help desk"
            return _Judged("RM2", APPROVED_POINTS, finding, process, fact)
    if fact is not None:
        reason = f" ({fact.reason})" if fact.reason else ""
        finding = f"{cited} the organization approved — {fact.citation()}{reason}"
        return _Judged("RM2", APPROVED_POINTS, finding, process, fact)
    if process.account and HELP_DESK_ACCOUNT.search(process.account):
        finding = f"{cited}, run by the help-desk account {process.account}"
        return _Judged("RM2", APPROVED_POINTS, finding, process)
    install = f"{process.command_line} {process.parent_command_line}"
    if parent in SCRIPT_HOSTS and SILENT_SWITCH.search(install):
        finding = f"{cited}, installed silently by a script ({parent}), and no organization fact approves it"
        return _Judged("RM4", SILENT_INSTALL_POINTS, finding, process)
    finding = f"{cited}; dual-use: who started it decides, and nothing here says (no organization fact approves it)"
    return _Judged("RM1", 0.0, finding, process)


def _rmm_signal(judged: _Judged, *, about_alert: bool) -> Signal:
    process = judged.process
    if judged.rule != "RM2":
        return _signal(process, judged.rule, judged.points, judged.finding, entities=(_name(process.image),))
    if about_alert:
        return _signal(process, "RM2", judged.points, judged.finding, explains=Explains.AUTHORISED)
    return _signal(process, "RM2", 0.0, f"{judged.finding} (seen in {_where(process)}, not what the alert is about)")


# --- LB: LOLBAS -----------------------------------------------------------------------------------------------


def _lolbins(records: Sequence[MappedRecord]) -> list[Signal]:
    """A catalogued binary run with a command line that resembles one of its catalogued abuses (LB1)."""
    best: dict[str, Signal] = {}
    for record in records:
        if not record.is_of("process_creation"):
            continue
        command_line = record.value("CommandLine")
        image = record.value("Image") or record.value("OriginalFileName")
        found = lolbas.abuse(image, command_line) or lolbas.abuse(record.value("OriginalFileName"), command_line)
        if found is None:
            continue
        command = found.command
        points = STRONG_ABUSE_POINTS if command.category in STRONG_ABUSE else OTHER_ABUSE_POINTS
        literal = ", ".join(found.matched) or "a remote URL"
        finding = (
            f"[LOLBAS] {command.binary}: the command line resembles the catalogued '{command.category}' abuse "
            f"'{command.command}' ({command.usecase}; {literal})"
        )
        parent = _name(record.value("ParentImage"))
        if parent in DEPLOYMENT_AGENTS:
            points, finding = 0.0, f"{finding}; started by the software-deployment agent {parent}"
        elif len(found.matched) <= WEAK_RESEMBLANCE and not (command.needs_url or command.needs_share):
            points, finding = 0.0, f"{finding}; one literal alone, context"
        elif behaviours_in(command_line):
            points, finding = 0.0, f"{finding}; the behaviour rules (H) already count this command line"
        key = f"{command.binary}:{command.category}"
        signal = Signal(
            "LB1",
            points,
            finding,
            source=record.source,
            skill_id=record.skill_id,
            locator=record.locator("CommandLine"),
            quote=command_line,
            techniques=(command.technique,) if command.technique else (),
        )
        if key not in best or points > best[key].points:
            best[key] = signal
    return _counted_once(best.values())


def _counted_once(signals: Iterable[Signal]) -> list[Signal]:
    """The strongest few; the same catalogue entry seen by several sources is one fact."""
    return sorted(signals, key=lambda signal: -signal.points)[:MAX_FINDINGS]


# --- HJ: HijackLibs -------------------------------------------------------------------------------------------


def _side_loads(records: Sequence[MappedRecord]) -> list[Signal]:
    """A catalogued DLL loaded from outside its expected folders: from a user-writable one it is evidence (HJ1),
    from anywhere else context (HJ2: vendors ship private copies)."""
    best: dict[str, Signal] = {}
    for record in records:
        if not record.is_of("image_load"):
            continue
        loaded, image = record.value("ImageLoaded"), record.value("Image")
        found = hijacklibs.side_load(loaded, image)
        if found is None:
            continue
        expected = ", ".join(found.dll.expected) or "nowhere (a phantom DLL Windows does not ship)"
        finding = f"[HIJACKLIBS] {found.dll.name} loaded from {found.folder}, expected in {expected}"
        if USER_WRITABLE.match(hijacklibs.normalized(found.folder)):
            points = SIDE_LOAD_PAIR_POINTS if found.executable else SIDE_LOAD_POINTS
            loader = f"by {_name(image)}, which HijackLibs lists for it, " if found.executable else ""
            finding += f": loaded {loader}from a user-writable folder, a side-loading candidate"
            rule = "HJ1"
        else:
            points, rule = 0.0, "HJ2"
            finding += ": outside its usual folders, but not a user-writable one (a vendor's private copy?)"
        signal = Signal(
            rule,
            points,
            finding,
            source=record.source,
            skill_id=record.skill_id,
            locator=record.locator("ImageLoaded"),
            quote=loaded,
            techniques=("T1574.002",),
        )
        if found.dll.name not in best or points > best[found.dll.name].points:
            best[found.dll.name] = signal
    return _counted_once(best.values())


# --- LD: LOLDrivers -------------------------------------------------------------------------------------------


def _hashes(record: MappedRecord) -> list[str]:
    return [value for _, value in HASH_FIELD.findall(record.value("Hashes"))]


def _drivers(records: Sequence[MappedRecord], entities: Entities, context: _Context) -> list[Signal]:
    """A hash of a known malicious (LD1) or vulnerable (LD2) driver, in the records or among the alert's hashes."""
    found: dict[str, Signal] = {}
    for record in records:
        for value in _hashes(record):
            driver = loldrivers.by_hash(value)
            if driver is not None and driver.id not in found:
                found[driver.id] = _driver_signal(
                    driver, value, record.source, record.skill_id, record.locator("Hashes")
                )
    kinds = (EntityKind.SHA256S, EntityKind.SHA1S, EntityKind.MD5S)
    for value in (value for kind in kinds for value in entities.of(kind)):
        driver = loldrivers.by_hash(value)
        if driver is not None and driver.id not in found:
            field = field_of(context.fields, value)
            found[driver.id] = _driver_signal(driver, value, ALERT_SOURCE, None, field.path if field else "entities")
    return _counted_once(found.values())


def _driver_signal(driver: loldrivers.Driver, value: str, source: str, skill_id: str | None, locator: str) -> Signal:
    cves = f" ({', '.join(driver.cves)})" if driver.cves else ""
    if driver.category is DriverCategory.MALICIOUS:
        rule, meaning = "LD1", "hash matches a known malicious driver"
    else:
        rule, meaning = (
            "LD2",
            f"hash matches a known vulnerable driver{cves}, the kind attackers bring to kill defences",
        )
    finding = f"[LOLDRIVERS] {driver.name}: the {meaning}"
    if driver.description:
        finding += f" — {driver.description}"
    return Signal(
        rule,
        DRIVER_POINTS[driver.category],
        finding,
        source=source,
        skill_id=skill_id,
        locator=locator,
        quote=value,
        entities=(value,),
        techniques=("T1068",) if driver.category is DriverCategory.VULNERABLE else ("T1014",),
    )


# --- RO: rollout or spread ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Copy:
    """One machine's copy of a file in a step's rows: which machine, who wrote or started it, and when."""

    record: MappedRecord
    machine: str
    parent: str
    moment: int | None
    unsigned: bool


def _file_of(record: MappedRecord) -> tuple[str, str] | None:
    """(the file a row is about, the process that started or wrote it)."""
    if record.is_of("process_creation"):
        return record.value("Image"), record.value("ParentImage")
    if record.is_of("file_event"):
        return record.value("TargetFilename"), record.value("Image")
    if record.is_of("image_load") or record.is_of("driver_load"):
        return record.value("ImageLoaded"), record.value("Image")
    return None


def _row_time(record: MappedRecord) -> int | None:
    for key, value in record.row.items():
        if normalize_key(str(key)) in EVENT_TIME_KEYS and isinstance(value, str | int):
            moment = epoch(str(value))
            if moment is not None:
                return moment
    return None


def _dual_use(path: str, hashes: Sequence[str], subject: set[str]) -> bool:
    """Files these rules are about: a catalogued remote tool or driver, or the alert's own subject file."""
    return bool(lolrmm.by_executable(path)) or any(
        value.lower() in subject or loldrivers.by_hash(value) is not None for value in hashes
    )


def _deploying_ancestor(record: MappedRecord) -> str | None:
    """A deployment agent among the row's ancestors (an EDR's initiating-process parent column: msiexec or the
    vendor's installer started by IntuneManagementExtension or CcmExec), or None."""
    for key, value in record.row.items():
        if "parent" in normalize_key(str(key)) and isinstance(value, str) and _name(value) in DEPLOYMENT_AGENTS:
            return _name(value)
    return None


def _rollouts(records: Sequence[MappedRecord], entities: Entities) -> list[Signal]:
    """The same dual-use file on several machines of one step's rows: a rollout when every copy came from a
    deployment agent within `ROLLOUT_SECONDS` on `ROLLOUT_MACHINES` or more machines (RO1, explains: authorised);
    spread when some copy came from another parent (RO2)."""
    subject = {value.lower() for kind in (EntityKind.SHA256S, EntityKind.SHA1S, EntityKind.MD5S)
               for value in entities.subject(kind)}  # fmt: skip
    groups: dict[tuple[str, str], list[_Copy]] = {}
    for record in records:
        if record.rows is None:
            continue
        found = _file_of(record)
        if found is None or not found[0]:
            continue
        path, parent = found
        hashes = _hashes(record)
        if not _dual_use(path, hashes, subject):
            continue
        machine = read.text(record.row, *record.rows.machine)
        if not machine:
            continue
        signed = read.text(record.row, *SIGNATURE_KEYS)
        copy = _Copy(
            record, machine, _deploying_ancestor(record) or _name(parent), _row_time(record), signed in UNSIGNED
        )
        key = (record.source, hashes[0].lower() if hashes else _name(path))
        groups.setdefault(key, []).append(copy)
    signals: list[Signal] = []
    for (source, _), copies in groups.items():
        machines = sorted({copy.machine for copy in copies})
        if len(machines) < 2:
            continue
        signals.append(_rollout_or_spread(source, copies, machines))
    return _counted_once(signals)


def _rollout_or_spread(source: str, copies: list[_Copy], machines: list[str]) -> Signal:
    first = copies[0].record
    path = _file_of(first)
    name = _name(path[0]) if path else "the file"
    parents = sorted({copy.parent for copy in copies})
    moments = [copy.moment for copy in copies]
    known = [moment for moment in moments if moment is not None]
    span = max(known) - min(known) if len(known) == len(moments) and known else None
    listed = ", ".join(machines[:5]) + (" …" if len(machines) > 5 else "")
    deployed = all(parent in DEPLOYMENT_AGENTS for parent in parents)

    def cited(rule: str, points: float, finding: str, explains: Explains | None = None) -> Signal:
        locator, quote = first.locator("Image"), ", ".join(parents)
        return Signal(rule, points, finding, source, first.skill_id, locator, quote, explains, tuple(machines[:5]))

    if (
        deployed
        and len(machines) >= ROLLOUT_MACHINES
        and span is not None
        and span <= ROLLOUT_SECONDS
        and not any(copy.unsigned for copy in copies)
    ):
        finding = (
            f"{name} reached {len(machines)} machines ({listed}) within {max(1, span // 60)} minute(s), every copy "
            f"from the deployment agent {', '.join(parents)}: a rollout, not spread"
        )
        return cited("RO1", ROLLOUT_POINTS, finding, Explains.AUTHORISED)
    strangers = [parent or "an unknown parent" for parent in parents if parent not in DEPLOYMENT_AGENTS]
    if not strangers:
        why = "too few machines or too long a span" if span is None or span > ROLLOUT_SECONDS else "unsigned copies"
        finding = f"{name} on {len(machines)} machines ({listed}) from {', '.join(parents)}, not a rollout ({why})"
        return cited("RO2", 0.0, finding)
    finding = (
        f"{name} on {len(machines)} machines ({listed}), started or written by {', '.join(strangers)}, not a "
        "deployment agent: the dual-use file is spreading"
    )
    return cited("RO2", SPREAD_POINTS, finding)
