"""The Defender fake answers only queries that parse as KQL over Defender's tables: every hunting query a drafted
playbook sends parses, and a malformed one gets advanced hunting's 400 error body, as the real API would."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from vigil.ai.builtin import BuiltinInvestigator
from vigil.ai.schemas import AvailableSkill
from vigil.core.entities import Entities, extract_entities
from vigil.evaluation.scenario import load_scenarios
from vigil.evidence.signals import AlertFacts
from vigil.integrations.catalog import all_skills
from vigil.integrations.microsoft_defender import fake as mde
from vigil.integrations.microsoft_defender.analyst import HUNTING_QUERY
from vigil.integrations.microsoft_defender.fake_kql import KqlError, check
from vigil.investigations.templates import render_inputs
from vigil.playbooks.schemas import SkillStep

DEFENDER_SKILLS = [
    AvailableSkill(skill_id=s.id, integration_id=s.integration_id, writes=s.writes)
    for s in all_skills()
    if s.integration_id == "microsoft_defender"
]
#: One realistic value of every entity kind, so each hunting lookup renders.
EVERY_KIND = Entities(
    ips=["203.0.113.7"],
    domains=["login.example-cdn.net"],
    urls=["https://login.example-cdn.net/a?b=c"],
    md5s=["44d88612fea8a8f36de82e1278abb02f"],
    sha1s=["3395856ce81f2b7382dee72602f798b642f14140"],
    sha256s=["275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f"],
    emails=["jane@corp.example"],
    users=["CORP\\jane"],
    hosts=["ws-0412.corp.example"],
    device_ids=["0123456789abcdef0123456789abcdef01234567"],
)


def _hunting_queries(alert: AlertFacts, entities: Entities) -> list[str]:
    """The KQL of each hunting step the built-in analyst drafts for ``alert``, rendered as the engine renders it."""
    drafted = BuiltinInvestigator().draft_playbook(alert, entities, DEFENDER_SKILLS, chat_available=True)
    context = {"alert": alert.model_dump(), "entities": entities.model_dump()}
    steps = [step for step in drafted.definition.steps if isinstance(step, SkillStep) and step.skill == HUNTING_QUERY]
    return [query for step in steps if (query := render_inputs(step.inputs, context)["query"])]


def test_every_hunting_query_of_the_labelled_sets_drafted_playbooks_parses() -> None:
    queries = []
    for scenario in load_scenarios():
        alert = AlertFacts(
            organization_code="EVAL",
            alert_provider=scenario.alert.alert_provider,
            alert_type=scenario.alert.alert_type,
            alert_content=scenario.content_text(),
            alert_id="A-1",
        )
        queries += _hunting_queries(alert, extract_entities(scenario.content_text()))
    assert len(queries) >= 10, queries
    for query in queries:
        check(query)


def test_every_hunting_lookup_parses_with_every_entity_kind() -> None:
    alert = AlertFacts(
        organization_code="EVAL",
        alert_provider="microsoft_defender",
        alert_type="Suspicious process",
        alert_content="{}",
        alert_id="A-1",
    )
    queries = _hunting_queries(alert, EVERY_KIND)
    assert any(q.startswith("union ") for q in queries) and any("DeviceFileEvents" in q for q in queries), queries
    for query in queries:
        check(query)


@pytest.mark.parametrize(
    "query",
    [
        "DeviceProcessEvents | limit 10",
        "DeviceProcessEvents\n| where Timestamp > ago(7d) and (FileName =~ 'rundll32.exe' or FileName in~ ('a.exe'))"
        "\n| project Timestamp, DeviceName, Command = ProcessCommandLine\n| order by Timestamp desc\n| take 5",
        'DeviceNetworkEvents | where RemoteUrl has "x.example" and RemoteIP !startswith "10." '
        "| summarize Connections = count(), First = min(Timestamp) by DeviceName, bin(Timestamp, 1h) | top 10 by "
        "Connections desc",
        'DeviceFileEvents | where FolderPath contains "C:\\\\Users\\\\" and FileName == "a \\"quoted\\" name" '
        "| extend Lower = tolower(FileName) | distinct DeviceName",
        "DeviceFileEvents | where Timestamp between (datetime(2024-05-01) .. datetime(2024-05-02T10:00:00Z)) | count",
        'DeviceEvents | where AdditionalFields.Foo == @"C:\\Temp" | project-away ReportId | sort by Timestamp asc',
    ],
    ids=["limit", "where-project-order", "summarize-top", "escapes", "between-datetime", "verbatim-project-away"],
)
def test_valid_kql_parses(query: str) -> None:
    check(query)


@pytest.fixture
def defender() -> Iterator[tuple[mde.MdeFake, str]]:
    fake = mde.MdeFake()
    with fake.serve():
        token = httpx.post(
            f"{fake.url}/{mde.TENANT_ID}/oauth2/v2.0/token",
            data={
                "grant_type": "client_credentials",
                "client_id": mde.CLIENT_ID,
                "client_secret": mde.CLIENT_SECRET,
                "scope": f"{fake.url}/.default",
            },
        ).json()["access_token"]
        yield fake, token


#: How advanced hunting begins the message of a query it cannot parse (Kusto's SYN0002).
SYNTAX = "Syntax error: Query could not be parsed at "


def _run(defender: tuple[mde.MdeFake, str], query: str) -> httpx.Response:
    fake, token = defender
    return httpx.post(
        f"{fake.url}/api/advancedqueries/run", json={"Query": query}, headers={"Authorization": f"Bearer {token}"}
    )


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            'DeviceProcessEvents | where FileName == "cmd.exe | take 5',
            SYNTAX + "'\"cmd.exe | take 5' on line [1,41]",
        ),
        (
            'DeviceProcessEvents | where (FileName == "cmd.exe" | take 5',
            SYNTAX + "'|' on line [1,52]",
        ),
        (
            'DeviceProcessEvents | where FileName == "cmd.exe") | take 5',
            SYNTAX + "')' on line [1,50]",
        ),
        ("DeviceProcessEvents\n| | take 5", SYNTAX + "'|' on line [2,3]"),
        ("DeviceProcessEvents | where FileName == 'a' |", SYNTAX + "'' on line [1,46]"),
        ("DeviceProcessEvents | frobnicate 5", SYNTAX + "'frobnicate' on line [1,23]"),
        (
            'union DeviceProcessEvents, DeviceProcesEvents | where DeviceName startswith "ws"',
            "Semantic error: Failed to resolve table or column expression named 'DeviceProcesEvents'",
        ),
    ],
    ids=[
        "unclosed quote",
        "unclosed parenthesis",
        "extra parenthesis",
        "empty pipe",
        "trailing pipe",
        "operator",
        "unknown table",
    ],
)
def test_a_malformed_query_gets_advanced_huntings_400(
    defender: tuple[mde.MdeFake, str], query: str, message: str
) -> None:
    with pytest.raises(KqlError):
        check(query)

    response = _run(defender, query)

    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["message"]) == ("BadRequest", message)
    assert len(error["target"]) == 36  # the per-request correlation GUID of Defender's error envelope


def test_a_valid_query_is_answered_from_the_scenarios_rows(defender: tuple[mde.MdeFake, str]) -> None:
    fake, _ = defender
    fake.load(hunting=[{"query_contains": "ws-0412", "rows": [{"DeviceName": "ws-0412", "FileName": "a.exe"}]}])

    response = _run(defender, 'DeviceProcessEvents | where DeviceName startswith "ws-0412" | take 200')

    assert response.status_code == 200
    assert response.json()["Results"] == [{"DeviceName": "ws-0412", "FileName": "a.exe"}]
