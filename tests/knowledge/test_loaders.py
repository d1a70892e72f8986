"""The network, ATT&CK and identity bundles as shipped: provenance that matches the data, and lookups."""

from __future__ import annotations

import pytest

from vigil.knowledge import attack, identity, network
from vigil.knowledge.bundle import bundle_dir, bundles, read_json
from vigil.knowledge.identity import Tier
from vigil.knowledge.network import ListKind


def _kinds(address: str) -> set[ListKind]:
    return {hit.kind for hit in network.ip_lists(address)}


def test_every_bundle_lists_its_files_and_licence_and_they_exist() -> None:
    shipped = {bundle.name: bundle for bundle in bundles()}
    assert {"network", "attack", "identity"} <= set(shipped)
    for bundle in shipped.values():
        assert len(bundle.commit) == 40
        for file in bundle.files:
            assert (bundle_dir(bundle.name) / file).is_file(), (bundle.name, file)
        if bundle.licence_file:
            assert bundle.licence_file in bundle.files


def test_network_counts_are_the_data_it_holds() -> None:
    provenance = next(bundle for bundle in bundles() if bundle.name == network.BUNDLE)
    lists = read_json(network.BUNDLE, network.DATA_FILE)["lists"]
    assert provenance.counts["lists"] == len(lists)
    assert provenance.counts["ipv4_ranges"] == sum(len(entry["v4"]) // 2 for entry in lists.values())


@pytest.mark.parametrize(
    ("address", "kind", "list_id"),
    [
        ("162.142.125.10", ListKind.SCANNER, "censys-scanning"),
        ("140.82.112.5", ListKind.SERVICE, "github"),
        ("3.5.140.2", ListKind.CLOUD, "amazon-aws"),
        ("9.9.9.9", ListKind.RESOLVER, "public-dns-v4"),
        ("193.32.249.1", ListKind.ANONYMISER, "vpn-ipv4"),
        ("::ffff:162.142.125.10", ListKind.SCANNER, "censys-scanning"),
    ],
)
def test_an_address_is_found_in_the_list_that_publishes_its_range(address: str, kind: ListKind, list_id: str) -> None:
    hits = network.ip_lists(address)
    assert any(hit.kind is kind and hit.list_id == list_id for hit in hits), hits


@pytest.mark.parametrize("value", ["198.51.100.7", "10.0.0.1", "not an address", "", "999.1.1.1"])
def test_documentation_private_and_malformed_addresses_are_on_no_list(value: str) -> None:
    assert network.ip_lists(value) == ()


def test_range_edges_are_inclusive_and_the_next_address_is_outside() -> None:
    # Censys publishes 162.142.125.0/24.
    assert ListKind.SCANNER in _kinds("162.142.125.0")
    assert ListKind.SCANNER in _kinds("162.142.125.255")
    assert ListKind.SCANNER not in _kinds("162.142.126.0")


def test_domains_match_their_zone_and_not_a_lookalike() -> None:
    assert {hit.kind for hit in network.domain_lists("Home-Lab.DuckDNS.org.")} == {ListKind.DYNAMIC_DNS}
    assert {hit.kind for hit in network.domain_lists("bit.ly")} == {ListKind.SHORTENER}
    assert {hit.kind for hit in network.domain_lists("www.bankmenia.com")} == {ListKind.SIMULATION}
    assert network.domain_lists("notduckdns.org") == ()
    assert network.domain_lists("org") == ()


def test_technique_tactics_and_sub_technique_fallback() -> None:
    powershell = attack.technique("t1059.001")
    assert powershell is not None
    assert (powershell.name, powershell.parent, powershell.tactics) == ("PowerShell", "T1059", ("execution",))
    assert attack.tactics_of(["T1566.001", "T1059.001", "T1003.001", "T1059", "T9999", "junk"]) == (
        "initial-access",
        "execution",
        "credential-access",
    )
    assert attack.technique("T1003.999") == attack.technique("T1003")
    assert attack.tactic_name("credential-access") == "Credential Access"


@pytest.mark.parametrize(
    ("scope", "tier"),
    [
        ("Mail.ReadWrite", Tier.HIGH),
        ("Mail.Send", Tier.HIGH),
        ("Files.ReadWrite.All", Tier.HIGH),
        ("Directory.ReadWrite.All", Tier.HIGH),
        ("full_access_as_app", Tier.HIGH),
        ("Mail.Read", Tier.MEDIUM),
        ("Directory.Read.All", Tier.MEDIUM),
        ("Calendars.ReadWrite", Tier.MEDIUM),
        ("User.Read", Tier.LOW),
        ("User.ReadBasic.All", Tier.LOW),
        ("offline_access", Tier.LOW),
        ("openid", Tier.LOW),
    ],
)
def test_scope_tiers_follow_the_documented_rule(scope: str, tier: Tier) -> None:
    known = identity.scope(scope)
    assert identity.scope_tier(scope, admin_consent=bool(known and known.admin_consent)) is tier
    if known is not None:
        assert known.tier is tier


def test_microsoft_first_party_apps_are_known_by_id_in_any_case() -> None:
    assert identity.first_party_app("14D82EEC-204B-4C2F-B7E8-296A70DAB67E") == "Microsoft Graph Command Line Tools"
    assert identity.first_party_app("7bd3640a-0000-4000-8000-000000000000") is None
