"""`vigil eval --model …`: the runner against a language model (the loopback provider fake), and the report file.

The model is reached the way `vigil serve` reaches it: base URL and key from `VIGIL_AI_BASE_URL` and
`VIGIL_AI_API_KEY` in the environment, not passed to the runner.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.fakes.llm import OPENAI_KEY, ErrorReply, LlmCall, LlmFake, Reply, llm_fake, llm_server
from tests.support.llm import DRAFT, MODEL, VERDICT, final, is_draft

from vigil.evaluation.report import (
    builtin_part,
    model_sections,
    render_markdown,
    rich_table,
    section_end,
    section_start,
    usage_rows,
    usage_table,
    write_markdown,
)
from vigil.evaluation.runner import EvalReport, MachineInfo, RunOutcome, ScenarioResult, run_evaluation
from vigil.evaluation.scenario import Scenario, load_scenarios

__all__ = ["llm_fake", "llm_server"]  # the provider fake's fixtures, used below

#: A scenario without history, with a history alert (another type, so drafted and analysed too), and the one
#: whose every verdict request fails.
PLAIN = "phishing-reported-knowbe4-simulation"
WITH_HISTORY = "identity-okta-service-account-stale-password"
FAILING = "endpoint-eicar-av-test"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "evaluation.md"


@pytest.fixture(scope="module")
def scenarios() -> dict[str, Scenario]:
    wanted = (PLAIN, WITH_HISTORY, FAILING)
    found = {s.id: s for s in load_scenarios() if s.id in wanted}
    assert set(found) == set(wanted), "a scenario this test runs was renamed"
    return found


@pytest.fixture
def model_env(monkeypatch: pytest.MonkeyPatch, llm_fake: LlmFake) -> Iterator[LlmFake]:
    """The model's server and key as an operator sets them for `vigil serve` (the runner passes neither)."""
    monkeypatch.setenv("VIGIL_AI_BASE_URL", llm_fake.openai_base_url)
    monkeypatch.setenv("VIGIL_AI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("VIGIL_AI_MAX_RETRIES", "1")
    monkeypatch.setenv("VIGIL_AI_RETRY_BACKOFF_SECONDS", "0.01")
    monkeypatch.setenv("VIGIL_AI_REQUEST_TIMEOUT_SECONDS", "10")
    yield llm_fake


def test_eval_against_a_model_reports_tokens_time_and_fallbacks(
    db_url: str, model_env: LlmFake, scenarios: dict[str, Scenario]
) -> None:
    fake = model_env
    failing_type = scenarios[FAILING].alert.alert_type

    def respond(call: LlmCall) -> Reply | ErrorReply:
        if is_draft(call):
            return final(DRAFT, 700, 40)
        if failing_type in call.user_text:
            return ErrorReply(status=500, message="LlmFake: the model is down")
        return final(VERDICT, 1100, 90)

    fake.respond_with(respond)

    chosen = [scenarios[PLAIN], scenarios[WITH_HISTORY], scenarios[FAILING]]
    report = run_evaluation(chosen, database_url=db_url, model=MODEL)

    by_id = {result.id: result.run for result in report.results}
    assert all(run.status == "completed" for run in by_id.values()), [r.error for r in by_id.values()]
    # Token totals: what the provider reported, every request of the run (the history alert's included).
    input_tokens, output_tokens = fake.usage_totals()
    total = report.usage_total
    assert (total.input_tokens, total.output_tokens) == (input_tokens, output_tokens)
    assert input_tokens > 0
    # Model requests: a draft and a verdict for each of the four alerts; the failing verdict request was tried
    # twice (VIGIL_AI_MAX_RETRIES=1), one exchange with its re-try inside.
    assert total.model_requests == 8 and len(fake.calls) == 9
    assert sum(isinstance(call.reply, Reply) for call in fake.calls) == 7
    assert total.cost_usd is None  # no public price for gpt-test
    # Per investigation: the model wrote the verdict, with a draft and a verdict request of its own.
    plain = by_id[PLAIN]
    assert plain.ai_model == MODEL and plain.fallback_reason is None and plain.draft_fallback_reason is None
    assert (plain.usage.input_tokens, plain.usage.output_tokens) == (700 + 1100, 40 + 90)
    assert plain.usage.model_requests == 2 and plain.seconds > 0 and plain.usage.model_seconds > 0
    assert plain.disposition == "true_positive" and plain.severity == "high"
    # The history alert was drafted for and analysed too: counted in the total, apart from the investigation.
    history = by_id[WITH_HISTORY]
    assert history.ai_model == MODEL
    assert (history.history_usage.input_tokens, history.history_usage.output_tokens) == (1800, 130)
    # Every verdict request of the failing scenario answered 500: the built-in analyst wrote it, and says why.
    failed = by_id[FAILING]
    assert failed.ai_model == "builtin"
    assert failed.fallback_reason is not None and "server_error" in failed.fallback_reason
    assert "the model is down" in failed.fallback_reason
    assert (failed.usage.input_tokens, failed.usage.output_tokens) == (700, 40)  # only the draft succeeded
    assert report.fallbacks.verdicts == {"server_error": 1} and report.fallbacks.drafts == {}
    assert report.model_verdicts == 2
    assert all(run.seconds > 0 for run in by_id.values())
    assert report.usage.investigations == 3 and report.usage.seconds.mean > 0
    assert report.usage.tokens.median == 1800 + 130

    markdown = render_markdown(report, f"vigil eval --model {MODEL}")
    assert markdown.startswith(section_start(MODEL) + "\n## Model `openai-chat:gpt-test`")
    assert markdown.rstrip("\n").endswith(section_end(MODEL))
    verdicts = f"* Verdicts by {MODEL}: 2 of 3 completed; by the built-in analyst after a fallback: 1 (server_error ×1)"
    assert verdicts in markdown
    assert f"{input_tokens:,} input + {output_tokens:,} output tokens" in markdown
    assert "| Tokens, input + output | 1,533.3 | 1,930 | 1,930 |" in markdown  # (1930 + 1930 + 740) / 3
    plain_row = next(line for line in markdown.splitlines() if line.startswith(f"| {PLAIN} |"))
    assert f"| {MODEL} | 1,800 / 130 | 2 / 0 |" in plain_row
    failing_row = next(line for line in markdown.splitlines() if line.startswith(f"| {FAILING} |"))
    assert "| builtin (fallback) | 700 / 40 |" in failing_row
    assert "verdict fallback: openai-chat:gpt-test could not finish (server_error)" in failing_row
    # The terminal: mean tokens per category, and the per-investigation spread.
    assert [column.header for column in rich_table(report).columns][-2:] == ["Tokens", "Passed"]
    assert usage_table(report).row_count == len(usage_rows(report)) == 7  # no cost row: the price is unknown


# --- the report file ----------------------------------------------------------------------------------------------


def _report(model: str, seconds: float = 1.5) -> EvalReport:
    run = RunOutcome(
        organization_code="EV01",
        status="completed",
        seconds=seconds,
        disposition="true_positive",
        severity="high",
        summary="x",
        ai_model=model,
    )
    result = ScenarioResult(
        id="one",
        title="One",
        category="identity",
        fast=True,
        expected_disposition="true_positive",
        expected_severity=["high"],
        expected_entities=[],
        run=run,
        disposition_ok=True,
        severity_ok=True,
        missing_entities=[],
        failures=[],
    )
    return EvalReport(
        started_at=datetime(2026, 1, 2, 3, 4, tzinfo=UTC),
        seconds=seconds,
        model=model,
        database_backend="SQLite 3",
        machine=MachineInfo(uname="Linux", cpu_model="cpu", cores=2),
        scenario_timeout_seconds=60,
        results=[result],
    )


def test_a_model_section_leaves_the_builtin_report_untouched(tmp_path: Path) -> None:
    path = tmp_path / "evaluation.md"
    builtin = builtin_part(DOCS.read_text(encoding="utf-8"))
    path.write_text(builtin, encoding="utf-8")

    write_markdown(_report("openai-chat:a"), path, "vigil eval --model openai-chat:a")
    write_markdown(_report("anthropic:b"), path, "vigil eval --model anthropic:b")
    text = path.read_text(encoding="utf-8")
    assert text.startswith(builtin)
    assert list(model_sections(text)) == ["openai-chat:a", "anthropic:b"]

    # Running a model again replaces its own section, where it stands; nothing else changes.
    before_b = model_sections(text)["anthropic:b"]
    write_markdown(_report("openai-chat:a", seconds=7.25), path, "vigil eval --model openai-chat:a")
    text = path.read_text(encoding="utf-8")
    assert text.startswith(builtin)
    sections = model_sections(text)
    assert list(sections) == ["openai-chat:a", "anthropic:b"]
    assert "7.2 s" in sections["openai-chat:a"] and "1.5 s" not in sections["openai-chat:a"]
    assert sections["anthropic:b"] == before_b
    assert text.count(section_start("openai-chat:a")) == 1

    # The built-in analyst's run rewrites the part before the model sections and keeps them.
    new_builtin = render_markdown(_report("builtin"), "vigil eval")
    write_markdown(_report("builtin"), path, "vigil eval")
    text = path.read_text(encoding="utf-8")
    assert text.startswith(new_builtin)
    assert model_sections(text) == sections


def test_the_docs_explain_models_as_the_report_writes_it() -> None:
    """docs/evaluation.md's text on models is the renderer's, so a built-in run keeps it as it is."""
    text = DOCS.read_text(encoding="utf-8")
    rendered = render_markdown(_report("builtin"), "vigil eval")
    models_part = rendered[rendered.index("## Against a language model") :]
    assert builtin_part(text).endswith(models_part)
