"""The alert's subjects read against the public lists (L, S3, G rules): each hit cited with its list, and weighed
by what the list means for this kind of alert. Addresses are from the lists' published ranges."""

from __future__ import annotations

from typing import Any

from tests.ai import alerts
from vigil.ai.builtin import BuiltinInvestigator
from vigil.ai.builtin.rules.context_lists import list_rules
from vigil.ai.schemas import Analysis, Disposition
from vigil.core.entities import extract_entities
from vigil.evidence.signals import AlertFacts, Explains, Signal

VPN_EXIT = "193.32.249.1"  # in the VPN/datacentre list only
AWS = "3.5.140.2"  # in Amazon's ranges (and, like every cloud range, in the VPN/datacentre list)
GITHUB = "140.82.112.5"  # GitHub's own range
CENSYS = "162.142.125.10"
RESOLVER = "9.9.9.9"


def _signals(alert: AlertFacts) -> list[Signal]:
    return list_rules(alert, extract_entities(alert.alert_content))


def _rule(alert: AlertFacts, rule: str) -> Signal:
    found = [signal for signal in _signals(alert) if signal.rule == rule]
    assert len(found) == 1, [(s.rule, s.finding) for s in _signals(alert)]
    return found[0]


def _analyze(alert: AlertFacts) -> Analysis:
    return BuiltinInvestigator().analyze(alert, extract_entities(alert.alert_content), [])


def _sign_in(address: str) -> AlertFacts:
    return alerts.alert(
        "okta",
        "user.session.start",
        {
            "eventType": "user.session.start",
            "actor": {"alternateId": "dana@acme.example"},
            "client": {"ipAddress": address},
        },
    )


def _phish(*urls: str, sender_ip: str = "192.0.2.25") -> AlertFacts:
    message = {"from": "notice@mailer.example.net", "senderIp": sender_ip, "urls": list(urls)}
    return alerts.alert("custom", "User-reported phishing email", {"reporter": "dana@acme.example", "message": message})


def _consent(**fields: Any) -> AlertFacts:
    return alerts.alert(
        "entra_id",
        "Consent to application",
        {"initiatedBy": {"user": {"userPrincipalName": "dana@acme.example"}}, **fields},
    )


def test_a_sign_in_from_a_vpn_exit_is_an_anonymising_network_citing_the_list() -> None:
    s3 = _rule(_sign_in(VPN_EXIT), "S3")

    assert s3.points == 1.5
    assert s3.finding.startswith(f"[MISP vpn-ipv4] {VPN_EXIT} is in ")
    assert (s3.locator, s3.quote, s3.entities) == ("client.ipAddress", VPN_EXIT, (VPN_EXIT,))


def test_a_cloud_providers_address_is_neutral_context_not_an_anonymiser() -> None:
    signals = _signals(_sign_in(AWS))

    assert [(s.rule, s.points) for s in signals] == [("L2", 0.0)]
    assert "Amazon Web Services" in signals[0].finding and "not suspicious by itself" in signals[0].finding


def test_ci_and_webhook_traffic_from_the_vendors_own_range_is_benign_context() -> None:
    alert = alerts.alert(
        "aws",
        "CloudTrail: API call with a deployment key",
        {"eventName": "PutObject", "userIdentity": {"userName": "deployer"}, "sourceIPAddress": GITHUB},
    )

    l1 = _rule(alert, "L1")

    assert l1.points == -1.0 and l1.explains is None
    assert l1.finding.startswith(f"[MISP github] {GITHUB}") and "Actions runners" in l1.finding


def test_a_known_scanner_probing_the_edge_is_benign_background_noise() -> None:
    alert = alerts.alert(
        "cloudflare",
        "WAF: request blocked by managed rule",
        {"action": "block", "clientIP": CENSYS, "host": "www.acme.example"},
    )

    l4 = _rule(alert, "L4")

    assert l4.points == -1.5 and l4.finding.startswith(f"[MISP censys-scanning] {CENSYS}")


def test_a_scanners_address_signing_in_is_only_context() -> None:
    assert _rule(_sign_in(CENSYS), "L4").points == 0.0


def test_a_public_resolver_is_not_an_indicator() -> None:
    alert = alerts.alert("custom", "Connection to a suspicious address", {"hostname": "ws-7", "remoteIp": RESOLVER})

    assert _rule(alert, "L5").points == -0.5


def test_a_reported_mail_pointing_only_at_simulation_infrastructure_is_a_wrong_detection() -> None:
    alert = _phish("https://www.bankmenia.com/track?id=1")

    l8 = _rule(alert, "L8")
    analysis = _analyze(alert)

    assert l8.explains is Explains.WRONG_DETECTION
    assert l8.finding.startswith("[MISP microsoft-attack-simulator] www.bankmenia.com")
    assert analysis.disposition is Disposition.FALSE_POSITIVE


def test_one_real_link_beside_the_simulation_keeps_the_mail_a_phish() -> None:
    alert = _phish("https://www.bankmenia.com/track?id=1", "https://login.acme-payroll.example/")

    assert "L8" not in {signal.rule for signal in _signals(alert)}


def test_a_simulation_domain_quoted_in_prose_explains_nothing() -> None:
    alert = alerts.alert(
        "custom",
        "User-reported phishing email",
        {"message": {"urls": ["https://login.acme-payroll.example/"], "body": "see www.bankmenia.com"}},
    )

    assert "L8" not in {signal.rule for signal in _signals(alert)}


def test_links_on_dynamic_dns_and_shorteners_are_cited_once_per_kind() -> None:
    alert = _phish("https://pay.duckdns.org/a", "https://cdn.duckdns.org/b", "https://bit.ly/3xYz")

    rules = {signal.rule: signal for signal in _signals(alert)}

    assert (rules["L6"].points, rules["L6"].quote) == (1.0, "cdn.duckdns.org")
    assert (rules["L7"].points, rules["L7"].quote) == (0.5, "bit.ly")
    assert [signal.rule for signal in _signals(alert)].count("L6") == 1


def test_a_grant_to_a_microsoft_first_party_app_is_the_platform_working() -> None:
    alert = _consent(appId="14d82eec-204b-4c2f-b7e8-296a70dab67e", scope="User.Read Mail.ReadWrite")

    g1 = _rule(alert, "G1")

    assert g1.points == -1.5 and "Microsoft Graph Command Line Tools" in g1.finding
    assert "G2" not in {signal.rule for signal in _signals(alert)}


def test_a_third_party_apps_grant_is_weighed_by_its_highest_scope_tier() -> None:
    entra_value = (
        "[] => [[ClientId: x, ConsentType: Principal, Scope:  Mail.ReadWrite Mail.Send offline_access User.Read]]"
    )
    alert = _consent(
        appId="7bd3640a-0000-4000-8000-000000000000",
        targetResources=[
            {"modifiedProperties": [{"displayName": "ConsentAction.Permissions", "newValue": entra_value}]}
        ],
    )

    g2 = _rule(alert, "G2")

    assert g2.points == 2.0
    assert g2.quote == "Mail.ReadWrite, Mail.Send"
    assert "high-risk" in g2.finding and "(4 scope(s) granted)" in g2.finding


def test_a_grant_of_sign_in_scopes_only_is_low_risk() -> None:
    assert (
        _rule(
            _consent(clientId="c0ffee00-0000-4000-8000-000000000000", scopes=["openid", "profile", "email"]), "G2"
        ).points
        == -0.5
    )


def test_scope_names_in_prose_are_not_a_grant() -> None:
    alert = _consent(description="The app asked for Mail.Send and Files.ReadWrite.All")

    assert not [signal for signal in _signals(alert) if signal.rule.startswith("G")]
