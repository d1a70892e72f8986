"""The built-in analyst's categories: chosen by what the vendor says (alert type, provider, vendor fields such as
category, finding type and MITRE technique), never by text an attacker can write."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.ai import alerts
from tests.investigations import samples
from vigil.ai.builtin.classify import category_scores, classify
from vigil.core.entities import Entities, extract_entities
from vigil.evidence.knowledge import Category
from vigil.evidence.signals import AlertFacts


def _classify(alert: AlertFacts) -> Category:
    return classify(alert, extract_entities(alert.alert_content))


@pytest.mark.parametrize(
    ("alert", "category"),
    [
        (alerts.DEFENDER, Category.ENDPOINT_MALWARE),
        (alerts.DEFENDER_RANSOMWARE, Category.ENDPOINT_MALWARE),
        (alerts.GUARDDUTY, Category.ENDPOINT_MALWARE),
        (alerts.GUARDDUTY_CREDENTIALS, Category.CLOUD_CREDENTIALS),
        (alerts.DEFENDER_EXFILTRATION, Category.DATA_EXFILTRATION),
        (alerts.CLOUDFLARE, Category.EDGE_WAF_CHANGE),
        (alerts.OKTA_SIGNIN, Category.IDENTITY_SIGNIN),
        (alerts.ENTRA_SIGNIN, Category.IDENTITY_SIGNIN),
        (alerts.OKTA_MFA_RESET, Category.ACCOUNT_CHANGE),
        (alerts.OAUTH_CONSENT, Category.ACCOUNT_CHANGE),
        (alerts.PHISHING, Category.PHISHING),
        (alerts.GENERIC, Category.GENERIC),
    ],
    ids=lambda value: value.alert_type if isinstance(value, AlertFacts) else str(value),
)
def test_realistic_alert_is_classified_into_its_category(alert: AlertFacts, category: Category) -> None:
    assert _classify(alert) is category


# --- attacker-writable text does not choose the category -------------------------------------------------


def _okta_signin(**changes: Any) -> AlertFacts:
    return alerts.alert("okta", "user.session.start", alerts.body(samples.OKTA_SIGNIN, **changes))


def test_ransomware_in_a_command_line_does_not_make_a_sign_in_endpoint_malware() -> None:
    alert = _okta_signin(
        debugContext={"debugData": {"commandLine": "ransomware.exe --encrypt C:\\ && mimikatz lsass trojan"}}
    )

    assert _classify(alert) is Category.IDENTITY_SIGNIN


def test_ransomware_in_an_email_subject_does_not_make_a_sign_in_endpoint_malware() -> None:
    alert = _okta_signin(
        subject="URGENT: ransomware malware trojan backdoor exploit found on your PC",
        description="Your files were encrypted by ransomware. Phishing test. Data exfiltration imminent.",
    )

    assert _classify(alert) is Category.IDENTITY_SIGNIN


def test_words_in_free_text_content_choose_nothing() -> None:
    alert = alerts.alert("custom", "Event 4104", "malware ransomware trojan phishing exfiltration waf login")

    assert _classify(alert) is Category.GENERIC


def test_the_name_an_attacker_gives_an_oauth_app_does_not_choose_the_category() -> None:
    """Known gap (reported): classify reads `displayName`, which in Entra's consent audit record is the name the
    app's registrant (in consent phishing, the attacker) chose."""

    def consent(app_name: str) -> AlertFacts:
        return alerts.alert(
            "entra",
            "Consent to application",
            {
                "activityDisplayName": "Consent to application",
                "category": "ApplicationManagement",
                "initiatedBy": {"user": {"userPrincipalName": "dana@contoso.com", "ipAddress": "91.214.124.19"}},
                "targetResources": [{"type": "ServicePrincipal", "displayName": app_name}],
            },
        )

    hostile = consent("Malware Ransomware Trojan Removal Tool")
    neutral = consent("Mail Sync Pro")

    assert _classify(hostile) is _classify(neutral)


# --- vendor fields choose it ------------------------------------------------------------------------------


def test_the_vendors_category_field_chooses_endpoint_malware() -> None:
    alert = alerts.alert("custom", "EDR alert 4711", {"category": "Ransomware", "severity": "High"})

    assert _classify(alert) is Category.ENDPOINT_MALWARE


def test_a_mitre_phishing_technique_chooses_phishing() -> None:
    alert = alerts.alert("custom", "Mail gateway alert", {"mitreTechniques": ["T1566.002"]})

    assert _classify(alert) is Category.PHISHING


def test_a_mitre_exfiltration_technique_chooses_data_exfiltration() -> None:
    alert = alerts.alert("custom", "Proxy alert", {"techniques": ["T1567.002"]})

    assert _classify(alert) is Category.DATA_EXFILTRATION


def test_a_guardduty_iam_credential_finding_type_chooses_cloud_credentials() -> None:
    document = json.loads(alerts.GUARDDUTY_CREDENTIALS.alert_content)

    alert = alerts.alert("aws", "GuardDuty finding", document)

    assert _classify(alert) is Category.CLOUD_CREDENTIALS


def test_a_guardduty_finding_type_is_read_only_from_aws() -> None:
    """GuardDuty's finding type sits in a field named plainly `Type`; from other providers it means nothing."""
    document = {"Type": "UnauthorizedAccess:IAMUser/InstanceCredentialExfiltration.OutsideAWS"}

    assert _classify(alerts.alert("aws", "Finding", document)) is Category.CLOUD_CREDENTIALS
    assert _classify(alerts.alert("custom", "Finding", document)) is Category.GENERIC


def test_a_guardduty_s3_exfiltration_finding_is_data_exfiltration() -> None:
    document = {"Type": "Exfiltration:S3/AnomalousBehavior", "Severity": 8}

    assert _classify(alerts.alert("aws", "Exfiltration:S3/AnomalousBehavior", document)) is Category.DATA_EXFILTRATION


def test_a_vendor_title_about_data_exfiltration_chooses_data_exfiltration() -> None:
    alert = alerts.alert("netskope", "DLP policy violation", {"title": "Mass download from SharePoint"})

    assert _classify(alert) is Category.DATA_EXFILTRATION


def test_vendor_field_keywords_count_at_most_three_times() -> None:
    alert = alerts.alert(
        "custom",
        "EDR alert 4711",
        {"category": "malware", "title": "trojan", "ruleName": "ransomware", "displayName": "backdoor exploit"},
    )

    assert category_scores(alert, Entities())[Category.ENDPOINT_MALWARE] == 6


def test_a_keyword_in_the_alert_type_outweighs_one_in_a_vendor_field() -> None:
    alert = alerts.alert("okta", "Password spray against many accounts", {"category": "Malware"})

    assert _classify(alert) is Category.IDENTITY_SIGNIN


# --- how scores combine -----------------------------------------------------------------------------------


def test_camel_case_alert_types_are_split_into_words() -> None:
    alert = alerts.alert("entra", "RiskySignInDetected", "{}")

    assert classify(alert, Entities()) is Category.IDENTITY_SIGNIN


def test_a_single_purpose_provider_alone_decides_the_category() -> None:
    """Okta only sends identity events, so its provider weight (2) reaches the threshold on its own."""
    alert = alerts.alert("okta", "Event 4104", "{}")

    assert classify(alert, Entities()) is Category.IDENTITY_SIGNIN


def test_a_multi_purpose_provider_without_keywords_stays_generic() -> None:
    alert = alerts.alert("custom", "Event 4104", "{}")

    assert classify(alert, Entities()) is Category.GENERIC


def test_hashes_tip_an_otherwise_vague_alert_towards_endpoint_malware() -> None:
    alert = alerts.alert("custom", "Suspicious process started", "see evidence")

    without = classify(alert, Entities())
    with_hash = classify(alert, Entities(sha256s=["a" * 64]))

    assert (without, with_hash) == (Category.ENDPOINT_MALWARE, Category.ENDPOINT_MALWARE)
    assert category_scores(alert, Entities(sha256s=["a" * 64]))[Category.ENDPOINT_MALWARE] == 4


def test_equal_scores_resolve_to_the_more_specific_category() -> None:
    alert = alerts.alert("custom", "MFA method added after sign-in", "{}")

    scores = category_scores(alert, Entities())

    assert scores[Category.ACCOUNT_CHANGE] == scores[Category.IDENTITY_SIGNIN]
    assert classify(alert, Entities()) is Category.ACCOUNT_CHANGE


@pytest.mark.parametrize(
    "content",
    ["[" * 100_000 + "]" * 100_000, "\x00\ufffd not json", '{"category": ["ransomware", {"x": null}], "Type": 7}', ""],
    ids=["deep-json", "binary-ish", "odd-types", "empty"],
)
def test_odd_content_never_raises(content: str) -> None:
    assert classify(alerts.alert("aws", "Finding", content), Entities()) in set(Category)
