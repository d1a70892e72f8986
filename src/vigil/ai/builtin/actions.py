"""Recommended next steps per category and verdict: what a SOC runbook would tell the analyst to do."""

from __future__ import annotations

from vigil.ai.schemas import Category, Disposition, Verdict

CONTAINMENT: dict[Category, tuple[str, ...]] = {
    Category.ENDPOINT_MALWARE: (
        "Isolate the machine in Defender until it is cleaned",
        "Collect an investigation package from the machine",
        "Add the file hash to Defender's block indicators and hunt for it across the fleet",
        "Reset the credentials of users signed in to the machine",
    ),
    Category.IDENTITY_SIGNIN: (
        "Revoke the user's sessions and reset the password",
        "Require MFA re-registration for the user",
        "Block the source IP address in conditional access or the identity provider",
        "Review mailbox rules, OAuth consents and recent changes made by the account",
    ),
    Category.EDGE_WAF_CHANGE: (
        "Revert the Cloudflare setting or rule change",
        "Rotate the actor's Cloudflare API tokens and keys",
        "Review the account audit log for other changes by the actor",
        "Enforce two-factor authentication for Cloudflare dashboard members",
    ),
    Category.ACCOUNT_CHANGE: (
        "Revert the account, role or MFA change",
        "Confirm the change with the user's manager or the change ticket",
        "Reset the credentials of the changed account and of the actor",
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


def recommended_actions(
    category: Category, verdict: Verdict, disposition: Disposition, skipped_or_failed: list[str]
) -> list[str]:
    """Containment for malicious/suspicious, closure for benign, evidence gathering for inconclusive."""
    if verdict is Verdict.MALICIOUS:
        return list(CONTAINMENT[category])
    if verdict is Verdict.SUSPICIOUS:
        return ["Review the evidence and confirm before containing", *CONTAINMENT[category][:2]]
    if verdict is Verdict.BENIGN:
        actions = [f"Close the case as {disposition.value.replace('_', ' ')} after review"]
        if disposition is Disposition.FALSE_POSITIVE:
            actions.append("Tune the detection rule so this pattern stops alerting")
        return actions
    actions = ["Have an analyst review the alert: the evidence does not support a verdict"]
    if skipped_or_failed:
        actions.append("Fix or connect the integrations for: " + ", ".join(skipped_or_failed))
    return actions
