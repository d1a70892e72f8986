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
