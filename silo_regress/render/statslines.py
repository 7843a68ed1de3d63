"""The stats gate in words: the suite line, pass^k, and one line per task by tier."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from silo_regress.stats.intervals import Interval
    from silo_regress.stats.tally import Tally
    from silo_regress.stats.verdicts import StatsJudgement, SuiteDecision, TaskJudgement

Paint = Callable[..., str]


def _plain(text: str, *styles: str) -> str:
    return text


def percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def show_p(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def _side(tally: Tally | None, interval: Interval | None) -> str:
    if tally is None:
        return "none"
    shown = f"{tally.passed}/{tally.rollouts}"
    if interval is not None:
        shown += f" [{percent(interval.low)}, {percent(interval.high)}]"
    return shown


def suite_lines(suite: SuiteDecision, *, paint: Paint = _plain) -> list[str]:
    """The suite decision, its movers and the suite pass^k, baseline beside candidate."""
    from silo_regress.stats.verdicts import SuiteVerdict

    if suite.verdict is SuiteVerdict.NOT_TESTED:
        why = "suite-gate is off" if suite.gate.value == "off" else "no task with both tallies"
        return [f"suite: not tested ({why})"]
    colour = {"suite-regression": "red", "suite-improvement": "green"}.get(suite.verdict.value)
    word = suite.verdict.value
    if suite.verdict is SuiteVerdict.REGRESSION and not suite.failed:
        word += " (warning: suite-gate = warn)"
    lines = [
        f"{paint(word, *(colour,) if colour else ())}: {_tasks(suite.tasks)}, "
        f"{suite.down} fell and {suite.up} rose; suite pass rate {percent(suite.base_rate)} "
        f"-> {percent(suite.cand_rate)} (p = {show_p(suite.p_decline)}, exact stratified test; "
        f"smallest task p x {suite.tasks} = {show_p(suite.p_task)}; "
        f"sign test p = {show_p(suite.sign_p)})"
    ]
    if suite.movers and suite.verdict is SuiteVerdict.REGRESSION:
        moved = ", ".join(
            f"{m.task} {percent(m.base_rate)} -> {percent(m.cand_rate)}" for m in suite.movers
        )
        lines.append(f"  fell most: {moved}")
    curves = (suite.baseline_curve, suite.candidate_curve)
    if suite.candidate_curve:
        first = suite.candidate_curve[0]
        top = max(len(c) for c in curves)
        lines.append(
            f"  pass^k, k = 1..{top} ({_tasks(first.tasks)}; "
            f"{suite.base_rollouts} -> {suite.cand_rollouts} rollouts; a task counts for k "
            "up to its rollouts):"
        )
        for name, curve in zip(("baseline ", "candidate"), curves, strict=True):
            lines.append(f"    {name} " + " ".join(_number(p.value) for p in curve))
    return lines


def _tasks(count: int) -> str:
    return f"{count} task{'s' * (count != 1)}"


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def task_line(task: TaskJudgement, *, paint: Paint = _plain) -> list[str]:
    """One task: tier, counts with intervals, p-values, what would decide it, checks."""
    from silo_regress.stats.verdicts import Reason, Tier

    colours = {
        Tier.REGRESSION: ("red", "bold"),
        Tier.SUSPECT: ("yellow",),
        Tier.IMPROVEMENT: ("green",),
        Tier.INSUFFICIENT_DATA: ("yellow",),
        Tier.UNRELIABLE_BASELINE: ("yellow",),
        Tier.UNDECIDED: ("yellow",),
    }
    head = f"{paint(task.tier.value, *colours.get(task.tier, ()))}  {task.task}  "
    head += f"{_side(task.baseline, task.baseline_interval)} -> "
    head += _side(task.candidate, task.candidate_interval)
    sequential = Reason.DECIDED_SEQUENTIALLY in task.reasons or Reason.UNDECIDED in task.reasons
    if task.p_decline is not None and sequential:
        # Its tier is the sequential test's; a fixed-sample p beside it would contradict it.
        head += f"  (fixed-sample p = {show_p(task.p_decline)}; the sequential test judges it)"
    elif task.p_decline is not None:
        head += f"  p = {show_p(task.p_decline)} (Holm {show_p(task.p_adjusted)})"
    if task.pass_hat_k is not None and task.pass_hat_k.k > 1:
        k = task.pass_hat_k
        head += f"  pass^{k.k} {_number(k.baseline)} -> {_number(k.candidate)}"
    lines = [head]
    notes = {
        Reason.BASELINE_MISSING: "no baseline tally: record one with "
        f"`silo-regress record --repeat N {task.task}`",
        Reason.BASELINE_TOO_SMALL: "the baseline tally has too few rollouts to trust",
        Reason.CANDIDATE_MISSING: "no rollout of this check left a result",
        Reason.CANNOT_DECLINE: "the baseline never passed: it cannot decline",
        Reason.CHECK_DECLINED: "a check fell though `passed` did not",
        Reason.UNDECIDED: "its sequential test was still undecided at --max-repeat",
        Reason.DECIDED_SEQUENTIALLY: "decided by its sequential test after "
        f"{task.candidate.rollouts if task.candidate else 0} rollouts",
        Reason.RESULT_CHANGED: "fails: a rollout's result.json changed after it was counted "
        f"({', '.join(task.changed[:_NAMED])}); check again",
        Reason.JUDGED_IN_CI: "pass rate judged in CI (check --run)",
    }
    lines += [f"  {notes[r]}" for r in task.reasons]
    if task.without_result:
        shown = ", ".join(task.without_result[:_NAMED])
        more = len(task.without_result) - _NAMED
        lines.append(
            f"  {len(task.without_result)} rollout{'s' * (len(task.without_result) != 1)} "
            f"left no result and counted as failed ({shown}"
            + (f" and {more} more)" if more > 0 else ")")
        )
    if task.retried:
        lines.append(
            f"  {task.retried} rollout{'s' * (task.retried != 1)} without a result run again "
            "(retry-incomplete); the retries are counted in their place"
        )
    if task.tier is Tier.INSUFFICIENT_DATA and task.candidate is not None:
        need = task.needed_rollouts
        lines.append(
            f"  even 0 of {task.candidate.rollouts} could not be significant against this "
            + (f"baseline; {need} rollouts could (--repeat {need})" if need else "baseline")
        )
    elif task.tier is Tier.SUSPECT and task.needed_rollouts is not None:
        lines.append(
            f"  about {task.needed_rollouts} rollouts at this rate would decide it "
            f"(--repeat {task.needed_rollouts})"
        )
    if task.below_floor:
        lines.append(paint("  below the min-pass-hat-k floor", "red"))
    if task.underpowered:
        lines.append(paint("  fails: --require-power asks for rollouts that could decide", "red"))
    for check in task.declined_checks:
        lines.append(
            f"  check {check.label!r}: {check.base_passed}/{check.base_rollouts} -> "
            f"{check.cand_passed}/{check.cand_rollouts} (p = {show_p(check.p_decline)})"
        )
    if task.renamed_checks:
        lines.append(f"  checks on one side only: {', '.join(task.renamed_checks)}")
    return lines


def stats_lines(judgement: StatsJudgement, *, paint: Paint = _plain) -> list[str]:
    """The whole stats section: the suite first, then every task not merely stable."""
    from silo_regress.stats.verdicts import Tier

    if judgement.policy.judged_in_ci:
        # The hook starts no rollouts: the summary's one line says so; only the tasks
        # that fail it (a missing tally) get lines of their own.
        lines: list[str] = []
        for task in judgement.tasks:
            if task.failed:
                lines += task_line(task, paint=paint)
        return lines
    alpha = judgement.policy.alpha
    design = "sequential tests" if judgement.policy.sequential else "then tasks with Holm"
    lines = [f"stats gate (alpha {alpha:g} for the whole check: the suite, {design})"]
    if judgement.policy.sequential:
        used = ", ".join(
            f"{t.task} {t.candidate.rollouts if t.candidate else 0}" for t in judgement.tasks
        )
        lines.append(
            "sequential (--repeat-until-decided): each task stopped once its test decided, "
            f"at alpha {alpha:g} / (2 x {len(judgement.tasks)}); the suite tested at "
            f"{judgement.policy.suite_alpha:g} on every rollout made; rollouts used: {used}"
        )
    lines += suite_lines(judgement.suite, paint=paint)
    stable = [t for t in judgement.tasks if t.tier is Tier.STABLE and not t.failed]
    for task in judgement.tasks:
        if task in stable and not task.declined_checks and not task.renamed_checks:
            continue
        lines += task_line(task, paint=paint)
    if stable:
        lines.append(f"{len(stable)} task{'s' * (len(stable) != 1)} stable")
    if judgement.not_decided:
        lines.append(
            paint("not decided: no test could judge any stats task; the check fails", "red")
        )
    elif judgement.undecided:
        lines.append(f"{_tasks(len(judgement.undecided))} not decided (see above)")
    return lines


_NAMED = 12


def task_sentence(task: TaskJudgement) -> str:
    """One line for an annotation or a test case: tier, counts, p."""
    base = f"{task.baseline.passed}/{task.baseline.rollouts}" if task.baseline else "no tally"
    cand = f"{task.candidate.passed}/{task.candidate.rollouts}" if task.candidate else "none"
    text = f"{task.task} {task.tier.value}: passed {base} -> {cand}"
    if task.p_decline is not None:
        text += f" (p = {show_p(task.p_decline)}, Holm {show_p(task.p_adjusted)})"
    if task.below_floor:
        text += "; below the min-pass-hat-k floor"
    return text


def suite_sentence(suite: SuiteDecision) -> str:
    text = (
        f"{suite.verdict.value}: suite pass rate {percent(suite.base_rate)} -> "
        f"{percent(suite.cand_rate)} over {_tasks(suite.tasks)} (p = {show_p(suite.p_decline)})"
    )
    if suite.movers:
        text += "; fell most: " + ", ".join(m.task for m in suite.movers)
    return text


def markdown_lines(judgement: StatsJudgement) -> list[str]:
    """The stats section of the Markdown report: the suite, pass^k both sides, the tasks."""
    from silo_regress.stats.verdicts import Tier

    suite = judgement.suite
    out = ["### Stats gate", "", suite_sentence(suite), ""]
    if suite.candidate_curve:
        ks = [p.k for p in suite.candidate_curve]
        out += [
            "| | " + " | ".join(f"pass^{k}" for k in ks) + " |",
            "|---|" + "---|" * len(ks),
        ]
        for name, curve in (
            ("baseline", suite.baseline_curve),
            ("candidate", suite.candidate_curve),
        ):
            values = {p.k: _number(p.value) for p in curve}
            out.append(f"| {name} | " + " | ".join(values.get(k, "n/a") for k in ks) + " |")
        out.append("")
    shown = [t for t in judgement.tasks if t.tier is not Tier.STABLE or t.failed]
    if shown:
        out += ["| task | tier | baseline | candidate | p (Holm) |", "|---|---|---|---|---|"]
        for task in shown:
            p = f"{show_p(task.p_decline)} ({show_p(task.p_adjusted)})"
            out.append(
                f"| {task.task} | {task.tier.value}{' (below floor)' * task.below_floor} | "
                f"{_side(task.baseline, task.baseline_interval)} | "
                f"{_side(task.candidate, task.candidate_interval)} | {p} |"
            )
        out.append("")
    stable = len(judgement.tasks) - len(shown)
    if stable:
        out += [f"{_tasks(stable)} stable.", ""]
    return out
