"""Rules over the alert itself: the vendor's own fields, sign-in factors, account changes, injection (A, S, U).

Only fields the *vendor* sets decide here (severity, category, MITRE technique, classification, tags, sign-in
context); attacker-writable text (command lines, subjects, comments) is read for behaviours and injection
attempts, which are evidence, never switches.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from vigil.ai.builtin.citations import citation
from vigil.ai.builtin.document import Field, fields_of, name_value_pairs, parsed, values
from vigil.ai.builtin.injection import find_injection, injection_signal
from vigil.ai.builtin.patterns import behaviours_in
from vigil.ai.builtin.severity_scales import vendor_rating
from vigil.ai.schemas import Citation, Severity
from vigil.evidence import records as read
from vigil.evidence.signals import AlertFacts, Explains, Signal

#: Vendor category / finding-type words -> (points, what it means). First match per field wins.
CATEGORY_WEIGHTS: tuple[tuple[str, float, str], ...] = (
    ("ransomware", 3.0, "ransomware"),
    ("credentialaccess", 2.0, "credential access"),
    ("credentialexfiltration", 2.5, "credential exfiltration"),
    ("credentialtheft", 2.0, "credential theft"),
    ("exfiltration", 2.0, "exfiltration"),
    ("commandandcontrol", 2.0, "command and control"),
    ("backdoor", 2.0, "backdoor"),
    ("trojan", 2.0, "trojan"),
    ("malware", 2.0, "malware"),
    ("cryptocurrency", 1.5, "cryptomining"),
    ("lateralmovement", 1.5, "lateral movement"),
    ("impact", 1.5, "impact"),
    ("unauthorizedaccess", 1.5, "unauthorised access"),
    ("privilegeescalation", 1.5, "privilege escalation"),
    ("defenseevasion", 1.0, "defence evasion"),
    ("persistence", 1.0, "persistence"),
    ("initialaccess", 1.0, "initial access"),
    ("execution", 1.0, "execution"),
    ("phish", 1.5, "phishing"),
    ("stealth", 1.0, "stealth"),
    ("policy", 0.5, "policy violation"),
    ("discovery", 0.5, "discovery"),
    ("recon", 0.5, "reconnaissance"),
    ("suspiciousactivity", 0.5, "suspicious activity"),
)
#: MITRE ATT&CK technique prefixes -> (points, name). Distinct matches add up, capped at `MITRE_CAP`.
MITRE_WEIGHTS: tuple[tuple[str, float, str], ...] = (
    ("T1486", 3.0, "data encrypted for impact"),
    ("T1490", 2.0, "inhibit system recovery"),
    ("T1003", 2.0, "OS credential dumping"),
    ("T1552", 1.5, "unsecured credentials"),
    ("T1555", 1.5, "credentials from password stores"),
    ("T1558", 1.5, "Kerberos ticket theft"),
    ("T1567", 2.0, "exfiltration over web service"),
    ("T1048", 2.0, "exfiltration over alternative protocol"),
    ("T1041", 2.0, "exfiltration over C2 channel"),
    ("T1537", 2.0, "transfer data to cloud account"),
    ("T1621", 1.5, "MFA request generation"),
    ("T1110", 1.0, "brute force"),
    ("T1566", 1.0, "phishing"),
    ("T1059", 1.0, "command and scripting interpreter"),
    ("T1105", 1.0, "ingress tool transfer"),
    ("T1218", 1.0, "system binary proxy execution"),
    ("T1027", 0.5, "obfuscated files"),
    ("T1078", 0.5, "valid accounts"),
    ("T1098", 1.0, "account manipulation"),
)
MITRE_CAP = 3.0
TECHNIQUE_ID = re.compile(r"T\d{4}(?:\.\d{3})?", re.IGNORECASE)
#: The vendor's own decision about its alert.
VENDOR_WRONG = frozenset({"falsepositive", "notmalicious", "securitytesting", "benign"})
VENDOR_AUTHORISED = frozenset(
    {
        "informationalexpectedactivity",
        "benignpositive",
        "lineofbusinessapplication",
        "confirmedactivity",
        "confirmeduseractivity",
        "expectedactivity",
    }
)
VENDOR_MALICIOUS = frozenset(
    {"truepositive", "malware", "apt", "malicioususeractivity", "compromisedaccount", "phishing", "multistagedattack"}
)
#: Keys where administrators or vendors label assets; words there are trusted (attackers cannot set them).
TAG_KEYS = frozenset({"machinetags", "tags", "labels", "devicetags", "resourcetags", "assettags", "usertags"})
TAG_PARENTS = frozenset({"tags", "resourcetags", "labels", "usertags", "instancetags"})
TESTING_TAG = re.compile(
    r"scanner|pen-?test|penetration|red[ -]?team|vulnerability|vuln[ -]?scan|security[ -]?test|attack[ -]?simulation"
    r"|phish(?:ing)?[ -]?simulation|breach and attack|\bbas\b|authori[sz]ed[ -]?(?:scan|test)",
    re.IGNORECASE,
)
HIGH_VALUE_TAG = re.compile(
    r"domain[ -]?controller|\bdc\b|production|\bprod\b|crown[ -]?jewel|executive|\bvip\b|finance|payroll|critical",
    re.IGNORECASE,
)
SIMULATION_KEYS = ("isSimulation", "simulation", "phishSimulation", "attackSimulation", "sample", "isTest")
EICAR = re.compile(r"eicar", re.IGNORECASE)
#: Public services that exist to test security controls (DLP, anti-malware, IDS, safe browsing): data sent to or
#: fetched from them is a test of the control, not an attack on it.
CONTROL_TEST_SERVICES = re.compile(
    r"(?:^|[/.@\s])(?:dlptest\.com|(?:secure\.)?eicar\.org|wicar\.org|testmynids\.org|amtso\.org"
    r"|testsafebrowsing\.appspot\.com)(?:[/:\s]|$)",
    re.IGNORECASE,
)
DESTINATION_KEYS = ("destination", "destinationUrl", "url", "remoteUrl", "targetUrl", "uploadUrl", "domain")
#: Sign-in context. A hosting or cloud network is not suspicious by itself: which provider and service an
#: address belongs to is read from the published lists (`rules/context_lists.py`); only anonymisers named as such
#: by the network's owner count here.
ANONYMISER_NETWORK = re.compile(
    r"\btor\b|mullvad|nordvpn|expressvpn|proton ?vpn|private internet access|surfshark|ipvanish|\bvpn\b|proxy",
    re.IGNORECASE,
)
ASN_KEYS = ("asOrg", "asnOrg", "isp", "asn", "autonomousSystemOrganization", "organization", "asName", "networkOwner")
ANON_FLAG_KEYS = ("isProxy", "isTor", "isAnonymous", "anonymizer", "isAnonymousProxy", "isVpn")
LEGACY_PROTOCOLS = frozenset(
    {
        "imap",
        "imap4",
        "pop",
        "pop3",
        "smtp",
        "authenticated smtp",
        "exchange activesync",
        "other clients",
        "exchange web services",
        "mapi over http",
        "autodiscover",
        "legacy authentication",
        "basic auth",
    }
)
RISK_KEYS = ("riskLevel", "riskLevelAggregated", "riskLevelDuringSignIn", "riskState", "risk")
#: Entra / Okta risk detections and behaviours -> (points, meaning).
SIGNIN_RISKS: tuple[tuple[str, float, str], ...] = (
    ("impossibletravel", 2.0, "impossible travel"),
    ("unlikelytravel", 2.0, "impossible travel"),
    ("velocity=positive", 2.0, "impossible travel (velocity)"),
    ("anonymizedipaddress", 2.0, "sign-in from an anonymising network"),
    ("maliciousipaddress", 2.0, "sign-in from a known malicious address"),
    ("leakedcredentials", 2.5, "the user's credentials were leaked"),
    ("passwordspray", 2.0, "password spray"),
    ("mfafraud", 3.0, "the user reported MFA fraud"),
    ("tokenissueranomaly", 2.0, "token issuer anomaly"),
    ("anomaloustoken", 2.0, "anomalous token"),
    ("suspiciousinboxforwarding", 2.0, "suspicious inbox forwarding"),
    ("newgeolocation=positive", 1.0, "new location for the user"),
    ("newcountry", 1.0, "new country for the user"),
    ("newdevice=positive", 1.0, "new device for the user"),
    ("unfamiliarfeatures", 1.0, "unfamiliar sign-in properties"),
    ("newip=positive", 0.5, "new IP address for the user"),
    ("toripcaller", 2.0, "calls from a Tor exit node"),
    ("maliciousipcaller", 2.0, "calls from a known malicious address"),
)
#: Okta writes every behaviour with its outcome ("New Country=NEGATIVE"): a negated one is not a risk.
NOT_NEGATED = r"(?!=negative|=false)"
NEW_FLAG_KEYS = {
    "newdevice": (1.0, "new device for the user"),
    "isnewdevice": (1.0, "new device for the user"),
    "newcountry": (1.0, "new country for the user"),
    "isnewcountry": (1.0, "new country for the user"),
    "newlocation": (1.0, "new location for the user"),
    "impossibletravel": (2.0, "impossible travel"),
}
PUSH_DENIALS = re.compile(
    r"deny_push|rejected okta push|push[^\n]{0,40}(?:denied|rejected)|declined the authentication"
)
PUSH_COUNT_KEY = re.compile(r"push|mfarequest|mfaprompt|denied|rejected|declined")
PUSH_FLOOD = 3
#: Account and audit changes the alert reports (CloudTrail event names, Okta event types, Entra operations).
CHANGE_RULES: tuple[tuple[re.Pattern[str], float, str], ...] = (
    (
        re.compile(
            r"createaccesskey|createloginprofile|updateloginprofile|api[ ._]?token[ ._]?(?:create|creat)|app password"
            r"|createtoken|token\.create|access key created|api key created|application\.credential",
            re.IGNORECASE,
        ),
        1.5,
        "new credentials (key, token or password) were created",
    ),
    (
        re.compile(
            r"administratoraccess|attach(?:user|role|group)policy|putuserpolicy|global administrator|privileged role"
            r"|add member to role|role\.assign|grant\.admin|superadmin|super administrator|owner role|\badmin role",
            re.IGNORECASE,
        ),
        2.0,
        "administrative privileges were granted",
    ),
    (
        re.compile(
            r"factor\.deactivate|factor\.reset|mfa[^\n]{0,20}(?:disabled|removed|deactivated|reset)|stoplogging|deletetrail"
            r"|deletedetector|disablesecurityhub|deleteflowlogs|putbucketpublicaccessblock|deletebucketpolicy"
            r"|set-mailbox[^\n]{0,40}forwardingsmtpaddress|new-inboxrule|forwardto|policy\.lifecycle\.deactivate",
            re.IGNORECASE,
        ),
        2.0,
        "a security control was turned down or removed",
    ),
    (
        re.compile(
            r"mail\.readwrite|mail\.read\b|mail\.send|files\.readwrite\.all|full_access_as_user|directory\.readwrite"
            r"|offline_access[^\n]{0,80}mail|consent to application",
            re.IGNORECASE,
        ),
        1.5,
        "an application was granted broad access to mail or files",
    ),
)
CHANGE_KEYS = (
    "eventName",
    "eventType",
    "operationName",
    "activityDisplayName",
    "operation",
    "action",
    "scopes",
    "scope",
)
#: Fields whose text a process or script put there: behaviours are looked for in these.
COMMAND_KEYS = (
    "processCommandLine",
    "commandLine",
    "cmdLine",
    "command",
    "parentProcessCommandLine",
    "initiatingProcessCommandLine",
    "script",
    "fileName",
    "filePath",
    "folderPath",
    "url",
    "remoteUrl",
)
ALERT_BEHAVIOUR_WEIGHT = 0.75


def alert_rules(alert: AlertFacts) -> list[Signal]:
    """Everything the alert itself says, before any skill ran."""
    fields = fields_of(alert.alert_content)
    signals: list[Signal] = []
    for rule in (
        _severity,
        _category,
        _mitre,
        _vendor_decision,
        _testing_markers,
        _asset_tags,
        _behaviours,
        _signin_risks,
        _anonymising_network,
        _legacy_protocol,
        _push_flood,
        _changes,
        _injection,
        _deployment_tooling,
        _bulk_data,
        _departing_user,
        _own_data,
        _large_transfer,
        _familiar_session,
    ):
        signals.extend(rule(alert, fields))
    return signals


def _cite(
    rule: str,
    points: float,
    finding: str,
    field: Field,
    *,
    explains: Explains | None = None,
    asset_value: bool = False,
) -> Signal:
    return Signal(
        rule=rule,
        points=points,
        finding=finding,
        locator=field.path,
        quote=field.value,
        explains=explains,
        asset_value=asset_value,
    )


#: Points for the vendor's own rating; the rating is also the floor of a true positive's severity (decision.py).
RATING_POINTS = {Severity.CRITICAL: 1.5, Severity.HIGH: 1.0, Severity.MEDIUM: 0.5}
RATING_RULE = "A1"


def _severity(alert: AlertFacts, fields: Sequence[Field]) -> list[Signal]:
    rating = vendor_rating(alert.alert_provider, fields)
    if rating is None:
        return []
    points = RATING_POINTS.get(rating.severity, 0.0)
    finding = f"The source rated the alert {rating.field.value} ({rating.severity.value} on its scale)"
    return [replace(_cite(RATING_RULE, points, finding, rating.field), vendor_severity=rating.severity.value)]


def _category(alert: AlertFacts, fields: Sequence[Field]) -> list[Signal]:
    """The vendor's category or finding type: a ransomware detection is not the same claim as discovery."""
    keys = ["category", "categories", "threatFamilyName", "detectionType", "threatType", "threatTypes"]
    if alert.alert_provider.lower() == "aws":
        keys.append("type")  # GuardDuty's finding type, e.g. UnauthorizedAccess:IAMUser/...
    best: tuple[float, str, Field] | None = None
    for field in values(fields, *keys):
        squashed = re.sub(r"[^a-z]", "", field.value.lower())
        for word, points, meaning in CATEGORY_WEIGHTS:
            if word in squashed:
                if best is None or points > best[0]:
                    best = (points, meaning, field)
                break
    if best is None:
        return []
    points, meaning, field = best
    return [_cite("A2", points, f"The vendor classifies the activity as {meaning} ({field.value})", field)]


def _mitre(alert: AlertFacts, fields: Sequence[Field]) -> list[Signal]:
    techniques = values(
        fields, "mitreTechniques", "techniques", "mitreTechnique", "attackTechniques", "technique", "techniqueId"
    ) + [  # SentinelOne indicators: tactics[].techniques[].name
        field for field in fields if field.key == "name" and field.parent == "techniques"
    ]
    seen: dict[str, tuple[float, Field]] = {}
    for field in techniques:
        for prefix, points, name in MITRE_WEIGHTS:
            if field.value.upper().startswith(prefix) and name not in seen:
                seen[name] = (points, field)
    if not seen:
        return []
    total = min(MITRE_CAP, sum(points for points, _ in seen.values()))
    names = ", ".join(f"{field.value} {name}" for name, (_, field) in seen.items())
    field = next(iter(seen.values()))[1]
    named = tuple(dict.fromkeys(f.value.strip().upper() for f in techniques if TECHNIQUE_ID.fullmatch(f.value.strip())))
    signal = _cite("A3", total, f"MITRE ATT&CK techniques of the alert: {names}", field)
    return [replace(signal, techniques=named)]


#: Objects whose ``classification`` is the threat's category (SentinelOne ``threatInfo``: Malware, PUA), not a verdict.
THREAT_CATEGORY_PARENTS = frozenset({"threatinfo"})


def _vendor_decision(alert: AlertFacts, fields: Sequence[Field]) -> list[Signal]:
    """The vendor already classified its alert (an EDR's classification/determination, a 'benign' verdict)."""
    signals: list[Signal] = []
    for field in values(fields, "classification", "determination", "verdict", "vendorVerdict", "analystVerdict"):
        if field.key == "classification" and field.parent in THREAT_CATEGORY_PARENTS:
            continue
        word = re.sub(r"[^a-z]", "", field.value.lower())
        if word in VENDOR_WRONG:
            signals.append(
                _cite(
                    "A4",
                    -5.0,
                    f"The vendor classified the alert {field.value}",
                    field,
                    explains=Explains.WRONG_DETECTION,
                )
            )
        elif word in VENDOR_AUTHORISED:
            signals.append(
                _cite("A4", -4.0, f"The vendor classified the alert {field.value}", field, explains=Explains.AUTHORISED)
            )
        elif word in VENDOR_MALICIOUS:
            signals.append(_cite("A4", 2.0, f"The vendor classified the alert {field.value}", field))
    return signals[:2]


def _testing_markers(alert: AlertFacts, fields: Sequence[Field]) -> list[Signal]:
    """Admin-set tags (authorised scanner, red team), simulation flags, sample findings, the EICAR test file."""
    signals = [
        _cite(
            "A7",
            -5.0,
            f"The asset is labelled as security testing ({field.value})",
            field,
            explains=Explains.WRONG_DETECTION,
        )
        for field in _tags(fields)
        if TESTING_TAG.search(field.value)
    ][:1]
    for field in values(fields, *SIMULATION_KEYS):
        if field.value.strip().lower() == "true":
            signals.append(
                _cite(
                    "A5",
                    -5.0,
                    f"The source marks this as a simulation or sample ({field.path})",
                    field,
                    explains=Explains.WRONG_DETECTION,
                )
            )
            break
    for field in values(fields, *DESTINATION_KEYS):
        if CONTROL_TEST_SERVICES.search(field.value):
            finding = f"The activity involves a public security-control test service ({field.value})"
            signals.append(_cite("A8", -4.0, finding, field, explains=Explains.WRONG_DETECTION))
            break
    for field in values(fields, "threatFamilyName", "threatName", "title", "malwareName"):
        if EICAR.search(field.value):
            signals.append(
                _cite(
                    "A5",
                    -5.0,
                    "The detection is the EICAR anti-malware test file",
                    field,
                    explains=Explains.WRONG_DETECTION,
                )
            )
            break
    return signals


def _tags(fields: Sequence[Field]) -> Iterable[Field]:
    return (
        field
        for field in fields
        if field.key in TAG_KEYS or (field.key in {"value", "key"} and field.parent in TAG_PARENTS)
    )


def _asset_tags(alert: AlertFacts, fields: Sequence[Field]) -> list[Signal]:
    for field in _tags(fields):
        if HIGH_VALUE_TAG.search(field.value):
            return [_cite("V1", 0.0, f"High-value asset ({field.value})", field, asset_value=True)]
    for field in values(fields, "deviceValue", "assetCriticality", "criticality"):
        if field.value.strip().lower() in {"high", "critical"}:
            return [_cite("V1", 0.0, f"High-value asset ({field.path} {field.value})", field, asset_value=True)]
    return []


def _behaviours(alert: AlertFacts, fields: Sequence[Field]) -> list[Signal]:
    """Process, file and URL fields of the alert's own evidence, read for what they show."""
    signals: list[Signal] = []
    seen: set[str] = set()
    for field in values(fields, *COMMAND_KEYS):
        for behaviour in behaviours_in(field.value):
            if behaviour.rule not in seen:
                seen.add(behaviour.rule)
                points = round(behaviour.points * ALERT_BEHAVIOUR_WEIGHT, 2)
                signals.append(_cite(behaviour.rule, points, f"The alert's evidence shows {behaviour.name}", field))
    return signals


def _signin_risks(alert: AlertFacts, fields: Sequence[Field]) -> list[Signal]:
    signals: list[Signal] = []
    meanings: set[str] = set()
    for field in fields:
        squashed = re.sub(r"[^a-z=]", "", field.value.lower())
        for word, points, meaning in SIGNIN_RISKS:
            if meaning not in meanings and re.search(re.escape(word) + NOT_NEGATED, squashed):
                meanings.add(meaning)
                signals.append(_cite("S1", points, f"Sign-in risk: {meaning}", field))
        flag = NEW_FLAG_KEYS.get(field.key)
        if flag is not None and field.value.strip().lower() == "true" and flag[1] not in meanings:
            meanings.add(flag[1])
            signals.append(_cite("S1", flag[0], f"Sign-in risk: {flag[1]}", field))
    for field in values(fields, *RISK_KEYS):
        level = re.search(r"high|medium", field.value.lower())
        if level and "risk level" not in meanings:
            meanings.add("risk level")
            points = 2.0 if level.group(0) == "high" else 1.0
            signals.append(_cite("S2", points, f"The identity provider rates the sign-in risk {level.group(0)}", field))
    return signals


def _anonymising_network(alert: AlertFacts, fields: Sequence[Field]) -> list[Signal]:
    for field in values(fields, *ANON_FLAG_KEYS):
        if field.value.strip().lower() == "true":
            return [_cite("S3", 2.0, f"The source address is an anonymising proxy, VPN or Tor ({field.path})", field)]
    for field in values(fields, *ASN_KEYS):
        if ANONYMISER_NETWORK.search(field.value):
            return [
                _cite("S3", 2.0, f"The source address belongs to a VPN, proxy or Tor network ({field.value})", field)
            ]
    return []


def _legacy_protocol(alert: AlertFacts, fields: Sequence[Field]) -> list[Signal]:
    for field in values(fields, "clientAppUsed", "clientApp", "protocol", "authenticationProtocol", "clientProtocol"):
        if field.value.strip().lower() in LEGACY_PROTOCOLS:
            return [_cite("S4", 1.5, f"Legacy authentication protocol that bypasses MFA ({field.value})", field)]
    return []


def _push_flood(alert: AlertFacts, fields: Sequence[Field]) -> list[Signal]:
    """Many MFA pushes denied or sent in a short time: the attacker has the password and is wearing the user down."""
    denials = [field for field in fields if PUSH_DENIALS.search(field.value.lower())]
    if len(denials) >= PUSH_FLOOD:
        return [_cite("S5", 3.0, f"MFA push fatigue: {len(denials)} pushes denied", denials[0])]
    for field in fields:
        if PUSH_COUNT_KEY.search(field.key) and (read.as_count(field.value) or 0) >= PUSH_FLOOD:
            return [_cite("S5", 3.0, f"MFA push fatigue: {field.path} = {field.value}", field)]
    return []


def _changes(alert: AlertFacts, fields: Sequence[Field]) -> list[Signal]:
    signals: list[Signal] = []
    for pattern, points, meaning in CHANGE_RULES:
        for field in values(fields, *CHANGE_KEYS):
            if pattern.search(field.value):
                signals.append(_cite("C5", points, f"The alert reports that {meaning} ({field.value})", field))
                break
    return _just_in_time(alert, fields, signals)


#: Entra Privileged Identity Management: an eligible role activated for a bounded time, with the reason typed in.
PIM_ACTIVATION = re.compile(r"\bPIM activation\b", re.IGNORECASE)
PIM_REASONS = frozenset({"justification", "ticketnumber", "ticketsystem", "reason"})
JUST_IN_TIME_POINTS = -2.0


def _just_in_time(alert: AlertFacts, fields: Sequence[Field], signals: list[Signal]) -> list[Signal]:
    """An admin grant that is a just-in-time activation of an eligible role (Entra PIM) is the control working, not a
    new privilege; with the justification or ticket the activation records, it is the admin's routine work."""
    activation = next((field for field in fields if PIM_ACTIVATION.search(field.value)), None)
    if activation is None:
        return signals
    kept = [
        replace(signal, points=0.0, finding=f"{signal.finding}: a time-bound activation of an eligible role")
        if signal.rule == "C5" and "administrative" in signal.finding
        else signal
        for signal in signals
    ]
    reasons = [value for name, value in name_value_pairs(parsed(alert.alert_content)) if name in PIM_REASONS and value]
    if reasons:
        finding = f"Just-in-time role activation through PIM with its recorded reason: {'; '.join(reasons[:2])}"
        kept.append(_cite("C14", JUST_IN_TIME_POINTS, finding, activation, explains=Explains.AUTHORISED))
    return kept


def injection_citations(alert: AlertFacts) -> list[Citation]:
    """The prompt-injection flag (U1) on its own, for investigators that do not run the other rules."""
    return [citation(signal) for signal in _injection(alert, fields_of(alert.alert_content))]


def _injection(alert: AlertFacts, fields: Sequence[Field]) -> list[Signal]:
    """Text that addresses the investigator is an attacker's move: noticed, cited, never obeyed nor scored."""
    found = find_injection([*fields, Field("alert_type", "alerttype", "", alert.alert_type)])
    return [injection_signal(found)] if found else []


#: Software-deployment agents: a process they start is IT rolling something out, not an intruder.
DEPLOYMENT_AGENTS = frozenset(
    {
        "ccmexec.exe",
        "intunemanagementextension.exe",
        "agentexecutor.exe",
        "besclient.exe",
        "taniumclient.exe",
        "jamf",
        "chef-client",
        "puppet",
        "ansible-playbook",
        "ninjarmmagent.exe",
        "kaseya",
        "ltsvc.exe",
    }
)
DEPLOYMENT_POINTS = -4.0


def _deployment_tooling(alert: AlertFacts, fields: Sequence[Field]) -> list[Signal]:
    """The alert's process was started by the organization's software-deployment agent (SCCM, Intune, …)."""
    for field in values(fields, "parentProcessFileName", "initiatingProcessParentFileName", "parentProcessName"):
        if field.value.strip().lower() in DEPLOYMENT_AGENTS:
            finding = f"The process was started by the software-deployment agent {field.value}"
            return [_cite("A6", DEPLOYMENT_POINTS, finding, field)]
    for field in values(fields, "fileName", "imageFileName", "processName"):
        if DEPLOYMENT_RUNNER.fullmatch(field.value.strip()):
            finding = f"The remote service is the deployment tool's own runner ({field.value}): IT pushing software"
            return [_cite("A6", DEPLOYMENT_POINTS, finding, field, explains=Explains.AUTHORISED)]
    return []


#: Deployment tools that install a runner service on each target over SMB (the shape of PsExec, by design): the
#: remote service the alert claims did happen, and it is IT's (authorised), unlike a process a deployment agent
#: merely started, which a detection mistook for suspicious.
DEPLOYMENT_RUNNER = re.compile(r"PDQDeployRunner(?:-\d+)?\.exe|PDQInventoryScanner(?:-\d+)?\.exe", re.IGNORECASE)


BULK_KEY = re.compile(
    r"cloned|copied|downloaded|uploaded|exported|files|repos|objects|documents|records|itemcount|^count$"
)
NOT_BULK_KEY = re.compile(r"account|fail|error|attempt|login|logon|retry|risk|score|port|pid|size|id$")
BULK_ACTIVITY = re.compile(r"removable|usb|clone|download|upload|copied|copy|export|sync|share|exfil", re.IGNORECASE)
BASELINE_KEY = re.compile(r"baseline|usual|normal|average|avg|typical")
BULK_COUNT = 100
BULK_RATIO = 5
#: Below this multiple of the principal's own baseline a volume is the usual one, not bulk movement.
USUAL_RATIO = 1.5


def _bulk_data(alert: AlertFacts, fields: Sequence[Field]) -> list[Signal]:
    """Many files, repositories or objects moved at once (to USB, a clone, a download), against the baseline."""
    for field in fields:
        number = read.as_count(field.value)
        if number is None or number < BULK_COUNT:
            continue
        if BASELINE_KEY.search(field.key) or NOT_BULK_KEY.search(field.key):
            continue
        word = BULK_KEY.search(field.key)
        if word is None:
            continue
        container = field.path.rsplit(".", 1)[0] if "." in field.path else ""
        activity = " ".join(f.value for f in fields if f.path.startswith(container) and f.key in ACTIVITY_KEYS)
        if word.group(0) == "count" and not BULK_ACTIVITY.search(activity):
            continue
        stem = word.group(0).strip("^$")
        baselines = [
            float(f.value)
            for f in fields
            if BASELINE_KEY.search(f.key) and stem in f.key and _number(f.value) is not None
        ]
        if baselines and number < USUAL_RATIO * max(baselines):
            usual = f"{field.path} = {field.value}, in line with the baseline of {max(baselines):g}: the usual volume"
            return [_cite("I1", 0.0, usual, field)]
        signals = [_cite("I1", 2.0, f"Bulk data movement: {field.path} = {field.value}", field)]
        if baselines and max(baselines) > 0 and number >= BULK_RATIO * max(baselines):
            finding = f"{field.value} is {number / max(baselines):.0f} times the user's baseline of {max(baselines):g}"
            signals.append(_cite("I1", 1.0, finding, field))
        if re.search(r"removable|usb", activity, re.IGNORECASE):
            signals.append(_cite("I1", 1.0, "The data went to removable media", field))
        return signals
    return []


ACTIVITY_KEYS = frozenset({"type", "activity", "action", "operation", "destination"})


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


DEPARTING = re.compile(r"resignation|notice period|termination|leaver|departing|offboard", re.IGNORECASE)


def _departing_user(alert: AlertFacts, fields: Sequence[Field]) -> list[Signal]:
    """HR context: data moved by someone who is leaving weighs more."""
    for field in fields:
        if (field.parent.startswith("hr") or field.key.startswith("hr") or field.key == "status") and DEPARTING.search(
            field.value
        ):
            return [_cite("I2", 1.0, f"The user is leaving the organization ({field.value})", field)]
    return []


OWN_DATA_LABELS = frozenset({"personal", "public", "general", "nonbusiness"})
#: Where Purview-style records name a file's sensitivity label (a map label -> count is read by its keys).
LABEL_NAME_KEYS = frozenset({"sensitivitylabel", "sensitivitylabelname", "labelname"})


def _own_data(alert: AlertFacts, fields: Sequence[Field]) -> list[Signal]:
    """Every labelled file is the user's own (Personal/Public label): keeping it is not theft of company data."""
    labels = [field for field in fields if field.parent == "sensitivitylabels" or field.key in LABEL_NAME_KEYS]
    label_names = [
        field.key if field.parent == "sensitivitylabels" else re.sub(r"[^a-z]", "", field.value.lower())
        for field in labels
    ]
    if labels and all(name in OWN_DATA_LABELS for name in label_names):
        finding = f"The data carries only non-business labels ({', '.join(sorted(set(label_names)))})"
        return [_cite("I4", -3.0, finding, labels[0], explains=Explains.AUTHORISED)]
    return []


LARGE_TRANSFER_BYTES = 1024**3


def _large_transfer(alert: AlertFacts, fields: Sequence[Field]) -> list[Signal]:
    """Gigabytes moved in one alert, and how that compares with the principal's own baseline."""
    for field in fields:
        moved = read.as_count(field.value)
        if "bytes" not in field.key or BASELINE_KEY.search(field.key) or moved is None or moved < LARGE_TRANSFER_BYTES:
            continue
        signals = [_cite("I1", 2.0, f"Large transfer: {moved / 1024**3:.1f} GB ({field.path})", field)]
        baselines = [
            float(f.value) for f in fields if "bytes" in f.key and BASELINE_KEY.search(f.key) and _number(f.value)
        ]
        if baselines and moved >= BULK_RATIO * max(baselines):
            finding = (
                f"{moved / max(baselines):.0f} times the principal's usual volume ({max(baselines) / 1024**2:.0f} MB)"
            )
            signals.append(_cite("I1", 1.0, finding, field))
        return signals
    return []


#: Okta writes each sign-in behaviour with its outcome: these, evaluated NEGATIVE, mean "seen before".
FAMILIAR_BEHAVIOURS = re.compile(r"new (?:device|ip|geo-?location|city|state|country)\s*=\s*negative", re.IGNORECASE)
#: Entra sign-in fields that say the device is the organization's own / the session passed MFA.
MANAGED_DEVICE_KEYS = ("isCompliant", "isManaged")
MFA_SESSION = (("mfaAuthenticated", "true"), ("authenticationRequirement", "multifactorauthentication"))
#: Roles IAM Identity Center creates: such a session began with a sign-in at the organization's identity provider.
SSO_ROLE = re.compile(r"\bAWSReservedSSO_[A-Za-z0-9+=,.@_-]+")
#: Identity-protection risk types of a stolen session or token (Entra ``riskEventType``).
TOKEN_THEFT = re.compile(r"anomalousToken|tokenIssuerAnomaly|attackerinTheMiddle|adversaryInTheMiddle", re.IGNORECASE)
RISK_TYPE_KEYS = ("riskEventType", "riskEventTypes", "riskEventTypesV2", "riskDetail", "detectionType")
FAMILIAR_POINTS = -1.0
FAMILIAR_CAP = -2.0


def _familiar_session(alert: AlertFacts, fields: Sequence[Field]) -> list[Signal]:
    """Context, not an explanation: it argues against a stolen identity, not for the activity being allowed.

    Read from the vendors' own fields: Okta's behaviours evaluated NEGATIVE, Entra's compliant or managed device,
    an MFA-backed session (CloudTrail ``sessionContext.attributes.mfaAuthenticated``, Entra
    ``authenticationRequirement``), an AWS IAM Identity Center role (``AWSReservedSSO_…``)."""
    if any(TOKEN_THEFT.search(field.value) for field in values(fields, *RISK_TYPE_KEYS)):
        return []  # a replayed token carries its victim's device and MFA claims: they prove nothing here
    familiar: list[tuple[str, Field]] = []
    behaviours = next((field for field in fields if len(FAMILIAR_BEHAVIOURS.findall(field.value)) >= 2), None)
    if behaviours is not None:
        familiar.append(("device, address and location seen before", behaviours))
    device = next((f for f in values(fields, *MANAGED_DEVICE_KEYS) if f.value.strip().lower() == "true"), None)
    if device is not None:
        familiar.append(("a compliant or managed device", device))
    mfa = next((f for key, want in MFA_SESSION for f in values(fields, key) if f.value.strip().lower() == want), None)
    if mfa is not None:
        familiar.append(("an MFA-backed session", mfa))
    sso = next((f for f in fields if SSO_ROLE.search(f.value)), None)
    if sso is not None:
        familiar.append(("a session through the organization's single sign-on", sso))
    if not familiar:
        return []
    names = ", ".join(name for name, _ in familiar)
    points = max(FAMILIAR_CAP, FAMILIAR_POINTS * len(familiar))
    return [_cite("S6", points, f"The session looks like the user's own ({names})", familiar[0][1])]
