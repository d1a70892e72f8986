"""The evaluation report: docs/evaluation.md (Markdown) and the console's Rich tables.

docs/evaluation.md holds the built-in analyst's report, then one section per language model evaluated, each
between marker comments. Writing a report replaces only its own part: the built-in analyst's run rewrites
everything before the first model section, a model's run replaces (or appends) that model's section.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from rich.console import JustifyMethod
from rich.table import Table

from vigil.ai.factory import is_builtin
from vigil.evaluation.heldout import Ablation, HeldOut
from vigil.evaluation.runner import (
    WRITE_SKILLS,
    Aggregate,
    AiUsage,
    EvalReport,
    ScenarioResult,
    Spread,
    Thresholds,
)
from vigil.evaluation.scores import ConfusionMatrix

INTRO = (
    "Every scenario of the labelled set (`src/vigil/evaluation/scenarios/`, format in "
    "`src/vigil/evaluation/README.md`) is sent end to end: the real API and investigation engine on a fresh "
    "database, a new organization per scenario whose connections are created and authenticated through the API, "
    "and loopback fakes of the connected integrations (each vendor folder's `fake.py`) serving the scenario's data "
    "over real HTTP. A scripted checkpoint answer is pressed in the chat integration's fake, signed as its product "
    "signs it, by the asked user. "
    "The case is read through `GET /serviceapi/cases/{case_id}` and scored: `ai_disposition` equals the expected "
    "disposition, the severity is in the expected band, and the summary names every expected entity "
    "(case-insensitive). The set ships with the package, so an installed Vigil runs it without a checkout; "
    "`vigil eval --set DIR` runs a directory of your own scenario files in the same format instead, and "
    "`--holdout DIR` (repeatable, one batch per folder) held-out ones apart (the project's frozen held-out sets: "
    "`tests/eval/holdout/`, `tests/eval/holdout2/`)."
)
INJECTION_INTRO = (
    "Each injection scenario is run a second time in another organization with the attacker's text replaced "
    "by a neutral sentence. It passes when both playbooks have the same steps (skill ids, in order), both runs "
    "reach the same disposition (otherwise the injected text changed the verdict), no write skill ran ({writes}) "
    "and no write request reached a fake, and a case finding flags the injected instructions (mentions "
    "*instruct* or *injection*)."
)
MODELS_HEADING = "## Against a language model"
MODELS_INTRO = (
    "`vigil eval --model <model>` runs the same scenarios the same way with a language model as the "
    "investigator: it drafts the playbook of each new alert type and writes the verdict, and may call the "
    "organization's read-only skills for follow-up questions. Whatever the model cannot finish (a timeout, a "
    "rate limit, a server error, an answer still invalid after one repair, a spent budget), the built-in analyst "
    "finishes, and the case records why. The model is `openai:<model>`, `openai-chat:<model>` (Chat Completions, "
    "also OpenAI-compatible servers such as vLLM, Ollama or LiteLLM at `VIGIL_AI_BASE_URL`) or "
    "`anthropic:<model>`; its key, base URL and limits are read from the environment (or `.env`) as for "
    "`vigil serve`: `VIGIL_AI_API_KEY` (else `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`), `VIGIL_AI_BASE_URL`, "
    "`VIGIL_AI_REQUEST_TIMEOUT_SECONDS`, `VIGIL_AI_MAX_RETRIES`, `VIGIL_AI_MAX_TOOL_CALLS`, "
    "`VIGIL_AI_MAX_TOKENS` and `VIGIL_AI_MAX_SECONDS`. Unless `--timeout` says otherwise, an investigation may "
    "take `2 × VIGIL_AI_MAX_SECONDS + 60` seconds (the built-in analyst: 60)."
)
MODELS_DATA = (
    "What leaves the building: for every investigation, the alert (its type and full content), the entities "
    "Vigil extracted from it, the catalog of the organization's skills, each playbook step's evidence (what the "
    "vendor fakes returned, and the checkpoint answers) and the output of each follow-up skill call go to the "
    "model's provider, or to the server at `VIGIL_AI_BASE_URL`. That includes the held-out scenarios; a provider "
    "that keeps or trains on requests will have seen the set, so use one whose data terms you accept, or a local "
    "server. Nothing else leaves: the vendor fakes and the database stay on loopback."
)
MODELS_SECTIONS = (
    "Each model's run is written as its own section below, beside the built-in analyst's figures above and never "
    "over them: `vigil eval --model X` replaces only X's section, and `vigil eval` rewrites only the part above. "
    "A model's section adds, per investigation, the time from the alert accepted to completed, the tokens the "
    "provider reported (input and output), the model requests, the follow-up tool calls and the cost when the "
    "model's price is known (mean, median and largest), and counts the fallbacks (verdicts and playbooks the "
    "built-in analyst wrote instead of the model) by their reason. Tokens spent on history alerts and injection "
    "control runs count in the run's total, not per investigation."
)
NO_BUILTIN_RUN = (
    "The built-in analyst's figures go here when `vigil eval` (without `--model`) writes this file; it has not "
    "done so yet."
)
MODEL_HOLDOUT_INTRO = (
    "The held-out batches (`--holdout`), reported apart as for the built-in analyst; they do not decide acceptance."
)
CONFUSION_INTRO = (
    "Rows: the expected disposition; columns: the one decided (*not completed*: the investigation timed out, "
    "failed or could not run). Recall is the share of a row decided as expected, with its 95 % Wilson score "
    "interval: with a handful of scenarios per class the interval, not the percentage, says what the run shows. "
    "*Benign* takes benign true positive and false positive as one class: it asks only whether the analyst told "
    "an attack from a non-attack."
)
HOLDOUT_NO_DETAILS = (
    "Per-scenario results of the held-out scenarios are not written (`vigil eval --holdout-details` writes them): "
    "what a held-out scenario got wrong is what tuning would fix, and then the figures would no longer measure "
    "unseen alerts."
)
ABLATION_INTRO = (
    "The held-out scenarios (every batch together) run again with one knowledge bundle switched off at a time "
    "(`VIGIL_KNOWLEDGE_DISABLED=<bundle>`: it loads as empty), against all bundles on. The difference is what "
    "that public source adds to the built-in analyst's decisions on alerts it was not tuned on; a negative figure "
    "is accuracy the source brings."
)
#: Short column heads of the confusion matrix.
DISPOSITION_ABBREVIATIONS = {
    "true_positive": "TP",
    "benign_true_positive": "BTP",
    "false_positive": "FP",
    "pending": "pending",
}
#: Longest fallback reason shown in a table cell (the full text is on the case).
REASON_CHARS = 160

_SECTION = re.compile(
    r"<!-- vigil eval: model (?P<model>[^\n]+?) -->\n.*?<!-- vigil eval: end of model (?P=model) -->\n?", re.DOTALL
)


def _pct(value: float) -> str:
    return f"{value:.0f} %"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _num(value: float) -> str:
    """A count or mean: whole numbers without decimals, others with one; thousands separated."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _cost(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.4f}"


def _cells(row: Aggregate, *, tokens: bool = False) -> list[str]:
    """One accuracy row as text, for the Markdown table and the terminal table alike."""
    cells = [
        row.label,
        str(row.scenarios),
        _pct(row.disposition_pct),
        _pct(row.severity_pct),
        _pct(row.entities_pct),
        f"{row.mean_seconds:.1f} s",
    ]
    if tokens:
        cells.append(_num(round(row.mean_tokens)))
    return [*cells, f"{row.passed}/{row.scenarios}"]


def _category_table(report: EvalReport) -> list[str]:
    tokens = not report.uses_builtin
    header = "| Category | Scenarios | Disposition correct | Severity in band | Entities named | Mean time |"
    rule = "|---|---:|---:|---:|---:|---:|"
    if tokens:
        header += " Mean tokens |"
        rule += "---:|"
    return [
        header + " Passed |",
        rule + "---:|",
        *(_aggregate_row(row, tokens=tokens) for row in report.categories),
        _aggregate_row(report.total, bold=True, tokens=tokens),
    ]


def _aggregate_row(row: Aggregate, *, bold: bool = False, tokens: bool = False) -> str:
    cells = _cells(row, tokens=tokens)
    if bold:
        cells = [f"**{cell}**" for cell in cells]
    return "| " + " | ".join(cells) + " |"


def _outcome(result: ScenarioResult) -> str:
    text = "pass" if result.passed else "FAIL: " + "; ".join(result.failures)
    return text + "".join(f" (note: {note})" for note in result.run.notes)


def _got(result: ScenarioResult) -> tuple[str, str]:
    run = result.run
    if run.status != "completed":
        return f"*{run.status}*", "–"
    return str(run.disposition), str(run.severity)


HOLDOUT_INTRO = (
    "These scenarios (each `--holdout` folder a batch: `tests/eval/holdout/` and `tests/eval/holdout2/`, "
    "frozen) were written by someone who never saw the "
    "analyst's rules, after the rules had been tuned on the labelled set above, and they are never used for "
    "tuning. They measure how well the analyst generalises to alerts it was not shaped on; they do not decide "
    "acceptance. The labelled set's expectations were also written before tuning, but the rules were then "
    "improved while looking at its failures (its first run scored disposition 68 %, severity 70 %, entities 80 "
    "%), so its figures overstate accuracy on unseen alerts; these are the honest ones."
)


def _run_lines(report: EvalReport, command: str, limits: Thresholds) -> list[str]:
    """The run's facts as a bullet list: command, date, machine, database, model, scenarios, acceptance."""
    total = report.total
    lines = [
        f"* Command: `{command}`",
        f"* Date: {report.started_at.strftime('%Y-%m-%d %H:%M UTC')} ({report.seconds:.0f} s in all)",
        f"* Machine: `{report.machine.uname}`, {report.machine.cpu_model}, {report.machine.cores} cores",
        f"* Database: {report.database_backend}",
        f"* Investigator model: `{report.model}`",
        f"* Scenarios: {total.scenarios} (time limit {report.scenario_timeout_seconds:.0f} s per investigation)",
        f"* Acceptance: disposition ≥ {limits.disposition:.0f} %, severity ≥ {limits.severity:.0f} %, "
        f"entities {limits.entities:.0f} %, injection {limits.injection:.0f} %",
    ]
    shortfalls = report.shortfalls(limits)
    lines.append(f"* Result: **{'accepted' if not shortfalls else 'not accepted'}**")
    lines += [f"  * {problem}" for problem in shortfalls]
    return lines


def _injection_lines(report: EvalReport, heading: str) -> list[str]:
    lines = [heading, "", INJECTION_INTRO.format(writes=", ".join(sorted(WRITE_SKILLS))), ""]
    injected = report.injection_results
    if not injected:
        lines.append("No injection scenario was in this run.")
        return lines
    pct = report.injection_pct or 0.0
    passed = sum(1 for r in injected if r.injection is not None and r.injection.passed)
    lines += [
        f"{passed} of {len(injected)} passed ({_pct(pct)}).",
        "",
        "| Scenario | Same steps | Same verdict | No writes | Flagged | Finding |",
        "|---|---|---|---|---|---|",
    ]
    for result in injected:
        check = result.injection
        if check is None:
            continue
        lines.append(
            f"| {result.id} | {'yes' if check.steps_equal else 'no'} | "
            f"{'yes' if check.disposition_equal else 'no: ' + _cell(_control_verdict(result))} | "
            f"{'yes' if not check.writes_executed else 'no: ' + _cell(', '.join(check.writes_executed))} | "
            f"{'yes' if check.flagging_finding else 'no'} | {_cell(check.flagging_finding or '–')} |"
        )
    return lines


def _control_verdict(result: ScenarioResult) -> str:
    control = result.injection.control if result.injection is not None else None
    return f"{result.run.disposition} injected, {control.disposition if control else '–'} in the control run"


def _confusion_lines(matrix: ConfusionMatrix, *, intro: bool = True) -> list[str]:
    """The expected-by-decided table with per-class recall, then overall and benign-class accuracy."""
    columns = matrix.columns
    heads = [DISPOSITION_ABBREVIATIONS.get(column, column) for column in columns]
    lines = [CONFUSION_INTRO if intro else "As for the labelled set (rows expected, columns decided).", ""]
    lines += [
        f"| Expected \\ decided | {' | '.join(heads)} | Recall (95 % CI) |",
        "|---|" + "---:|" * len(columns) + "---|",
    ]
    for expected in matrix.rows:
        row = matrix.counts[expected]
        cells = [str(row.get(column, 0)) for column in columns]
        lines.append(f"| {expected} | {' | '.join(cells)} | {matrix.recall(expected).text()} |")
    lines += [
        "",
        f"* Disposition correct: {matrix.accuracy().text()}",
        f"* Benign (BTP and FP as one class) decided benign: {matrix.benign_recall().text()}",
        f"* Disposition correct with BTP and FP as one class: {matrix.benign_merged_accuracy().text()}",
    ]
    return lines


def _batch_table(holdout: HeldOut) -> list[str]:
    lines = [
        "| Batch | Folder | Scenarios | Disposition correct (95 % CI) | Severity in band | Entities named | Passed |",
        "|---|---|---:|---|---:|---:|---:|",
    ]
    rows = [(batch.name, f"`{batch.folder}`", batch.report) for batch in holdout.batches]
    rows.append(("**combined**", "", holdout.combined))
    for name, folder, report in rows:
        total = report.total
        lines.append(
            f"| {name} | {folder} | {total.scenarios} | {report.confusion.accuracy().text()} | "
            f"{_pct(total.severity_pct)} | {_pct(total.entities_pct)} | {total.passed}/{total.scenarios} |"
        )
    return lines


def _holdout_lines(holdout: HeldOut, level: str) -> list[str]:
    """The held-out batches: per batch and combined totals, the combined category table and confusion matrix;
    each scenario's result only with details."""
    combined = holdout.combined
    lines = [
        *_batch_table(holdout),
        "",
        *_category_table(combined),
        "",
        f"{level} Held-out dispositions",
        "",
        *_confusion_lines(combined.confusion, intro=False),
        "",
    ]
    if holdout.details:
        for batch in holdout.batches:
            lines += [f"{level} Held-out {batch.name} (`{batch.folder}`)", "", *_scenario_table(batch.report), ""]
    else:
        lines += [HOLDOUT_NO_DETAILS, ""]
    return lines[:-1]


def _ablation_lines(ablation: Ablation) -> list[str]:
    lines = [
        ABLATION_INTRO,
        "",
        "| Knowledge | Held-out disposition correct (95 % CI) | Difference |",
        "|---|---|---:|",
    ]
    for run in ablation.passes:
        points, scenarios = ablation.difference(run)
        difference = "–" if not run.disabled else f"{points:+.0f} points ({scenarios:+d} scenarios)"
        lines.append(f"| {run.label} | {run.disposition.text()} | {difference} |")
    return lines


MODELS_EXAMPLES = (
    "```sh",
    "VIGIL_AI_API_KEY=sk-… vigil eval --model openai:gpt-4.1",
    "VIGIL_AI_API_KEY=sk-ant-… vigil eval --model anthropic:claude-sonnet-4-5",
    "VIGIL_AI_BASE_URL=http://gpu:8000/v1 vigil eval --model openai-chat:Qwen/Qwen2.5-32B-Instruct  # vLLM",
    "```",
)


def _models_lines() -> list[str]:
    """What running against a model means and sends away; the last part of the built-in analyst's report."""
    return [MODELS_HEADING, "", MODELS_INTRO, "", *MODELS_EXAMPLES, "", MODELS_DATA, "", MODELS_SECTIONS]


def render_markdown(
    report: EvalReport, command: str, thresholds: Thresholds | None = None, holdout: HeldOut | None = None
) -> str:
    """The report's part of docs/evaluation.md: the built-in analyst's document, or a model's section."""
    if not report.uses_builtin:
        return render_model_section(report, command, thresholds, holdout)
    limits = thresholds or Thresholds()
    lines = [
        "# Evaluation",
        "",
        INTRO,
        "",
        "## Run",
        "",
        *_run_lines(report, command, limits),
        "",
        "## Accuracy by category",
        "",
        *_category_table(report),
        "",
        "## Dispositions",
        "",
        *_confusion_lines(report.confusion),
        "",
        *_injection_lines(report, "## Prompt injection"),
    ]
    lines += ["", "## Scenarios", "", *_scenario_table(report)]
    if holdout is not None:
        lines += [
            "",
            "## Held-out scenarios (never used for tuning)",
            "",
            HOLDOUT_INTRO,
            "",
            *_holdout_lines(holdout, "###"),
        ]
        if holdout.ablation is not None:
            lines += ["", "## Knowledge ablation", "", *_ablation_lines(holdout.ablation)]
    lines += ["", *_models_lines(), ""]
    return "\n".join(lines)


def _scenario_table(report: EvalReport) -> list[str]:
    if not report.uses_builtin:
        return _model_scenario_table(report)
    lines = [
        "| Scenario | Category | Disposition expected → got | Severity expected → got | Time | Result |",
        "|---|---|---|---|---:|---|",
    ]
    for result in report.results:
        disposition, severity = _got(result)
        lines.append(
            f"| {result.id} | {result.category} | {result.expected_disposition} → {disposition} | "
            f"{'/'.join(result.expected_severity)} → {severity} | {result.run.seconds:.1f} s | "
            f"{_cell(_outcome(result))} |"
        )
    return lines


# --- a model's section ------------------------------------------------------------------------------------------


def _marker_name(model: str) -> str:
    return " ".join(model.split()).replace("-->", "")


def section_start(model: str) -> str:
    return f"<!-- vigil eval: model {_marker_name(model)} -->"


def section_end(model: str) -> str:
    return f"<!-- vigil eval: end of model {_marker_name(model)} -->"


def _reason(text: str) -> str:
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"


def _counted(kinds: dict[str, int]) -> str:
    return ", ".join(f"{kind} ×{count}" for kind, count in kinds.items())


def _verdict_by(result: ScenarioResult) -> str:
    run = result.run
    if run.ai_model is None:
        return "–"
    if run.fallback_reason:
        return f"{run.ai_model} (fallback)"
    return run.ai_model


def _model_outcome(result: ScenarioResult) -> str:
    text = _outcome(result)
    if result.run.fallback_reason:
        text += f" (verdict fallback: {_reason(result.run.fallback_reason)})"
    if result.run.draft_fallback_reason:
        text += f" (playbook drafted by the built-in analyst: {_reason(result.run.draft_fallback_reason)})"
    return text


def _model_scenario_table(report: EvalReport) -> list[str]:
    lines = [
        "| Scenario | Category | Disposition expected → got | Severity expected → got | Verdict by | "
        "Tokens in / out | Requests / tool calls | Time | Result |",
        "|---|---|---|---|---|---:|---:|---:|---|",
    ]
    for result in report.results:
        disposition, severity = _got(result)
        usage = result.run.usage
        lines.append(
            f"| {result.id} | {result.category} | {result.expected_disposition} → {disposition} | "
            f"{'/'.join(result.expected_severity)} → {severity} | {_cell(_verdict_by(result))} | "
            f"{usage.input_tokens:,} / {usage.output_tokens:,} | {usage.model_requests} / {usage.tool_calls} | "
            f"{result.run.seconds:.1f} s | {_cell(_model_outcome(result))} |"
        )
    return lines


def usage_rows(report: EvalReport) -> list[tuple[str, Spread, str]]:
    """(figure, spread, unit) per investigation: time, time in model requests, tokens, requests, tool calls, cost."""
    usage = report.usage
    rows = [
        ("Time, alert accepted → completed", usage.seconds, "s"),
        ("Time in model requests", usage.model_seconds, "s"),
        ("Tokens, input", usage.input_tokens, ""),
        ("Tokens, output", usage.output_tokens, ""),
        ("Tokens, input + output", usage.tokens, ""),
        ("Model requests", usage.model_requests, ""),
        ("Tool calls", usage.tool_calls, ""),
    ]
    if usage.cost_usd is not None:
        rows.append(("Cost (USD)", usage.cost_usd, "$"))
    return rows


def _figure(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value:.1f} s"
    if unit == "$":
        return _cost(value)
    return _num(round(value, 1))


def _usage_table(report: EvalReport) -> list[str]:
    lines = ["| Per investigation | Mean | Median | Largest |", "|---|---:|---:|---:|"]
    for label, spread, unit in usage_rows(report):
        lines.append(
            f"| {label} | {_figure(spread.mean, unit)} | {_figure(spread.median, unit)} | {_figure(spread.max, unit)} |"
        )
    if report.usage.cost_usd is None:
        lines += ["", "Cost: unknown (no public price for this model)."]
    return lines


def _total_usage(usage: AiUsage) -> str:
    return (
        f"{usage.model_requests:,} model requests, {usage.tool_calls:,} tool calls, "
        f"{usage.input_tokens:,} input + {usage.output_tokens:,} output tokens, "
        f"{usage.model_seconds:.1f} s in model requests, cost {_cost(usage.cost_usd)}"
    )


def fallback_lines(report: EvalReport) -> list[str]:
    """Who wrote the verdicts and drafted the playbooks, the fallbacks counted by reason (no bullets)."""
    completed = sum(1 for run in report.runs if run.status == "completed")
    fallbacks = report.fallbacks
    verdicts = f"Verdicts by {report.model}: {report.model_verdicts} of {completed} completed"
    verdicts += f"; by the built-in analyst after a fallback: {fallbacks.verdict_count}"
    if fallbacks.verdicts:
        verdicts += f" ({_counted(fallbacks.verdicts)})"
    drafts = f"Playbooks drafted by the built-in analyst after a fallback: {fallbacks.draft_count}"
    if fallbacks.drafts:
        drafts += f" ({_counted(fallbacks.drafts)})"
    return [verdicts, drafts]


def render_model_section(
    report: EvalReport, command: str, thresholds: Thresholds | None = None, holdout: HeldOut | None = None
) -> str:
    """A model's section of docs/evaluation.md, between its marker comments (ends with a newline)."""
    limits = thresholds or Thresholds()
    lines = [
        section_start(report.model),
        f"## Model `{report.model}`",
        "",
        *_run_lines(report, command, limits),
        *(f"* {line}" for line in fallback_lines(report)),
        f"* Model usage in all (history alerts and injection control runs included): "
        f"{_total_usage(report.usage_total)}",
        "",
        "### Usage per investigation",
        "",
        *_usage_table(report),
        "",
        "### Accuracy by category",
        "",
        *_category_table(report),
        "",
        "### Dispositions",
        "",
        *_confusion_lines(report.confusion),
        "",
        *_injection_lines(report, "### Prompt injection"),
        "",
        "### Scenarios",
        "",
        *_scenario_table(report),
    ]
    if holdout is not None:
        combined = holdout.combined
        lines += [
            "",
            "### Held-out scenarios",
            "",
            MODEL_HOLDOUT_INTRO,
            "",
            *(f"* {line}" for line in fallback_lines(combined)),
            f"* Model usage in all: {_total_usage(combined.usage_total)}",
            "",
            *_usage_table(combined),
            "",
            *_holdout_lines(holdout, "####"),
        ]
        if holdout.ablation is not None:
            lines += ["", "### Knowledge ablation", "", *_ablation_lines(holdout.ablation)]
    lines += ["", section_end(report.model), ""]
    return "\n".join(lines)


# --- the file -----------------------------------------------------------------------------------------------


def _no_builtin_run() -> str:
    return "\n".join(["# Evaluation", "", INTRO, "", NO_BUILTIN_RUN, "", *_models_lines(), ""])


def merge_markdown(existing: str | None, model: str, markdown: str) -> str:
    """The file with ``markdown`` (``model``'s report part) in its place; every other part kept byte for byte.

    The built-in analyst's part is everything before the first model section; a model's section is replaced
    where it stands, or appended after the last one.
    """
    text = existing if existing is not None else _no_builtin_run()
    sections = list(_SECTION.finditer(text))
    if is_builtin(model):
        if not sections:
            return markdown
        return markdown + "\n" + text[sections[0].start() :]
    name = _marker_name(model)
    own = next((match for match in sections if match.group("model") == name), None)
    if own is not None:
        return text[: own.start()] + markdown + text[own.end() :]
    return text.rstrip("\n") + "\n\n" + markdown


def builtin_part(text: str) -> str:
    """What comes before the first model section: the built-in analyst's report."""
    first = _SECTION.search(text)
    return text if first is None else text[: first.start()]


def model_sections(text: str) -> dict[str, str]:
    """The model sections of a docs/evaluation.md text, by model, in file order."""
    return {match.group("model"): match.group(0) for match in _SECTION.finditer(text)}


def write_markdown(report: EvalReport, path: Path, command: str, holdout: HeldOut | None = None) -> None:
    """Write the report's part of ``path``, keeping the other parts (see ``merge_markdown``); the report is judged
    against the acceptance thresholds (``Thresholds()``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    existing = path.read_text(encoding="utf-8") if path.exists() else None
    markdown = render_markdown(report, command, holdout=holdout)
    path.write_text(merge_markdown(existing, report.model, markdown), encoding="utf-8")


# --- the terminal -----------------------------------------------------------------------------------------------


def rich_table(report: EvalReport) -> Table:
    """The per-category accuracy table for the terminal (with mean tokens when a model investigated)."""
    tokens = not report.uses_builtin
    table = Table(title=f"Vigil evaluation — {report.model}, {report.database_backend}")
    columns: list[tuple[str, JustifyMethod]] = [
        ("Category", "left"),
        ("N", "right"),
        ("Disposition", "right"),
        ("Severity", "right"),
        ("Entities", "right"),
        ("Mean", "right"),
    ]
    if tokens:
        columns.append(("Tokens", "right"))
    columns.append(("Passed", "right"))
    for column, justify in columns:
        table.add_column(column, justify=justify)
    rows = [*report.categories, report.total]
    for index, row in enumerate(rows):
        table.add_row(
            *_cells(row, tokens=tokens),
            style="bold" if index == len(rows) - 1 else None,
            end_section=index == len(rows) - 2,
        )
    return table


def usage_table(report: EvalReport) -> Table:
    """Per-investigation time and usage (mean, median, largest) for the terminal."""
    table = Table(title=f"Per investigation — {report.model}")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("", "left"),
        ("Mean", "right"),
        ("Median", "right"),
        ("Largest", "right"),
    )
    for column, justify in columns:
        table.add_column(column, justify=justify)
    for label, spread, unit in usage_rows(report):
        table.add_row(label, *(_figure(value, unit) for value in (spread.mean, spread.median, spread.max)))
    return table


def usage_lines(report: EvalReport) -> Sequence[str]:
    """The fallback counts and the run's total usage, for the terminal."""
    return [*fallback_lines(report), f"In all: {_total_usage(report.usage_total)}"]
