"""The summary every report opens with: counts by direction, scores before -> after,
one line per task that needs a look (regressions first), and notes shared by tasks.

Values in, values out: text, Markdown and HTML each lay these out their own way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from silo_regress.judging.direction import REVIEW_ORDER, Direction, Totals, review_rank, total
from silo_regress.judging.outcome import Outcome, Report, Verdict
from silo_regress.render.wording import one_line, word, words

if TYPE_CHECKING:
    from silo_regress.stats.verdicts import StatsJudgement


@dataclass(frozen=True)
class TaskLine:
    """One task that needs a look: its direction (or verdict) and what changed."""

    label: str
    kind: str  # "regression", ..., or a verdict such as "missing-run"
    direction: Direction | None
    what: str
    outcomes: tuple[Outcome, ...]


@dataclass(frozen=True)
class SharedNote:
    """A behaviour note that reads the same in several tasks."""

    text: str
    artifact: str
    tasks: tuple[str, ...]


@dataclass(frozen=True)
class Summary:
    counts: tuple[tuple[str, int], ...]  # ("regression", 2), ..., ("match", 9) by task
    totals: Totals | None
    lines: tuple[TaskLine, ...]
    shared: tuple[SharedNote, ...]
    tasks: int


def summarize_report(report: Report) -> Summary:
    grouped: dict[str, list[Outcome]] = {}
    for outcome in report.outcomes:
        grouped.setdefault(outcome.task_label, []).append(outcome)
    lines: list[TaskLine] = []
    counts: dict[str, int] = {}
    for label, outcomes in grouped.items():
        failing = [o for o in outcomes if not o.ok]
        if not failing:
            counts["match"] = counts.get("match", 0) + 1
            continue
        changed = [o for o in failing if o.verdict is Verdict.CHANGED]
        direction = changed[0].direction if changed else None
        other = [o for o in failing if o.verdict is not Verdict.CHANGED]
        kind = (
            direction.value
            if direction is not None and not other
            else other[0].verdict.value
            if other
            else Verdict.CHANGED.value
        )
        counts[kind] = counts.get(kind, 0) + 1
        notes = [text for o in changed for text in words(o.behaviour)]
        notes += [o.detail or o.verdict.value for o in other]
        unique = list(dict.fromkeys(notes))
        lines.append(TaskLine(label, kind, direction, one_line(unique), tuple(failing)))
    lines.sort(key=lambda line: (line.direction is None, review_rank(line.direction)))
    order = [d.value for d in REVIEW_ORDER]
    ranked = sorted(counts.items(), key=lambda kv: (kv[0] == "match", _rank(kv[0], order)))
    # Under --repeat an outcome stands for several rollouts, each scored on its own.
    pairs = [o.scores for o in report.outcomes if o.scores is not None for _ in o.repeats or (0,)]
    return Summary(
        counts=tuple(ranked),
        totals=total(pairs) if pairs else None,
        lines=tuple(lines),
        shared=tuple(shared_notes(report.outcomes)),
        tasks=len(grouped),
    )


def _rank(kind: str, order: list[str]) -> int:
    return order.index(kind) if kind in order else len(order)


def shared_notes(outcomes: Iterable[Outcome]) -> list[SharedNote]:
    """Notes worded identically in two or more tasks, in first-seen order."""
    seen: dict[tuple[str, str], list[str]] = {}
    for outcome in outcomes:
        if outcome.verdict is not Verdict.CHANGED:
            continue
        for note in outcome.behaviour:
            tasks = seen.setdefault((outcome.artifact, word(note)), [])
            label = outcome.task_label
            if label not in tasks:
                tasks.append(label)
    return [
        SharedNote(text=text, artifact=artifact, tasks=tuple(tasks))
        for (artifact, text), tasks in seen.items()
        if len(tasks) > 1
    ]


def counts_phrase(summary: Summary) -> str:
    """``1 regression, 1 drift, 4 match (6 tasks)``."""
    parts = ", ".join(f"{n} {kind}" for kind, n in summary.counts)
    return f"{parts} ({summary.tasks} task{'s' * (summary.tasks != 1)})"


def scored_unit(report: Report) -> str:
    """What the totals count: tasks, or rollouts under check --run --repeat N."""
    return "task" if report.repeat is None else "rollout"


def scores_phrase(totals: Totals | None, *, per: str = "task") -> str | None:
    """``pass rate 6/6 -> 5/6, total reward 6 -> 5.33 (6 tasks with results)``.

    ``per`` names what was scored: ``rollout`` for check --run --repeat N.
    """
    if totals is None or not totals.tasks:
        return None

    def rate(passed: int, scored: int) -> str:
        return f"{passed}/{scored}" if scored else "-"

    def reward(value: float) -> str:
        return f"{value:.4g}"

    return (
        f"pass rate {rate(totals.passed_before, totals.scored_before)} -> "
        f"{rate(totals.passed_after, totals.scored_after)}, total reward "
        f"{reward(totals.reward_before)} -> {reward(totals.reward_after)} "
        f"over {totals.tasks} {per}{'s' * (totals.tasks != 1)} with results"
    )


def uncovered_lines(report: Report) -> list[str]:
    """One footer line per kind of thing the check did not judge (``Report.uncovered``)."""
    gaps = report.uncovered
    out: list[str] = []
    if gaps.tasks:
        n = len(gaps.tasks)
        out.append(
            f"not covered: {n} task{'s' * (n != 1)} with runs but no baseline: "
            f"{_listed(gaps.tasks)} (record {'them' if n != 1 else 'it'} with "
            "`silo-regress record TASK`)"
        )
    by_artifact: dict[str, list[str]] = {}
    for task, artifact in gaps.artifacts:
        by_artifact.setdefault(artifact, []).append(task)
    if by_artifact:
        parts = [
            f"{artifact} for {len(tasks)} task{'s' * (len(tasks) != 1)} ({_listed(tasks)})"
            for artifact, tasks in by_artifact.items()
        ]
        out.append(
            f"not covered: configured artifacts with no baseline: {'; '.join(parts)} "
            "(record them with `silo-regress record TASK`)"
        )
    if gaps.environments:
        n = len(gaps.environments)
        out.append(
            f"not covered: {n} environment{'s' * (n != 1)} with runs that no baseline names: "
            f"{_listed(gaps.environments)} (record ENV/TASK, or set 'environment')"
        )
    return out


def _listed(items: Iterable[str], *, shown: int = 10) -> str:
    names = list(items)
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def headline(report: Report) -> str:
    """What the check came to, in one sentence that names what failed first.

    A stats-only check has no artifact outcomes: its headline is the suite decision and
    the tasks that fell most, never "no baselines to check". Exact and stats tasks are
    named alike: the failing kinds with their counts, the worst tasks first.
    """
    parts: list[str] = []
    stats = report.stats
    if stats is not None:
        parts += _stats_parts(stats)
    lines = summarize_report(report).lines
    if lines:
        kinds: dict[str, list[str]] = {}
        for line in lines:
            kinds.setdefault(line.kind, []).append(line.label)
        for kind, labels in kinds.items():
            n = len(labels)
            parts.append(f"{kind} in {n} task{'s' * (n != 1)}: {_listed(labels, shown=3)}")
    if stats is not None and stats.not_decided and not stats.failed and not lines:
        # Never "passed", never "failed" for what no test judged: it was not decided.
        n = len(stats.tasks)
        return f"not decided: no test could judge any of {n} stats task{'s' * (n != 1)}"
    if stats is not None and stats.undecided and not stats.not_decided:
        n = len(stats.undecided)
        parts.append(f"{n} stats task{'s' * (n != 1)} not decided")
    if report.ok:
        judged = len({(o.task, o.environment) for o in report.outcomes})
        judged += len(stats.tasks) - len(stats.undecided) if stats is not None else 0
        done = f"passed: {judged} task{'s' * (judged != 1)} judged"
        return "; ".join([done, *parts]) if parts else done
    return "failed: " + ("; ".join(parts) if parts else "see the report below")


def _stats_parts(stats: StatsJudgement) -> list[str]:
    """The suite decision, then the stats tasks that failed, the biggest fall first."""
    from silo_regress.render.statslines import percent, show_p
    from silo_regress.stats.verdicts import SuiteVerdict

    parts: list[str] = []
    suite = stats.suite
    if suite.verdict is SuiteVerdict.REGRESSION:
        warned = "" if suite.failed else " (warning only: suite-gate = warn)"
        fell = ", ".join(
            f"{m.task} {percent(m.base_rate)} -> {percent(m.cand_rate)}" for m in suite.movers[:3]
        )
        parts.append(
            f"suite-regression{warned}: pass rate {percent(suite.base_rate)} -> "
            f"{percent(suite.cand_rate)} over {suite.tasks} task{'s' * (suite.tasks != 1)} "
            f"(p = {show_p(suite.p_decline)})" + (f", fell most: {fell}" if fell else "")
        )
    failed = sorted(
        (t for t in stats.tasks if t.failed),
        key=lambda t: (
            (t.candidate.rate if t.candidate else 0.0) - (t.baseline.rate if t.baseline else 0.0)
        ),
    )
    if failed:
        shown = ", ".join(
            f"{t.task} {t.baseline.passed}/{t.baseline.rollouts} -> "
            f"{t.candidate.passed}/{t.candidate.rollouts}"
            if t.baseline is not None and t.candidate is not None
            else f"{t.task} ({t.tier.value})"
            for t in failed[:3]
        )
        more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
        n = len(failed)
        parts.append(f"{n} stats task{'s' * (n != 1)} failed: {shown}{more}")
    return parts
