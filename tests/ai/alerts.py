"""Alert facts built from the realistic sample bodies shared with the entity tests."""

from __future__ import annotations

from tests.investigations import samples
from vigil.ai.schemas import AlertFacts, AvailableSkill


def alert(provider: str, alert_type: str, content: str) -> AlertFacts:
    return AlertFacts(
        organization_code="ACME",
        alert_provider=provider,
        alert_type=alert_type,
        alert_content=content,
        alert_id=f"ACME-{provider.upper()}-1",
    )


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

#: Every read-only skill of the catalog, as a fully connected organization would have them.
ALL_READ_SKILLS = [
    AvailableSkill(skill_id="List Machines", integration_id="microsoft_defender"),
    AvailableSkill(skill_id="Fetch Alerts", integration_id="microsoft_defender"),
    AvailableSkill(skill_id="Run Advanced Hunting Query", integration_id="microsoft_defender"),
    AvailableSkill(skill_id="Edge Get Account Audit Logs for Detections", integration_id="cloudflare"),
    AvailableSkill(skill_id="Get Edge Audit Logs", integration_id="cloudflare"),
    AvailableSkill(skill_id="Get Edge Zone Details", integration_id="cloudflare"),
    AvailableSkill(skill_id="Get Edge Security Center Insights", integration_id="cloudflare"),
    AvailableSkill(skill_id="Find Account by Email", integration_id="push_security"),
    AvailableSkill(skill_id="List Accounts", integration_id="push_security"),
    AvailableSkill(skill_id="Send Chat Message", integration_id="slack"),
]
WRITE_SKILLS = [
    AvailableSkill(skill_id="Isolate Machine", integration_id="microsoft_defender", writes=True),
    AvailableSkill(skill_id="Create Edge Ruleset Rule", integration_id="cloudflare", writes=True),
]
