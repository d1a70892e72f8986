"""Push Security records as playbooks see them, parsed from the API's camelCase JSON."""

from __future__ import annotations

from pydantic import Field

from vigil.integrations.framework import VendorRecord, optional


class LoginMethods(VendorRecord):
    password_login: bool | None = optional("Whether the account logs in with a password.")
    oidc_login: str | None = optional("OIDC identity provider used, if any.")
    saml_login: str | None = optional("SAML identity provider used, if any.")
    okta_swa_login: bool | None = optional("Whether Okta SWA is used.")
    vendor_sso_login: str | None = optional("Vendor SSO used, if any.")
    fed_cm_login: str | None = optional("FedCM provider used, if any.")


class PushAccount(VendorRecord):
    id: str = Field(description="Account ID (UUID).")
    email: str | None = optional("Email the account is registered with.")
    app_type: str | None = optional("App of the account, e.g. ATLASSIAN.")
    app_id: str | None = optional("App ID (UUID).")
    employee_id: str | None = optional("Employee who owns the account (UUID).")
    mfa_registered: bool | None = optional("Whether MFA is registered; null when unknown.")
    mfa_methods: list[str] | None = optional("MFA methods seen, e.g. APP_TOTP, PUSH_NOTIFICATION.")
    password_id: str | None = optional("ID of the password used, to spot reuse.")
    login_methods: LoginMethods | None = optional("How the account logs in.")
    creation_timestamp: int | None = optional("When Push first saw the account (UNIX seconds).")
    last_used_timestamp: int | None = optional("When the account was last used (UNIX seconds).")


class PushFinding(VendorRecord):
    """A security finding (reference D.6) about an account or employee, e.g. MFA_NOT_REGISTERED."""

    id: str = Field(description="Finding ID (UUID).")
    type: str | None = optional(
        "Finding type: MFA_NOT_REGISTERED, REUSED_PASSWORD, SHARED_ACCOUNT, UNUSED_THIRD_PARTY_APP, WEAK_PASSWORD, "
        "LEAKED_PASSWORD, PASSWORD_MANAGER_NOT_USED or STOLEN_CREDENTIALS."
    )
    state: str | None = optional("OPEN or RESOLVED.")
    app_type: str | None = optional("App the finding is about, e.g. GITHUB; null for employee-wide findings.")
    account_id: str | None = optional("Account the finding is about (UUID); null for employee-wide findings.")
    employee_id: str | None = optional("Employee the finding belongs to (UUID); null when not linked to one.")
    weak_password_reasons: list[str] | None = optional("Why the password is weak (WEAK_PASSWORD findings).")
    creation_timestamp: int | None = optional("When Push raised the finding (UNIX seconds).")


class PushDetection(VendorRecord):
    """A detection (``GET /v1/detections``): something Push saw happen in the employee's browser."""

    id: str = Field(description="Detection ID (UUID).")
    detection_type: str | None = optional(
        "What was detected, e.g. PHISHING (phishing page or AiTM kit, password entered), STOLEN_CREDENTIALS, "
        "BLOCKED_URL, MALWARE_DELIVERY."
    )
    severity: str | None = optional(
        "LOW (blocked by Push), MEDIUM (warned), HIGH (not blocked), CRITICAL (not blocked and a password was "
        "entered, or stolen credentials used on a sensitive app)."
    )
    response: str | None = optional("What Push did about it, as Push reports it (e.g. blocked, warned).")
    archived: bool | None = optional("Whether an administrator archived (closed) the detection.")
    creation_timestamp: int | None = optional("When Push made the detection (UNIX seconds).")
