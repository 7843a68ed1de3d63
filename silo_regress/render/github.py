"""The check report as GitHub Actions workflow commands.

Every failing artifact becomes an ``::error`` annotation (an improvement a ``::notice``)
on its baseline file, at
the line of the first changed value, so the pull request shows it beside the
file; the full text report follows in one collapsible log group per artifact.
The Markdown summary for ``$GITHUB_STEP_SUMMARY`` is rendered by
:mod:`silo_regress.render.markdown`; the CLI appends it.
"""

from __future__ import annotations

import hashlib

from silo_regress.judging.outcome import Direction, Outcome, Report
from silo_regress.render.excerpt import first_change_line, headline
from silo_regress.render.wording import word_sides


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(outcome: Outcome) -> str:
    """One workflow command for a failing outcome: ``::error``, but ``::notice`` for an
    improvement, which is news and not a fault (GitHub paints errors red)."""
    properties: list[str] = []
    if outcome.baseline_path:
        properties.append(f"file={escape_property(outcome.baseline_path)}")
        line = first_change_line(outcome)
        if line is not None:
            properties.append(f"line={line}")
    title = f"silo-regress: {outcome.task_label} {outcome.artifact} {outcome.verdict.value}"
    properties.append(f"title={escape_property(title)}")
    message = [headline(outcome)]
    if outcome.baseline_label != outcome.baseline_path:
        # The annotation sits on the file in the checkout; its bytes came from elsewhere.
        message.append(f"baseline: {outcome.baseline_label}")
    if outcome.run_path:
        message.append(f"run: {outcome.run_path}")
    message.extend(f"- {word_sides(note)}" for note in outcome.behaviour)
    kind = "notice" if outcome.direction is Direction.IMPROVEMENT else "error"
    return f"::{kind} {','.join(properties)}::{escape_data(chr(10).join(message))}"


def _stats_annotations(report: Report) -> list[str]:
    """An ``::error`` per failing stats task (on its tally) and for a failing suite;
    ``::warning`` for what only warns (suspect, too little data, a suite that warns)."""
    from silo_regress.render.statslines import suite_sentence, task_sentence
    from silo_regress.stats.verdicts import SuiteVerdict, Tier

    assert report.stats is not None
    out = []
    suite = report.stats.suite
    if suite.verdict is SuiteVerdict.REGRESSION:
        kind = "error" if suite.failed else "warning"
        title = escape_property("silo-regress: suite-regression")
        out.append(f"::{kind} title={title}::{escape_data(suite_sentence(suite))}")
    warned = (Tier.SUSPECT, Tier.INSUFFICIENT_DATA, Tier.UNRELIABLE_BASELINE)
    for task in report.stats.tasks:
        if not task.failed and task.tier not in warned:
            continue
        kind = "error" if task.failed else "warning"
        place = f"file={escape_property(task.tally_path)}," if task.tally_path else ""
        title = escape_property(f"silo-regress: {task.task} {task.tier.value}")
        out.append(f"::{kind} {place}title={title}::" + escape_data(task_sentence(task)))
    return out


def render_github(report: Report) -> str:
    from silo_regress.render.tallies import outcome_rollouts, tally_lines
    from silo_regress.render.text import Palette, accept_hint, render_outcome, summary_line

    out: list[str] = []
    failing = [o for o in report.outcomes if not o.ok]
    out.extend(annotation(o) for o in failing)
    for outcome in failing:
        rollouts = outcome_rollouts(outcome, report)  # "" unless check --run --repeat
        body = "\n".join(render_outcome(outcome, palette=Palette(False), rollouts=rollouts))
        # Report text comes from agents: stop GitHub from reading commands in it.
        token = hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        title = f"{outcome.verdict.value}: {outcome.task_label} {outcome.artifact}"
        out += [
            f"::group::{escape_data(title)}",
            f"::stop-commands::{token}",
            body,
            f"::{token}::",
            "::endgroup::",
        ]
    if report.stats is not None:
        out += _stats_annotations(report)  # live commands, each field escaped as data
    tail = [summary_line(report, palette=Palette(False)), *tally_lines(report)]
    if report.stats is not None:
        from silo_regress.render.statslines import stats_lines

        tail += stats_lines(report.stats)
    hint = accept_hint(report)
    if hint:
        tail.append(hint)
    # The summary names the baselines' source (a shard report's baselineSource.ref
    # in a merge): no line of it may be read as a command either.
    out += _inert(tail)
    if report.uncovered:
        from silo_regress.render.summary import uncovered_lines

        # A notice each, outside the inert block: the run summary lists them without
        # failing the job, and each line is escaped as workflow data.
        out += [
            f"::notice title=silo-regress::{escape_data(line)}" for line in uncovered_lines(report)
        ]
    return "\n".join(out) + "\n"


def _inert(lines: list[str]) -> list[str]:
    """``lines`` between ``::stop-commands::`` and its token, or as they are when no
    line could be read as a workflow command."""
    body = "\n".join(lines)
    if "::" not in body:
        return lines
    token = hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return [f"::stop-commands::{token}", body, f"::{token}::"]
