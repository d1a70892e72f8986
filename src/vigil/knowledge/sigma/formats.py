"""Alert formats that have no integration folder of their own, by alert_provider: where their bodies carry
records Sigma rules describe. EDR detections map their process fields onto ``process_creation``; identity and
cloud audit events are matched as they come, against the rules of their own log (Sigma's cloud rules use the
logs' own field names). Integration folders declare theirs in ``analyst.py`` (`AnalystKnowledge.sigma_alerts`).
"""

from __future__ import annotations

from vigil.evidence.sigma import HashList, JoinedPath, SigmaAlerts, SigmaCategory, SigmaMapping


def _log(product: str, *services: str) -> SigmaMapping:
    return SigmaMapping((SigmaCategory(product, services),))


#: CrowdStrike Falcon detections: the streaming API's event (FilePath is the folder, ParentImageFileName the
#: parent's full path) or one of the Detects API's behaviors[] (the same names in snake case, cmdline).
CROWDSTRIKE = SigmaAlerts(
    providers=("crowdstrike",),
    records=("event", "behaviors", ""),
    mapping=SigmaMapping(
        (
            SigmaCategory(
                "windows",
                ("process_creation",),
                {
                    "Image": JoinedPath("FilePath", "FileName"),
                    "CommandLine": ("CommandLine", "cmdline"),
                    "ParentImage": "ParentImageFileName",
                    "ParentCommandLine": "ParentCommandLine",
                    "User": "UserName",
                    "Hashes": HashList((("SHA256", "SHA256String"), ("SHA256", "sha256"), ("MD5", "MD5String"))),
                },
            ),
        )
    ),
)
#: SentinelOne threats (threatInfo: the detected file and the process that ran it).
SENTINELONE = SigmaAlerts(
    providers=("sentinelone",),
    records=("threatInfo", ""),
    mapping=SigmaMapping(
        (
            SigmaCategory(
                "windows",
                ("process_creation",),
                {
                    "Image": "filePath",
                    "CommandLine": ("maliciousProcessArguments", "commandLine"),
                    "ParentImage": "originatorProcess",
                    "User": "processUser",
                    "Hashes": HashList((("SHA256", "sha256"), ("SHA1", "sha1"), ("MD5", "md5"))),
                },
            ),
        )
    ),
)
FORMATS = (
    CROWDSTRIKE,
    SENTINELONE,
    # Okta System Log events, alone or as an event hook delivers them.
    SigmaAlerts(("okta",), _log("okta", "okta"), ("data.events", "")),
    # CloudTrail records: a log file's Records[], an EventBridge envelope's detail, or the record itself.
    SigmaAlerts(("aws",), _log("aws", "cloudtrail"), ("Records", "detail", "")),
    # Entra sign-in and audit logs and risk detections (Graph's value[] or one entry).
    SigmaAlerts(
        ("entra_id", "entra", "azure_ad"), _log("azure", "signinlogs", "auditlogs", "riskdetection"), ("value", "")
    ),
    SigmaAlerts(("google_workspace",), _log("gcp", "google_workspace.admin", "google_workspace.login"), ("items", "")),
    SigmaAlerts(("github",), _log("github", "audit")),
)
