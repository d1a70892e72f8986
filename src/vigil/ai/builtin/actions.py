"""Recommended next steps per category and disposition: what a SOC runbook would tell the analyst to do.

Containment is said in a product's own terms when the investigation used it (its folder declares how, see
`vigil.evidence.knowledge`), in general terms otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence

from vigil.ai.builtin import vendor_knowledge
from vigil.ai.schemas import Disposition, Evidence, EvidenceStatus
from vigil.evidence.knowledge import Category

CONTAINMENT: dict[Category, tuple[str, ...]] = {
    Category.ENDPOINT_MALWARE: (
        "Isolate the machine in the endpoint protection until it is cleaned",
        "Collect a forensic triage package from the machine",
        "Block the file hash in the endpoint protection and hunt for it across the fleet",
        "Reset the credentials of users signed in to the machine",
    ),
    Category.IDENTITY_SIGNIN: (
        "Revoke the user's sessions and reset the password",
        "Require MFA re-registration for the user",
        "Block the source IP address in conditional access or the identity provider",
        "Review mailbox rules, OAuth consents and recent changes made by the account",
    ),
    Category.CLOUD_CREDENTIALS: (
        "Deactivate and rotate the exposed access keys or role credentials",
        "Revoke active sessions of the principal (attach a deny-all policy with a token-age condition)",
        "Review CloudTrail for everything the credentials did since the first anomalous call",
        "Enforce IMDSv2 on the instance and restrict its role",
    ),
    Category.DATA_EXFILTRATION: (
        "Block the destination address or service at the proxy and firewall",
        "Suspend the account's access to file shares and cloud storage",
        "Preserve the machine's file and network telemetry for the investigation",
        "Notify the data owner and legal or privacy according to the incident plan",
    ),
    Category.EDGE_WAF_CHANGE: (
        "Revert the setting or rule change",
        "Rotate the actor's API tokens and keys",
        "Review the account audit log for other changes by the actor",
        "Enforce two-factor authentication for the account's dashboard members",
    ),
    Category.ACCOUNT_CHANGE: (
        "Revert the account, role or MFA change",
        "Reset the credentials of the changed account and of the actor",
        "Confirm the change with the user's manager or the change ticket",
        "Review other changes the actor made in the same period",
    ),
    Category.PHISHING: (
        "Purge the message from all mailboxes",
        "Block the sender domain and the URLs at the mail gateway and web proxy",
        "Reset the credentials of recipients who clicked or replied",
    ),
    Category.GENERIC: (
        "Contain the affected accounts and machines",
        "Escalate to an analyst for manual investigation",
    ),
}


def recommended_actions(category: Category, disposition: Disposition, evidence: Sequence[Evidence]) -> list[str]:
    """Containment for a true positive, closure for benign outcomes, the open question for pending."""
    used = {item.skill_id for item in evidence if item.skill_id}
    containment = vendor_knowledge.containment(category, used) or CONTAINMENT[category]
    if disposition is Disposition.TRUE_POSITIVE:
        actions = list(containment)
    elif disposition is Disposition.PENDING:
        actions = [
            "Resolve the open question with the user's manager or the change record before closing",
            *containment[:2],
        ]
    else:
        actions = [f"Close the case as {disposition.value.replace('_', ' ')} after review"]
        if disposition is Disposition.FALSE_POSITIVE:
            actions.append("Tune the detection or allow-list the cause so this pattern stops alerting")
    unusable = [item.step_name for item in evidence if item.status not in (EvidenceStatus.OK, EvidenceStatus.WAITING)]
    if unusable:
        actions.append("Fix or connect the integrations for: " + ", ".join(unusable))
    return actions
