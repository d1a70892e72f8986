"""What Defender's skills tell the analyst: lookups on machines, files and addresses, how its hunting rows,
machine records and alerts map onto the kinds the analyst reasons about, and containment in Defender."""

from __future__ import annotations

from vigil.core.entities import Entities, EntityKind
from vigil.evidence.knowledge import (
    AlertRecords,
    AnalystKnowledge,
    AssetRecords,
    Category,
    EventRows,
    Lookup,
    LookupPlan,
    first,
    guarded,
    when,
)
from vigil.evidence.sigma import HashList, JoinedPath, SigmaAlerts, SigmaCategory, SigmaMapping, Source

LIST_MACHINES = "microsoft_defender.list_machines"
FETCH_ALERTS = "microsoft_defender.fetch_alerts"
HUNTING_QUERY = "microsoft_defender.run_advanced_hunting_query"
_HASH_COLUMNS = ((EntityKind.SHA256S, "SHA256"), (EntityKind.SHA1S, "SHA1"), (EntityKind.MD5S, "MD5"))


def _machine_inputs(entities: Entities) -> dict[str, str] | None:
    """Identify the machine by the most precise identifier the alert has: device id, then host, then IP."""
    if entities.device_ids:
        return {"machine_id": first(EntityKind.DEVICE_IDS)}
    if entities.hosts:
        return {"hostname": first(EntityKind.HOSTS)}
    if entities.ips:
        return {"ip": first(EntityKind.IPS)}
    return None


def _hash_hunt_inputs(entities: Entities) -> dict[str, str] | None:
    """KQL over the strongest hash present; hashes are validated hex, so interpolating them is safe."""
    for kind, column in _HASH_COLUMNS:
        if entities.of(kind):
            body = f'DeviceFileEvents | where {column} == "VALUE" | take 50'
            return {"query": guarded(kind, body)}
    return None


def _connections_to(kind: EntityKind, condition: str) -> dict[str, str]:
    return {"query": guarded(kind, f"DeviceNetworkEvents | where {condition} | take 50")}


def _machine_activity_inputs(entities: Entities) -> dict[str, str] | None:
    """What ran on the machine and where it connected: processes, parents, command lines, remote addresses."""
    tables = "union DeviceProcessEvents, DeviceNetworkEvents, DeviceFileEvents"
    if entities.hosts:
        return {"query": guarded(EntityKind.HOSTS, f'{tables} | where DeviceName startswith "VALUE" | take 200')}
    if entities.device_ids:
        return {"query": guarded(EntityKind.DEVICE_IDS, f'{tables} | where DeviceId == "VALUE" | take 200')}
    return None


LOOKUPS = (
    LookupPlan(Lookup.MACHINE_DETAILS, "Defender: machine details", LIST_MACHINES, _machine_inputs),
    LookupPlan(
        Lookup.MACHINE_ALERTS,
        "Defender: other alerts on the machine",
        FETCH_ALERTS,
        when(EntityKind.DEVICE_IDS, {"machine_id": first(EntityKind.DEVICE_IDS), "top": "50"}),
    ),
    LookupPlan(Lookup.HASH_PREVALENCE, "Defender: machines with the file hash", HUNTING_QUERY, _hash_hunt_inputs),
    LookupPlan(
        Lookup.IP_ON_ENDPOINTS,
        "Defender: endpoint connections with the IP",
        HUNTING_QUERY,
        when(EntityKind.IPS, _connections_to(EntityKind.IPS, 'RemoteIP == "VALUE"')),
    ),
    LookupPlan(
        Lookup.DOMAIN_ON_ENDPOINTS,
        "Defender: endpoint connections to the domain",
        HUNTING_QUERY,
        when(EntityKind.DOMAINS, _connections_to(EntityKind.DOMAINS, 'RemoteUrl has "VALUE"')),
    ),
    LookupPlan(Lookup.MACHINE_ACTIVITY, "Defender: activity on the machine", HUNTING_QUERY, _machine_activity_inputs),
)

_HASHES = HashList((("SHA256", "SHA256"), ("SHA1", "SHA1"), ("MD5", "MD5")))
_ACTOR = JoinedPath("InitiatingProcessFolderPath", "InitiatingProcessFileName")


def _with_actor(fields: dict[str, Source]) -> dict[str, Source]:
    """A non-process event's fields plus the process that acted (Sigma's Image and User)."""
    return {"Image": _ACTOR, "User": "InitiatingProcessAccountName", **fields}


def _actions(*names: str) -> tuple[str, frozenset[str]]:
    return ("ActionType", frozenset(names))


_PROCESS_FIELDS: dict[str, Source] = {
    "Image": JoinedPath("FolderPath", "FileName"),
    "CommandLine": "ProcessCommandLine",
    "OriginalFileName": "ProcessVersionInfoOriginalFileName",
    "Product": "ProcessVersionInfoProductName",
    "Company": "ProcessVersionInfoCompanyName",
    "Description": "ProcessVersionInfoFileDescription",
    "ParentImage": _ACTOR,
    "ParentCommandLine": "InitiatingProcessCommandLine",
    "User": "AccountName",
    "IntegrityLevel": "ProcessIntegrityLevel",
    "Hashes": _HASHES,
}
#: Advanced hunting rows by Sigma log source (ActionType names the table's event), as pySigma's Kusto backend
#: maps them; a row without ActionType that has a command line is a process event.
HUNTING_SIGMA = SigmaMapping(
    (
        SigmaCategory("windows", ("process_creation",), _PROCESS_FIELDS, _actions("ProcessCreated")),
        SigmaCategory(
            "windows",
            ("image_load",),
            _with_actor({"ImageLoaded": JoinedPath("FolderPath", "FileName"), "Hashes": _HASHES}),
            _actions("ImageLoaded"),
        ),
        SigmaCategory(
            "windows",
            ("network_connection",),
            _with_actor(
                {
                    "DestinationIp": "RemoteIP",
                    "DestinationPort": "RemotePort",
                    "DestinationHostname": "RemoteUrl",
                    "SourceIp": "LocalIP",
                    "SourcePort": "LocalPort",
                }
            ),
            _actions(
                "ConnectionSuccess",
                "ConnectionFailed",
                "ConnectionAttempt",
                "ConnectionRequest",
                "ConnectionFound",
                "InboundConnectionAccepted",
            ),
        ),
        *(
            SigmaCategory(
                "windows",
                (category, "registry_event"),
                _with_actor(
                    {"TargetObject": JoinedPath("RegistryKey", "RegistryValueName"), "Details": "RegistryValueData"}
                ),
                _actions(*actions),
            )
            for category, actions in (
                ("registry_set", ("RegistryValueSet",)),
                ("registry_add", ("RegistryKeyCreated",)),
                ("registry_delete", ("RegistryKeyDeleted", "RegistryValueDeleted")),
            )
        ),
        SigmaCategory(
            "windows",
            ("file_event",),
            _with_actor({"TargetFilename": JoinedPath("FolderPath", "FileName"), "Hashes": _HASHES}),
            _actions("FileCreated", "FileModified", "FileRenamed"),
        ),
        SigmaCategory(
            "windows",
            ("driver_load",),
            _with_actor({"ImageLoaded": JoinedPath("FolderPath", "FileName"), "Hashes": _HASHES}),
            _actions("DriverLoad"),
        ),
        SigmaCategory("windows", ("process_creation",), _PROCESS_FIELDS, ("ProcessCommandLine", frozenset())),
    )
)
#: The process evidence of Defender's alerts (``evidence[]`` entries of entityType Process).
ALERT_SIGMA = SigmaAlerts(
    providers=("microsoft_defender",),
    records=("evidence",),
    mapping=SigmaMapping(
        (
            SigmaCategory(
                "windows",
                ("process_creation",),
                {
                    "Image": JoinedPath("filePath", "fileName"),
                    "CommandLine": "processCommandLine",
                    "ParentImage": JoinedPath("parentProcessFilePath", "parentProcessFileName"),
                    "User": "accountName",
                    "Hashes": HashList((("SHA256", "sha256"), ("SHA1", "sha1"))),
                },
                ("entityType", frozenset({"Process"})),
            ),
        )
    ),
)

#: Advanced hunting's Device*Events columns (reference A).
HUNTING_ROWS = EventRows(
    text_columns=(
        "ProcessCommandLine",
        "InitiatingProcessCommandLine",
        "InitiatingProcessParentFileName",
        "FileName",
        "FolderPath",
        "InitiatingProcessFileName",
        "RemoteUrl",
        "Url",
        "CommandLine",
    ),
    process="InitiatingProcessFileName",
    device="DeviceName",
    account="AccountName",
    remote_ip="RemoteIP",
    remote_url="RemoteUrl",
    sent_bytes=("SentBytes", "BytesSent", "UploadedBytes", "TotalBytesSent"),
    machine=("DeviceName", "DeviceId", "ComputerName", "MachineId"),
    envelopes=("results", "Results", "value", "rows"),
    sigma=HUNTING_SIGMA,
)
MACHINES = AssetRecords(
    product="Defender",
    name=("computerDnsName", "id"),
    tags="machineTags",
    risk="riskScore",
    value="deviceValue",
    envelope="machines",
)
ALERTS = AlertRecords(
    product="Defender",
    id="id",
    severity="severity",
    title="title",
    verdicts=("classification", "determination"),
    status="status",
    envelope="alerts",
)

KNOWLEDGE = AnalystKnowledge(
    lookups=LOOKUPS,
    readings={HUNTING_QUERY: HUNTING_ROWS, LIST_MACHINES: MACHINES, FETCH_ALERTS: ALERTS},
    sigma_alerts=(ALERT_SIGMA,),
    containment={
        Category.ENDPOINT_MALWARE: (
            "Isolate the machine in Defender until it is cleaned",
            "Collect an investigation package from the machine",
            "Add the file hash to Defender's block indicators and hunt for it across the fleet",
            "Reset the credentials of users signed in to the machine",
        ),
    },
)
