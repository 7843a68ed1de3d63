"""The stats gate on a check's report: tasks with ``gate = "stats"`` or ``"both"``
are judged by their pass counts (docs/statistics.md).

Values only: :func:`apply_stats_gate` counts each gated task's candidate rollouts
(:mod:`silo_regress.judging.tallying`), reads its baseline tally from the check's
baseline source, and lets :func:`silo_regress.stats.verdicts.judge_tasks` decide the
tiers and the suite. Under ``stats`` the task's per-artifact outcomes leave the
report (a stats task never fails on a byte difference alone); under ``both`` they
stay and the byte-exact rule still holds, for the artifacts ``exact-artifacts``
names when it is set (for every artifact when not).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace

from silo_regress.judging.outcome import Report
from silo_regress.judging.tallying import count_runs
from silo_regress.judging.targets import Target
from silo_regress.project.config import Config, Gate
from silo_regress.project.taskref import TaskRef
from silo_regress.runs.index import Run, RunIndex
from silo_regress.stats.sequential import (
    Decision,
    Design,
    calibrated_design,
    size_calibrated_design,
)
from silo_regress.stats.tally import Tally, parse_tally
from silo_regress.stats.verdicts import (
    MIN_BASELINE_ROLLOUTS,
    Evidence,
    Floor,
    Policy,
    StatsJudgement,
    SuiteGate,
    judge_tasks,
)
from silo_regress.store.baselinenames import Baseline, tally_relpath
from silo_regress.store.baselines import BaselineSource

TALLY_ARTIFACT = "tally.json"
# --repeat-until-decided tests "no change" against a drop of this much in pass rate.
SEQUENTIAL_DROP = 0.15
SEQUENTIAL_BETA = 0.2


def gated_targets(config: Config, targets: Sequence[Target]) -> list[Target]:
    """The targets whose task is judged statistically (``stats`` or ``both``)."""
    return [
        t
        for t in targets
        if t.key is not None
        and not t.refused
        and not t.ambiguous
        and config.task_settings(t.ref, environment=t.key[0]).gate is not Gate.EXACT
    ]


def read_baseline_tally(source: BaselineSource, ref: TaskRef) -> Tally | None:
    """The task's baseline tally from the check's source, or None when there is none."""
    relpath = tally_relpath(ref)
    if not source.has(relpath):
        return None
    baseline = Baseline(ref, TALLY_ARTIFACT, relpath)
    return parse_tally(source.read(baseline), source=source.display_path(baseline))


def _variant_counts(report: Report, ref: TaskRef) -> dict[str, list[int]]:
    counts: dict[str, list[int]] = {}
    for outcome in report.outcomes:
        if outcome.task != ref or not outcome.ok or outcome.variant is None:
            continue
        numbers = counts.setdefault(outcome.artifact, [])
        numbers.extend([0] * (outcome.variant - len(numbers)))
        numbers[outcome.variant - 1] += len(outcome.repeats) or 1
    return counts


def policy_for(
    config: Config, floor_of: Floor | None, *, sequential: bool = False, require_power: bool = False
) -> Policy:
    return Policy(
        k=floor_of.k if floor_of is not None else 1,
        floor=floor_of,
        suite_gate=SuiteGate(config.suite_gate.value),
        sequential=sequential,
        require_power=require_power,
    )


@functools.lru_cache(maxsize=1024)
def _design(p0: float, alpha: float, round_size: int, cap: int) -> Design:
    p1, beta = p0 - SEQUENTIAL_DROP, SEQUENTIAL_BETA
    try:
        return calibrated_design(
            p0, p1, alpha=alpha, beta=beta, round_size=round_size, max_rollouts=cap
        )
    except ValueError:  # the cap is too small for the power: keep the false-alarm rate
        return size_calibrated_design(
            p0, p1, alpha=alpha, beta=beta, round_size=round_size, max_rollouts=cap
        )


def sequential_design(
    baseline: Tally | None, *, alpha: float, round_size: int, cap: int
) -> Design | None:
    """The task's sequential test, or None when it has none (no or too small a tally,
    or a baseline rate too low to drop by 0.15): such a task is judged after its first
    round by the fixed-sample rule."""
    if baseline is None or baseline.rollouts < MIN_BASELINE_ROLLOUTS:
        return None
    # A baseline that always passed is not a rate of 1: no rollout could then fail
    # without a certain regression. Half a failure is the usual shrinkage.
    p0 = min(baseline.rate, 1 - 1 / (2 * baseline.rollouts))
    if p0 - SEQUENTIAL_DROP <= 0.0:
        return None
    return _design(round(p0, 6), alpha, round_size, cap)


def decide_rounds(
    config: Config,
    source: BaselineSource,
    gated: Sequence[Target],
    made: dict[tuple[str, str], list[Run]],
    *,
    round_size: int,
    cap: int,
) -> dict[TaskRef, Decision]:
    """Each gated task's sequential decision on its rollouts so far; ``CONTINUE`` for one
    that needs more. Each test runs at alpha / (2 m) over the m gated tasks (Bonferroni),
    so the tasks' regressions together keep half the check's alpha."""
    alpha = 0.05 / (2 * max(1, len(gated)))
    decisions = {}
    for target in gated:
        assert target.key is not None
        runs = made.get(target.key, [])
        design = sequential_design(
            read_baseline_tally(source, target.ref), alpha=alpha, round_size=round_size, cap=cap
        )
        if design is None:
            continue  # judged by the fixed-sample rule on its first round
        tally = count_runs(runs, variants={}).tally
        decisions[target.ref] = design.decide(tally.passed, tally.rollouts)
    return decisions


def apply_stats_gate(
    config: Config,
    source: BaselineSource,
    index: RunIndex,
    report: Report,
    *,
    targets: Sequence[Target],
    pins: Sequence[dict[tuple[str, str], Run]] | None,
    decisions: dict[TaskRef, Decision] | None = None,
    require_power: bool = False,
) -> Report:
    """``report`` with the gated tasks judged statistically (its ``stats`` set)."""
    gated = gated_targets(config, targets)
    if not gated:
        return report
    evidence = []
    warnings = list(report.warnings)
    floors = set()
    stats_only: set[TaskRef] = set()
    # gate = "both" with exact-artifacts: the other artifacts are judged by counts only
    counted_only: set[tuple[TaskRef, str]] = set()
    for target in gated:
        assert target.key is not None  # gated_targets keeps only targets with a key
        settings = config.task_settings(target.ref, environment=target.key[0])
        if settings.gate is Gate.STATS:
            stats_only.add(target.ref)
        elif settings.exact_artifacts is not None:
            exact = set(settings.exact_artifacts)
            counted_only.update((target.ref, a) for a in settings.artifacts if a not in exact)
        if settings.min_pass_hat_k is not None:
            floors.add(settings.min_pass_hat_k)
        if pins is not None:
            runs = [pin[target.key] for pin in pins if target.key in pin]
        else:  # a check of the newest run: one rollout, judged all the same
            runs = list(index.runs_of(*target.key)[:1])
        counted = count_runs(runs, variants=_variant_counts(report, target.ref))
        if counted.without_result:
            names = ", ".join(counted.without_result)
            warnings.append(
                f"{target.ref}: {len(counted.without_result)} of {len(runs)} rollouts left no "
                f"complete result.json ({names}); judged on the other {counted.tally.rollouts}"
            )
        candidate = counted.tally if counted.tally.rollouts else None
        shown = config.relative(config.baselines_dir / tally_relpath(target.ref))
        baseline = read_baseline_tally(source, target.ref)
        evidence.append(Evidence(str(target.ref), baseline, candidate, tally_path=shown))
    # One floor for the check: the strictest configured (per-task floors differ rarely).
    floor = max(floors, key=lambda f: (f.value, f.k), default=None)
    sequential = decisions is not None
    policy = policy_for(
        config,
        Floor(floor.k, floor.value) if floor else None,
        sequential=sequential,
        require_power=require_power,
    )
    by_name = {str(ref): d for ref, d in (decisions or {}).items()}
    judged: StatsJudgement = judge_tasks(evidence, policy, decisions=by_name)
    kept = tuple(
        o
        for o in report.outcomes
        if o.task not in stats_only and (o.task, o.artifact) not in counted_only
    )
    return replace(report, outcomes=kept, warnings=tuple(dict.fromkeys(warnings)), stats=judged)
