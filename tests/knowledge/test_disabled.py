"""`VIGIL_KNOWLEDGE_DISABLED`: a bundle switched off loads as empty in every loader, the engine applies the setting,
and switching within one process rebuilds the loaders' cached tables (`vigil eval --ablation` relies on it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from vigil.db.session import Database
from vigil.investigations.engine import build_engine
from vigil.knowledge import attack, hijacklibs, identity, lolbas, loldrivers, lolrmm, network
from vigil.knowledge.bundle import bundles, disabled_bundles, set_disabled
from vigil.knowledge.sigma.rules import ruleset
from vigil.settings import Settings

SCANNER = "162.142.125.10"  # Censys, on the network bundle's scanner list
GRAPH_CLI = "14d82eec-204b-4c2f-b7e8-296a70dab67e"  # Microsoft Graph Command Line Tools, first-party


@pytest.fixture(autouse=True)
def _all_bundles_on_afterwards() -> Iterator[None]:
    yield
    set_disabled([])


def _loaded() -> dict[str, bool]:
    """Whether each bundle's loader finds what it holds when every bundle is on."""
    return {
        "network": bool(network.ip_lists(SCANNER)),
        "attack": attack.technique("T1059.001") is not None,
        "identity": identity.first_party_app(GRAPH_CLI) is not None,
        "sigma": ruleset().compiled > 0,
        "lolrmm": bool(lolrmm.by_name("AnyDesk")),
        "lolbas": lolbas.warm() > 0,
        "hijacklibs": hijacklibs.warm() > 0,
        "loldrivers": loldrivers.warm() > 0,
    }


def test_every_bundle_is_found_when_none_is_disabled() -> None:
    assert set(_loaded()) == {bundle.name for bundle in bundles()}
    assert all(_loaded().values()), _loaded()


@pytest.mark.parametrize("name", [bundle.name for bundle in bundles()])
def test_a_disabled_bundle_loads_as_empty_and_the_others_stay(name: str) -> None:
    assert all(_loaded().values())  # the tables are built (and cached) with every bundle on

    set_disabled([name])

    assert disabled_bundles() == {name}
    assert _loaded() == {bundle.name: bundle.name != name for bundle in bundles()}
    set_disabled([])
    assert all(_loaded().values())


def test_a_name_no_bundle_has_is_refused_and_changes_nothing() -> None:
    set_disabled(["network"])
    with pytest.raises(ValueError, match="no knowledge bundle named netwerk"):
        set_disabled(["attack", "netwerk"])
    assert disabled_bundles() == {"network"}


def test_the_setting_is_a_comma_separated_list_of_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIGIL_KNOWLEDGE_DISABLED", " sigma, network ,")
    assert Settings().knowledge_disabled == ["sigma", "network"]
    monkeypatch.setenv("VIGIL_KNOWLEDGE_DISABLED", '["attack"]')
    assert Settings().knowledge_disabled == ["attack"]


def test_the_engine_runs_the_analyst_with_the_bundles_its_settings_switch_off(settings: Settings) -> None:
    database = Database(settings.model_copy(update={"knowledge_disabled": ["network", "attack"]}))
    try:
        build_engine(database.settings, database, role="test")
        assert disabled_bundles() == {"network", "attack"}
        assert network.ip_lists(SCANNER) == () and attack.technique("T1059.001") is None
        build_engine(settings, database, role="test")
        assert disabled_bundles() == frozenset() and network.ip_lists(SCANNER)
    finally:
        database.dispose()
