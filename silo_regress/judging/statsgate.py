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
from collections.abc import Mapping, Sequence
from dataclasses import replace

from silo_regress.judging.outcome import Report
from silo_regress.judging.tallying import (
    Counted,
    RolloutResult,
    changed_results,
    count_results,
    read_result,
)
from silo_regress.judging.targets import Target
from silo_regress.project.config import Config, Gate
from silo_regress.project.fingerprint import InputSnapshot
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
    results: Mapping[str, RolloutResult] | None = None,
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
        tally = _count(runs, results, variants={}).tally
        decisions[target.ref] = design.decide(tally.passed, tally.rollouts)
    return decisions


def _count(
    runs: Sequence[Run],
    results: Mapping[str, RolloutResult] | None,
    *,
    variants: dict[str, list[int]],
) -> Counted:
    """The tally of ``runs``: each as counted when its rollout ended where that is known,
    else read now; a run without a complete result counts as a failed rollout."""
    known = results or {}
    return count_results(
        [known.get(run.name) or read_result(run) for run in runs], variants=variants
    )


def fresh_candidates(
    config: Config,
    index: RunIndex,
    target: Target,
    *,
    inputs: InputSnapshot | None,
) -> tuple[list[Run], int]:
    """The rollouts a check without ``--run`` judges a stats task on: its runs made from
    the inputs being checked (by their provenance records, else by time), newest first,
    the newest ``repeat`` of them where a repeat count is configured; without stale
    detection (no ``inputs``, no ``agent``) only the newest ``repeat`` (else the newest
    one). Runs without a complete result are among them, counted as failed rollouts.
    The second value is how many runs were passed over as stale."""
    from silo_regress.runs.freshness import judge_run

    assert target.key is not None
    runs = list(index.runs_of(*target.key))
    want = config.task_settings(target.ref, environment=target.key[0]).repeat
    if inputs is None:
        return runs[: want or 1], 0
    fresh = [r for r in runs if judge_run(config, r, inputs, ref=target.ref).stale is None]
    return (fresh[:want] if want else fresh), len(runs) - len(fresh)


def apply_stats_gate(
    config: Config,
    source: BaselineSource,
    index: RunIndex,
    report: Report,
    *,
    targets: Sequence[Target],
    pins: Sequence[dict[tuple[str, str], Run]] | None,
    results: Mapping[str, RolloutResult] | None = None,
    retried: Mapping[str, int] | None = None,
    decisions: dict[TaskRef, Decision] | None = None,
    require_power: bool = False,
    inputs: InputSnapshot | None = None,
    hook: bool = False,
) -> Report:
    """``report`` with the gated tasks judged statistically (its ``stats`` set).

    Every rollout counts: ``pins`` are the rollouts ``check --run`` made (each counted
    as ``results`` says it was when it ended), else the task's fresh runs
    (:func:`fresh_candidates`). ``hook``: the pre-commit hook starts no rollouts, so
    tallies are read and validated and pass rates left to CI."""
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
        shown = config.relative(config.baselines_dir / tally_relpath(target.ref))
        baseline = read_baseline_tally(source, target.ref)
        if hook:
            evidence.append(Evidence(str(target.ref), baseline, None, tally_path=shown))
            continue
        if pins is not None:
            runs = [pin[target.key] for pin in pins if target.key in pin]
        else:
            runs, stale = fresh_candidates(config, index, target, inputs=inputs)
            if runs or stale:
                warnings.append(
                    f"{target.ref}: judged on {len(runs)} fresh rollout"
                    f"{'s' * (len(runs) != 1)} already on disk"
                    + (f"; {stale} stale run{'s' * (stale != 1)} not counted" if stale else "")
                )
        counted = _count(runs, results, variants=_variant_counts(report, target.ref))
        if counted.without_result:
            names = ", ".join(counted.without_result[:_NAMED])
            more = len(counted.without_result) - _NAMED
            warnings.append(
                f"{target.ref}: {len(counted.without_result)} of {len(runs)} rollouts left no "
                f"complete result.json ({names}{f' and {more} more' if more > 0 else ''}); "
                "each counts as a failed rollout"
            )
        changed = tuple(changed_results(runs, results)) if results else ()
        for name in changed[:_NAMED]:
            warnings.append(
                f"{target.ref}: {config.relative(config.runs_dir / name)}/result.json changed "
                "after its rollout ended and was counted; the task fails (check again)"
            )
        candidate = counted.tally if counted.tally.rollouts else None
        evidence.append(
            Evidence(
                str(target.ref),
                baseline,
                candidate,
                tally_path=shown,
                without_result=counted.without_result,
                changed=changed,
                retried=(retried or {}).get(str(target.ref), 0),
            )
        )
    # One floor for the check: the strictest configured (per-task floors differ rarely).
    floor = max(floors, key=lambda f: (f.value, f.k), default=None)
    sequential = decisions is not None
    policy = replace(
        policy_for(
            config,
            Floor(floor.k, floor.value) if floor else None,
            sequential=sequential,
            require_power=require_power,
        ),
        judged_in_ci=hook,
    )
    by_name = {str(ref): d for ref, d in (decisions or {}).items()}
    judged: StatsJudgement = judge_tasks(evidence, policy, decisions=by_name)
    kept = tuple(
        o
        for o in report.outcomes
        if o.task not in stats_only and (o.task, o.artifact) not in counted_only
    )
    return replace(report, outcomes=kept, warnings=tuple(dict.fromkeys(warnings)), stats=judged)


_NAMED = 12  # runs named one by one in a warning; the rest are counted
