"""Each vendor folder's `fake.py` declares how `vigil eval` drives its fake (`SCENARIO_FAKE`), so the runner finds
every fake by integration id and names no vendor."""

from __future__ import annotations

from vigil.evaluation.scenario import scenario_fakes
from vigil.integrations.catalog import chat_integration_ids, get_integration, vendor_modules
from vigil.integrations.fakes import ChatScenarioFake, FakeVendor, ScenarioData


def test_every_vendor_fake_declares_its_own_integration() -> None:
    modules = vendor_modules("fake")
    assert {"microsoft_defender", "cloudflare", "push_security", "slack"} <= set(scenario_fakes())
    for module in modules:
        package = module.__name__.rsplit(".", 1)[0]
        declared = module.SCENARIO_FAKE
        assert declared.integration_id == get_integration(declared.integration_id).id
        assert package.endswith("." + declared.integration_id), (package, declared.integration_id)
        assert issubclass(declared.fake_type, FakeVendor) and issubclass(declared.data_model, ScenarioData)


def test_the_chat_integrations_fakes_can_answer_a_checkpoint() -> None:
    chat_fakes = {fake_id for fake_id, declared in scenario_fakes().items() if issubclass(declared, ChatScenarioFake)}
    assert chat_fakes == chat_integration_ids() & set(scenario_fakes())
    assert chat_fakes


def test_vigil_reaches_each_fake_at_every_base_url_its_integration_declares() -> None:
    for integration_id, declared in scenario_fakes().items():
        fake = declared()
        with fake.serve():
            urls = fake.vendor_urls()
            assert set(urls) == {url.key for url in get_integration(integration_id).base_urls}
            assert all(url.startswith(fake.fake.url) for url in urls.values()), urls
            assert fake.connection_values()
            assert fake.write_requests() == []
