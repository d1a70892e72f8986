"""Entity extraction from realistic alert bodies, free text, and hostile input."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.investigations import samples
from vigil.core.entities import MAX_PER_KIND, Entities, EntityKind, extract_entities


def test_defender_alert_yields_machine_hashes_user_and_evidence_ip() -> None:
    entities = extract_entities(samples.DEFENDER_ALERT)

    assert entities.device_ids == [samples.DEFENDER_MACHINE_ID]
    assert entities.hosts == ["ws-0142.corp.contoso.com"]
    assert entities.sha1s == [samples.DEFENDER_SHA1]
    assert entities.sha256s == [samples.DEFENDER_SHA256]
    assert entities.ips == ["185.220.101.47"]
    assert entities.users == ["jdoe", "jdoe@contoso.com"]
    assert entities.emails == ["jdoe@contoso.com"]
    assert entities.urls == ["http://billing-update.xyz/download/invoice.pdf.exe"]
    assert entities.domains == ["billing-update.xyz"]


def test_machine_id_is_a_device_id_not_a_sha1() -> None:
    entities = extract_entities(samples.DEFENDER_ALERT)

    assert samples.DEFENDER_MACHINE_ID not in entities.sha1s


def test_keyed_host_name_is_not_also_reported_as_a_domain() -> None:
    entities = extract_entities(samples.DEFENDER_ALERT)

    assert "ws-0142.corp.contoso.com" not in entities.domains
    assert "corp.contoso.com" not in entities.domains


def test_cloudflare_change_yields_actor_email_and_ip_but_no_user_and_no_id_hashes() -> None:
    entities = extract_entities(samples.CLOUDFLARE_WAF_CHANGE)

    assert entities.emails == ["ops-admin@example.com"]
    assert entities.ips == ["198.41.129.166"]
    assert entities.users == []  # actor.email is an e-mail, not a user name
    assert entities.md5s == []  # 32-hex account, zone and actor ids are identifiers
    assert entities.domains == ["shop.example.com"]


def test_okta_sign_in_yields_login_and_client_ip_but_not_the_browser_version() -> None:
    entities = extract_entities(samples.OKTA_SIGNIN)

    assert entities.users == ["alice.smith@contoso.com"]
    assert entities.emails == ["alice.smith@contoso.com"]
    assert entities.ips == ["91.214.124.19"]  # not Chrome/120.0.0.0


def test_entra_sign_in_yields_upn_and_ipv6_address() -> None:
    entities = extract_entities(samples.ENTRA_SIGNIN)

    assert entities.users == ["bob.jones@contoso.com"]
    assert entities.ips == ["2a02:c207:3007:4512::1"]
    assert entities.device_ids == []  # empty deviceId is not a device


def test_guardduty_finding_yields_instance_role_user_and_addresses_public_first() -> None:
    entities = extract_entities(samples.GUARDDUTY_FINDING)

    assert entities.device_ids == ["i-0b2f5c4a3e1d9c876"]
    assert entities.users == ["web-app-role"]
    assert entities.ips == ["45.155.205.233", "54.210.12.9", "10.0.1.23"]
    assert entities.domains == ["c2.malicious-panel.top"]
    assert "ip-10-0-1-23.ec2.internal" in entities.hosts
    assert entities.md5s == []  # the finding Id and its ARN are identifiers


def test_free_text_yields_iocs_and_key_value_user_and_host() -> None:
    entities = extract_entities(samples.FREE_TEXT)

    assert entities.ips == ["8.8.4.4", "2001:4860:4860::8888", "192.0.2.10"]
    assert entities.urls == ["https://cdn.badsite.ru/payload.ps1"]
    assert entities.domains == ["cdn.badsite.ru"]
    assert entities.md5s == ["44d88612fea8a8f36de82e1278abb02f"]
    assert entities.users == ["contoso\\mallory"]
    assert entities.hosts == ["ws-0099"]
    assert entities.emails == ["soc@contoso.com"]


def test_file_names_namespaces_and_version_strings_are_not_entities() -> None:
    entities = extract_entities(samples.FREE_TEXT)

    assert "invoice.pdf" not in entities.domains
    assert "powershell.exe" not in entities.domains
    assert "system.management.automation" not in entities.domains
    assert "10.0.0.1" not in entities.ips
    assert "12:30:45" not in entities.ips


def test_defanged_indicators_are_refanged() -> None:
    entities = extract_entities(samples.PHISHING_REPORT)

    assert entities.urls == ["https://login-micros0ft-support.online/owa/verify?u=dave"]
    assert entities.domains == ["login-micros0ft-support.online"]


def test_email_domains_are_not_double_counted_as_domains() -> None:
    entities = extract_entities("mail from a.b@contoso.com and c@evil.example.org")

    assert entities.emails == ["a.b@contoso.com", "c@evil.example.org"]
    assert entities.domains == []


def test_public_addresses_sort_before_private_ones() -> None:
    entities = extract_entities("10.0.0.5 172.16.0.1 9.9.9.9 1.1.1.1 fe80::1 2606:4700::1111")

    assert entities.ips == ["1.1.1.1", "9.9.9.9", "2606:4700::1111", "10.0.0.5", "172.16.0.1", "fe80::1"]


def test_invalid_and_unspecified_addresses_are_dropped() -> None:
    entities = extract_entities("999.1.1.1 0.0.0.0 1.2.3.4.5 01.2.3.4 :: 8C:EC:4B:89:7E:73")

    assert entities.ips == []


def test_ipv4_mapped_ipv6_is_reported_as_ipv4() -> None:
    assert extract_entities("peer ::ffff:8.8.8.8 connected").ips == ["8.8.8.8"]


def test_lists_are_sorted_and_deduplicated_case_insensitively() -> None:
    content = json.dumps({"a": "Alice@Contoso.com", "b": "alice@contoso.com", "sha1": "A" * 40, "x": "a" * 40})

    entities = extract_entities(content)

    assert entities.emails == ["alice@contoso.com"]
    assert entities.sha1s == ["a" * 40]


def test_invalid_json_is_scanned_as_text() -> None:
    entities = extract_entities('{"ip": "8.8.8.8", broken')

    assert entities.ips == ["8.8.8.8"]


def test_empty_content_has_no_entities() -> None:
    assert extract_entities("").is_empty()
    assert extract_entities("{}").is_empty()


def test_entities_of_kind_returns_the_named_field() -> None:
    entities = extract_entities(samples.DEFENDER_ALERT)

    assert entities.of(EntityKind.DEVICE_IDS) == entities.device_ids


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=2000))
def test_any_text_is_extracted_without_raising(content: str) -> None:
    assert isinstance(extract_entities(content), Entities)


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=80),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=20), children, max_size=5),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_json_values)
def test_any_json_document_is_extracted_without_raising(document: object) -> None:
    assert isinstance(extract_entities(json.dumps(document)), Entities)


def test_deeply_nested_json_does_not_raise() -> None:
    content = "[" * 100_000 + "]" * 100_000

    assert extract_entities(content).is_empty()


@pytest.mark.parametrize(
    "unit",
    [
        "a.",
        "a-",
        "1.",
        "1.1.",
        "a@",
        "a.a@",
        "f:",
        "ff:",
        "f" * 33 + " ",
        "a" * 70 + ".",
        "http://",
        "user=",
        "x" * 64,
        "[.]",
        "a1-",
    ],
)
def test_hostile_256_kib_input_is_extracted_in_bounded_time(unit: str) -> None:
    content = (unit * (262_144 // len(unit) + 1))[:262_144]

    started = time.perf_counter()
    extract_entities(content)

    assert time.perf_counter() - started < 3.0


def test_a_log_dump_keeps_at_most_the_cap_per_kind_in_bounded_time() -> None:
    content = json.dumps([{"ip": f"10.{i % 256}.{i // 256}.1", "user": f"u{i}"} for i in range(6000)])

    started = time.perf_counter()
    entities = extract_entities(content)

    assert time.perf_counter() - started < 3.0
    assert len(entities.ips) == MAX_PER_KIND
    assert len(entities.users) == MAX_PER_KIND


# --- roles: the value the alert is about comes first, and `subjects` holds exactly those values -----------


def test_okta_sign_in_subjects_are_the_actor_and_the_client_address() -> None:
    entities = extract_entities(samples.OKTA_SIGNIN)

    assert entities.subject(EntityKind.USERS) == ["alice.smith@contoso.com"]
    assert entities.subject(EntityKind.EMAILS) == ["alice.smith@contoso.com"]
    assert entities.subject(EntityKind.IPS) == ["91.214.124.19"]


def test_okta_admin_action_puts_the_actor_first_and_the_affected_user_next() -> None:
    entities = extract_entities(samples.OKTA_MFA_RESET)

    # Alphabetically the target (carol) came first; the account that performed the reset is the subject.
    assert entities.emails == ["helpdesk.admin@contoso.com", "carol.white@contoso.com"]
    assert entities.users == ["helpdesk.admin@contoso.com", "carol.white@contoso.com"]
    assert entities.subject(EntityKind.EMAILS) == ["helpdesk.admin@contoso.com"]
    assert entities.subject(EntityKind.IPS) == ["203.0.113.45"]


def test_entra_sign_in_subjects_are_the_upn_and_the_sign_in_address() -> None:
    entities = extract_entities(samples.ENTRA_SIGNIN)

    assert entities.subjects == {
        "ips": ["2a02:c207:3007:4512::1"],
        "emails": ["bob.jones@contoso.com"],
        "users": ["bob.jones@contoso.com"],
    }


def test_entra_audit_puts_the_initiator_first_and_the_target_next() -> None:
    entities = extract_entities(samples.ENTRA_ROLE_ASSIGNMENT)

    assert entities.users == ["zoe.admin@contoso.com", "bob.jones@contoso.com"]
    assert entities.subject(EntityKind.USERS) == ["zoe.admin@contoso.com"]
    assert entities.subject(EntityKind.IPS) == ["91.214.124.19"]


def test_defender_subjects_are_machine_user_remote_address_and_file() -> None:
    entities = extract_entities(samples.DEFENDER_ALERT)

    assert entities.subject(EntityKind.DEVICE_IDS) == [samples.DEFENDER_MACHINE_ID]
    assert entities.subject(EntityKind.HOSTS) == ["ws-0142.corp.contoso.com"]
    assert entities.subject(EntityKind.USERS) == ["jdoe", "jdoe@contoso.com"]
    assert entities.subject(EntityKind.IPS) == ["185.220.101.47"]
    assert entities.subject(EntityKind.SHA256S) == [samples.DEFENDER_SHA256]


def test_defender_comment_author_assignee_and_prose_come_after_the_subject_user() -> None:
    entities = extract_entities(samples.DEFENDER_ALERT_TRIAGED)

    # The analyst's and the description's addresses sort first alphabetically; the alert is about jdoe.
    assert entities.emails == ["jdoe@contoso.com", "aaron.analyst@contoso.com", "abby.admin@contoso.com"]
    assert entities.subject(EntityKind.EMAILS) == ["jdoe@contoso.com"]
    assert entities.ips == ["185.220.101.47", "10.20.30.40"]
    assert entities.subject(EntityKind.IPS) == ["185.220.101.47"]


def test_guardduty_subjects_are_the_remote_address_instance_and_access_key_user() -> None:
    entities = extract_entities(samples.GUARDDUTY_FINDING)

    assert entities.subject(EntityKind.IPS) == ["45.155.205.233"]  # not the instance's own addresses
    assert entities.subject(EntityKind.DEVICE_IDS) == ["i-0b2f5c4a3e1d9c876"]
    assert entities.subject(EntityKind.USERS) == ["web-app-role"]


def test_cloudflare_subjects_are_the_actor_email_and_address() -> None:
    entities = extract_entities(samples.CLOUDFLARE_WAF_CHANGE)

    assert entities.subject(EntityKind.EMAILS) == ["ops-admin@example.com"]
    assert entities.subject(EntityKind.IPS) == ["198.41.129.166"]
    assert entities.subject(EntityKind.USERS) == []


def test_push_employee_account_comes_before_the_app_owner() -> None:
    entities = extract_entities(samples.PUSH_DETECTION)

    assert entities.emails == ["erin.black@contoso.com", "anna.it@contoso.com"]
    assert entities.subject(EntityKind.EMAILS) == ["erin.black@contoso.com"]
    assert entities.subject(EntityKind.DOMAINS) == ["login-micros0ft-support.online"]


def test_affected_machine_comes_before_management_and_reporting_servers() -> None:
    entities = extract_entities(samples.EDR_EVENT_VIA_SIEM)

    assert entities.hosts == ["ws-0142", "collector-01.corp.contoso.com", "epo-01.corp.contoso.com"]
    assert entities.subject(EntityKind.HOSTS) == ["ws-0142"]
    # Remote (public) end first, then the machine's own address; the DNS server and gateway last.
    assert entities.ips == ["185.220.101.47", "10.20.3.44", "10.0.0.53", "10.20.0.1"]
    assert entities.subject(EntityKind.IPS) == ["185.220.101.47", "10.20.3.44"]


def test_role_outranks_public_before_private() -> None:
    entities = extract_entities(json.dumps({"src_ip": "10.0.0.5", "dnsServer": "8.8.8.8", "message": "1.1.1.1"}))

    assert entities.ips == ["10.0.0.5", "8.8.8.8", "1.1.1.1"]
    assert entities.subject(EntityKind.IPS) == ["10.0.0.5"]


def test_a_private_destination_is_not_a_subject_but_a_public_one_is() -> None:
    inbound = extract_entities(json.dumps({"src_ip": "45.155.205.233", "dst_ip": "10.0.0.8"}))
    outbound = extract_entities(json.dumps({"src_ip": "10.0.0.8", "dst_ip": "45.155.205.233"}))

    assert inbound.subject(EntityKind.IPS) == ["45.155.205.233"]
    assert outbound.subject(EntityKind.IPS) == ["45.155.205.233", "10.0.0.8"]


def test_prose_never_makes_a_value_a_subject() -> None:
    content = json.dumps({"user": "bob", "description": "user=alice@evil.example from 9.9.9.9", "title": "8.8.8.8"})

    entities = extract_entities(content)

    assert entities.subjects == {"users": ["bob"]}
    assert entities.ips == ["8.8.8.8", "9.9.9.9"]


def test_machine_accounts_and_windows_target_accounts_are_not_subject_users() -> None:
    entities = extract_entities(json.dumps({"SubjectUserName": "WS-01$", "TargetUserName": "alice", "user": "bob"}))

    assert entities.users == ["bob", "ws-01$", "alice"]  # the subject, then the others in the order named
    assert entities.subject(EntityKind.USERS) == ["bob"]


def test_free_text_alerts_have_no_subjects() -> None:
    entities = extract_entities(samples.FREE_TEXT)

    assert entities.subjects == {}


def test_stuffed_prose_cannot_push_the_subject_out_of_the_cap() -> None:
    stuffing = " ".join(f"10.{i // 256}.{i % 256}.9" for i in range(MAX_PER_KIND + 100))
    content = json.dumps({"description": stuffing, "client": {"ipAddress": "91.214.124.19"}})

    entities = extract_entities(content)

    assert entities.ips[0] == "91.214.124.19"
    assert len(entities.ips) == MAX_PER_KIND
    assert entities.subject(EntityKind.IPS) == ["91.214.124.19"]


def test_subjects_follow_the_list_order_and_accept_the_kind_as_text() -> None:
    entities = extract_entities(samples.EDR_EVENT_VIA_SIEM)

    for kind in EntityKind:
        subject = entities.subject(kind)
        assert subject == entities.of(kind)[: len(subject)]
    assert entities.subject("hosts") == ["ws-0142"]


def test_entities_recorded_before_subjects_existed_still_validate() -> None:
    old = '{"ips": ["8.8.8.8"], "emails": ["a@contoso.com"]}'

    entities = Entities.model_validate_json(old)

    assert entities.subjects == {}
    assert entities.subject(EntityKind.IPS) == []
    assert Entities.model_validate_json(extract_entities(samples.OKTA_SIGNIN).model_dump_json()).subjects


def test_unknown_fields_and_subject_kinds_are_rejected() -> None:
    with pytest.raises(ValidationError):
        Entities.model_validate({"ips": [], "roles": {}})
    with pytest.raises(ValidationError):
        Entities.model_validate({"subjects": {"passwords": ["x"]}})


def test_cloudtrail_caller_is_the_subject_and_the_user_acted_upon_comes_next() -> None:
    event = {
        "eventName": "CreateAccessKey",
        "userIdentity": {"type": "IAMUser", "userName": "ci-deployer"},
        "sourceIPAddress": "45.155.205.233",
        "requestParameters": {"userName": "alice"},
    }

    entities = extract_entities(json.dumps(event))

    assert entities.users == ["ci-deployer", "alice"]
    assert entities.subjects == {"ips": ["45.155.205.233"], "users": ["ci-deployer"]}


# --- keys whose meaning depends on the value: Microsoft 365 UserId, Purview/Okta device ------------------


def test_a_microsoft_365_user_id_holding_a_upn_is_the_acting_user() -> None:
    record = {
        "CreationTime": "2026-11-20T10:15:00",
        "Operation": "FileDownloaded",
        "Workload": "SharePoint",
        "UserId": "Mark.Lee@acme.example",
        "ClientIP": "91.214.124.19",
    }

    entities = extract_entities(json.dumps(record))

    assert entities.users == ["mark.lee@acme.example"]
    assert entities.subject(EntityKind.USERS) == ["mark.lee@acme.example"]


def test_an_entra_user_id_guid_is_an_object_id_not_a_user() -> None:
    record = {"userId": "d7cc485d-2c1b-422c-98fd-5ce52859a4a3", "ipAddress": "91.214.124.19", "appDisplayName": "Teams"}

    assert extract_entities(json.dumps(record)).users == []


def test_a_purview_device_holding_a_dns_name_is_a_host() -> None:
    record = {"user": "mark.lee@acme.example", "device": "LT-MLEE.acme.example", "activity": {"type": "Copy to USB"}}

    entities = extract_entities(json.dumps(record))

    assert entities.hosts == ["lt-mlee.acme.example"]
    assert entities.subject(EntityKind.HOSTS) == ["lt-mlee.acme.example"]
    assert "lt-mlee.acme.example" not in entities.domains


def test_okta_client_device_is_a_device_type_not_a_host() -> None:
    assert json.loads(samples.OKTA_SIGNIN)["client"]["device"] == "Computer"

    assert extract_entities(samples.OKTA_SIGNIN).hosts == []


@pytest.mark.parametrize(
    ("content", "domain"),
    [
        pytest.param("Beacon to c2.evil.example every 60 s.", "c2.evil.example", id="prose"),
        pytest.param(json.dumps({"zone_name": "shop.example"}), "shop.example", id="keyed"),
    ],
)
def test_names_under_the_reserved_example_tld_are_domains(content: str, domain: str) -> None:
    """RFC 2606 reserves .example for documentation; vendor samples use it for real-looking names."""
    assert extract_entities(content).domains == [domain]
