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
from silo_regress.stats.groupsequential import LookDecision
from silo_regress.stats.sequential import Decision
from silo_regress.stats.tally import Tally, parse_tally
from silo_regress.stats.verdicts import (
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
    sequential_look: LookDecision | None = None,
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
    # A sequential check's global step was taken at its looks (stats/groupsequential.py).
    declined = sequential_look.declined if sequential_look is not None else None
    judged: StatsJudgement = judge_tasks(
        evidence, policy, decisions=by_name, suite_declined=declined
    )
    kept = tuple(
        o
        for o in report.outcomes
        if o.task not in stats_only and (o.task, o.artifact) not in counted_only
    )
    return replace(report, outcomes=kept, warnings=tuple(dict.fromkeys(warnings)), stats=judged)


_NAMED = 12  # runs named one by one in a warning; the rest are counted
