"""The built-in analyst's category rules on realistic alerts."""

from __future__ import annotations

import pytest

from tests.ai import alerts
from vigil.ai.builtin.classify import classify
from vigil.ai.schemas import AlertFacts, Category
from vigil.investigations.entities import Entities, extract_entities


@pytest.mark.parametrize(
    ("alert", "category"),
    [
        (alerts.DEFENDER, Category.ENDPOINT_MALWARE),
        (alerts.GUARDDUTY, Category.ENDPOINT_MALWARE),
        (alerts.CLOUDFLARE, Category.EDGE_WAF_CHANGE),
        (alerts.OKTA_SIGNIN, Category.IDENTITY_SIGNIN),
        (alerts.ENTRA_SIGNIN, Category.IDENTITY_SIGNIN),
        (alerts.OKTA_MFA_RESET, Category.ACCOUNT_CHANGE),
        (alerts.PHISHING, Category.PHISHING),
        (alerts.GENERIC, Category.GENERIC),
    ],
    ids=lambda value: value.alert_type if isinstance(value, AlertFacts) else str(value),
)
def test_realistic_alert_is_classified_into_its_category(alert: AlertFacts, category: Category) -> None:
    assert classify(alert, extract_entities(alert.alert_content)) is category


def test_alert_type_outweighs_keywords_in_the_content() -> None:
    alert = alerts.alert("okta", "Password spray against many accounts", "malware trojan ransomware")

    assert classify(alert, Entities()) is Category.IDENTITY_SIGNIN


def test_camel_case_alert_types_are_split_into_words() -> None:
    alert = alerts.alert("entra", "RiskySignInDetected", "{}")

    assert classify(alert, Entities()) is Category.IDENTITY_SIGNIN


def test_content_alone_below_the_threshold_is_generic() -> None:
    alert = alerts.alert("custom", "Event 4104", "login")

    assert classify(alert, Entities()) is Category.GENERIC


def test_hashes_tip_an_otherwise_vague_alert_towards_endpoint_malware() -> None:
    alert = alerts.alert("custom", "Suspicious process started", "see evidence")
    entities = Entities(sha256s=["a" * 64])

    assert classify(alert, entities) is Category.ENDPOINT_MALWARE


def test_equal_scores_resolve_to_the_more_specific_category() -> None:
    alert = alerts.alert("custom", "MFA method added after sign-in", "{}")

    assert classify(alert, Entities()) is Category.ACCOUNT_CHANGE
