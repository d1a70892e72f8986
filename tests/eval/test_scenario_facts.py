"""A scenario's `organization_facts` are recorded through the API for its organization before its alert arrives,
an already expired one ended as of its expiry, so the investigation reads only the active ones."""

from __future__ import annotations

import json

from sqlalchemy import select

from vigil.cases.models import Case
from vigil.db.session import Database
from vigil.evaluation.runner import run_evaluation
from vigil.evaluation.scenario import ScenarioFact, load_scenarios
from vigil.evidence.facts import ORG_FACTS_SKILL_ID
from vigil.facts.models import OrganizationFact
from vigil.investigations.models import InvestigationStep
from vigil.orgs.models import Organization
from vigil.settings import Settings

PLAIN = "phishing-reported-knowbe4-simulation"


def test_scenario_facts_are_recorded_before_the_alert_and_the_expired_one_is_not_read(db_url: str) -> None:
    scenario = next(s for s in load_scenarios(fast_only=True) if s.id == PLAIN)
    facts = [
        ScenarioFact(kind="ci_network", value="192.0.2.0/28", reason="Build runners", owner="ci-owner@example.org"),
        ScenarioFact(
            kind="vpn_egress", value="198.51.100.9", reason="Old VPN", owner="net@example.org", expires_in_days=-3
        ),
        ScenarioFact(
            kind="change_window",
            value="CHG-0001",
            reason="Patch night",
            owner="ops@example.org",
            window_start="2026-01-10T22:00:00Z",
            window_end="2026-01-11T02:00:00Z",
        ),
    ]
    report = run_evaluation([scenario.model_copy(update={"organization_facts": facts})], database_url=db_url)

    run = report.results[0].run
    assert run.status == "completed", run.error
    assert f"{ORG_FACTS_SKILL_ID}: ok" in run.evidence
    database = Database(Settings(database_url=db_url))
    try:
        with database.read() as session:
            organization = session.scalar(
                select(Organization).where(Organization.organization_code == run.organization_code)
            )
            assert organization is not None
            stored = {
                fact.value: fact
                for fact in session.scalars(
                    select(OrganizationFact).where(OrganizationFact.organization_uuid == organization.organization_uuid)
                )
            }
            case = session.scalar(select(Case).where(Case.case_id == run.case_id))
            assert case is not None
            evidence = session.scalar(
                select(InvestigationStep.output).where(
                    InvestigationStep.alert_uuid == case.alert_uuid, InvestigationStep.skill_id == ORG_FACTS_SKILL_ID
                )
            )
    finally:
        database.dispose()
    assert set(stored) == {"192.0.2.0/28", "198.51.100.9", "CHG-0001"}
    assert stored["198.51.100.9"].expires_at < stored["198.51.100.9"].created_at  # recorded, then lapsed
    assert stored["CHG-0001"].window_start == 1768082400 and stored["CHG-0001"].window_end == 1768096800
    assert all(fact.created_by == "api_key:vigil eval" for fact in stored.values())
    assert evidence is not None
    assert sorted(f["value"] for f in json.loads(evidence)["facts"]) == ["192.0.2.0/28", "CHG-0001"]
