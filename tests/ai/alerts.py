"""Alert facts built from the realistic sample bodies shared with the entity tests, plus variants the analyst
tests need (a ransomware detection, a GuardDuty credential finding, sign-ins with risk factors)."""

from __future__ import annotations

import json
from typing import Any

from tests.investigations import samples
from vigil.ai.schemas import AvailableSkill
from vigil.evidence.signals import AlertFacts


def alert(provider: str, alert_type: str, content: str | dict[str, Any]) -> AlertFacts:
    return AlertFacts(
        organization_code="ACME",
        alert_provider=provider,
        alert_type=alert_type,
        alert_content=content if isinstance(content, str) else json.dumps(content),
        alert_id=f"ACME-{provider.upper()}-1",
    )


def body(sample: str, **changes: Any) -> dict[str, Any]:
    """A sample body (JSON text) as a dict with top-level fields replaced."""
    document: dict[str, Any] = json.loads(sample)
    document.update(changes)
    return document


DEFENDER = alert("microsoft_defender", "'Emotet' malware was detected", samples.DEFENDER_ALERT)
CLOUDFLARE = alert("cloudflare", "WAF security level changed", samples.CLOUDFLARE_WAF_CHANGE)
OKTA_SIGNIN = alert("okta", "user.session.start", samples.OKTA_SIGNIN)
ENTRA_SIGNIN = alert("entra", "Unfamiliar sign-in properties", samples.ENTRA_SIGNIN)
GUARDDUTY = alert("aws", "Backdoor:EC2/C&CActivity.B!DNS", samples.GUARDDUTY_FINDING)
OKTA_MFA_RESET = alert("okta", "user.mfa.factor.deactivate", samples.OKTA_MFA_RESET)
PHISHING = alert("microsoft_defender", "User reported phishing", samples.PHISHING_REPORT)
OAUTH_CONSENT = alert(
    "entra",
    "OAuth app consent granted",
    '{"user": "dana@acme.example", "app": "Mail Sync Pro", "scopes": ["Mail.Read", "offline_access"]}',
)
GENERIC = alert("custom", "Nightly job report", "Backup finished on 2026-11-20 without errors.")

#: Defender's ransomware detection on the same machine as DEFENDER (same user, host, machine id, file).
DEFENDER_RANSOMWARE = alert(
    "microsoft_defender",
    "Ransomware behavior detected in the file system",
    body(
        samples.DEFENDER_ALERT,
        id="da638000000000000000_1111111111",
        category="Ransomware",
        threatFamilyName=None,
        title="Ransomware behavior detected in the file system",
        description="A process encrypted many files and deleted backups.",
        mitreTechniques=["T1486", "T1490"],
    ),
)
#: A low-severity Defender detection that claims little: the evidence decides it.
DEFENDER_LOW = alert(
    "microsoft_defender",
    "Suspicious process executed",
    body(
        samples.DEFENDER_ALERT,
        id="da638000000000000000_2222222222",
        severity="Low",
        category="SuspiciousActivity",
        threatFamilyName=None,
        title="Suspicious process executed",
        mitreTechniques=[],
    ),
)
#: GuardDuty: a role's instance credentials used from outside AWS, by an Identity Center (SSO) session.
GUARDDUTY_CREDENTIALS = alert(
    "aws",
    "UnauthorizedAccess:IAMUser/InstanceCredentialExfiltration.OutsideAWS",
    body(
        samples.GUARDDUTY_FINDING,
        Type="UnauthorizedAccess:IAMUser/InstanceCredentialExfiltration.OutsideAWS",
        Title="Credentials for instance role web-app-role used from a remote AWS account.",
        Severity=8,
        Resource={
            "ResourceType": "AccessKey",
            "AccessKeyDetails": {
                "AccessKeyId": "ASIASZCF3EXAMPLE",
                "PrincipalId": "AROASZCF3EXAMPLE:alice.smith@contoso.com",
                "UserName": "web-app-role",
                "UserType": "AssumedRole",
            },
        },
        Service={
            "Action": {
                "ActionType": "AWS_API_CALL",
                "AwsApiCallAction": {
                    "Api": "ListBuckets",
                    "ServiceName": "s3.amazonaws.com",
                    "RemoteIpDetails": {
                        "IpAddressV4": "45.155.205.233",
                        "Organization": {"Asn": "206728", "AsnOrg": "Media Land LLC"},
                    },
                },
            },
            "Count": 12,
        },
    ),
)
#: Defender's exfiltration detection: the user archived and uploaded files.
DEFENDER_EXFILTRATION = alert(
    "microsoft_defender",
    "Possible exfiltration of archived data",
    body(
        samples.DEFENDER_ALERT,
        id="da638000000000000000_3333333333",
        severity="Medium",
        category="Exfiltration",
        threatFamilyName=None,
        title="Possible exfiltration of archived data",
        mitreTechniques=["T1567.002", "T1560.001"],
    ),
)
#: An Okta sign-in with nothing unusual about it: office network, known device, no risk.
OKTA_CLEAN_SIGNIN = alert(
    "okta",
    "user.session.start",
    body(
        samples.OKTA_SIGNIN,
        securityContext={"asNumber": 3320, "asOrg": "deutsche telekom ag", "isp": "deutsche telekom ag"},
        client={
            "userAgent": {"rawUserAgent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/120.0.0.0"},
            "device": "Computer",
            "ipAddress": "91.214.124.19",
            "geographicalContext": {"city": "Berlin", "country": "Germany"},
        },
    ),
)

#: Every read-only skill of the catalog, as a fully connected organization would have them.
ALL_READ_SKILLS = [
    AvailableSkill(skill_id="microsoft_defender.list_machines", integration_id="microsoft_defender"),
    AvailableSkill(skill_id="microsoft_defender.fetch_alerts", integration_id="microsoft_defender"),
    AvailableSkill(skill_id="microsoft_defender.run_advanced_hunting_query", integration_id="microsoft_defender"),
    AvailableSkill(skill_id="cloudflare.edge_get_account_audit_logs_for_detections", integration_id="cloudflare"),
    AvailableSkill(skill_id="cloudflare.get_edge_audit_logs", integration_id="cloudflare"),
    AvailableSkill(skill_id="cloudflare.get_edge_zone_details", integration_id="cloudflare"),
    AvailableSkill(skill_id="cloudflare.get_edge_security_center_insights", integration_id="cloudflare"),
    AvailableSkill(skill_id="push_security.find_account_by_email", integration_id="push_security"),
    AvailableSkill(skill_id="push_security.list_accounts", integration_id="push_security"),
    AvailableSkill(skill_id="push_security.get_security_findings_by_email", integration_id="push_security"),
    AvailableSkill(skill_id="slack.send_chat_message", integration_id="slack"),
]
WRITE_SKILLS = [
    AvailableSkill(skill_id="microsoft_defender.isolate_machine", integration_id="microsoft_defender", writes=True),
    AvailableSkill(skill_id="cloudflare.create_edge_ruleset_rule", integration_id="cloudflare", writes=True),
]
