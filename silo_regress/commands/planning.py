"""``silo-regress plan``: how many rollouts a check needs to detect a drop, from the
tallies the check would compare with.

Per stats task: the fixed M at which its own test (one-sided Fisher at alpha) catches
a drop of ``detect`` in its pass rate with ``power``, and the smallest drop the
configured M catches. For the suite (every task down by ``detect``): the fewest
rollouts, M or M + 1 a task, at which the check's suite decision catches it, with
their power, the power of one fewer and of the equal M, and the tasks whose own table
sets ``repeat`` (the allocation is printed as config keys); the smallest drop the
configured M catches; and the sequential check with the configured looks (its power,
and the rollouts a task and rounds it takes with no change and with the drop, from
simulated checks of ``decide_look``), with the smallest cap whose looks reach the
power when the configured one does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from silo_regress.commands.sources import baseline_source, load_project, parse_refs
from silo_regress.errors import UsageError
from silo_regress.stats.planning import Plan, SequentialPlan, SuitePlan, SuiteTask, TaskPlan

DEFAULT_M = 8  # the fixed M a plan is judged at when neither --repeat nor `repeat` says
ALPHA = 0.05


@dataclass(frozen=True)
class PlanRequest:
    project: Path
    explicit: bool = False
    detect: float = 0.15
    power: float = 0.8
    repeat: int | None = None  # the M to judge; else the config's `repeat`, else 8
    against: str | None = None
    refs: tuple[str, ...] = ()


def plan(request: PlanRequest) -> Plan:
    """The plan for every stats task the check would judge (or those ``refs`` name)."""
    from silo_regress.judging.statsgate import read_baseline_tally
    from silo_regress.judging.targets import select_targets
    from silo_regress.project.config import ConfigStyle, Gate
    from silo_regress.runs.cache import index_runs
    from silo_regress.stats.groupsequential import DEFAULT_LOOKS
    from silo_regress.stats.planning import (
        PRACTICAL_ROLLOUTS,
        Override,
        SuiteTask,
        rollouts_to_detect,
        smallest_task_drop,
        task_power,
    )
    from silo_regress.store.baselinenames import tally_relpath

    if not 0.0 < request.detect < 1.0:
        raise UsageError(f"--detect {request.detect}: give a drop in pass rate between 0 and 1")
    if not 0.0 < request.power < 1.0:
        raise UsageError(f"--power {request.power}: give a chance between 0 and 1")
    config = load_project(request.project, explicit=request.explicit)
    source = baseline_source(config, against=request.against)
    targets = select_targets(config, index_runs(config.runs_dir), source, parse_refs(request.refs))
    # A task with no run yet has no key (no environment seen): planned all the same.
    gated = [
        t
        for t in targets
        if not t.refused
        and not t.ambiguous
        and config.task_settings(t.ref, environment=t.key[0] if t.key else None).gate
        is not Gate.EXACT
    ]
    m = request.repeat or config.repeat or DEFAULT_M
    looks = config.sequential_looks or DEFAULT_LOOKS
    tasks = []
    suite_tasks: list[SuiteTask] = []
    names: list[str] = []
    overrides: list[Override] = []
    tables_only = replace(config, repeat=None)
    for target in gated:
        tally = read_baseline_tally(source, target.ref)
        shown = config.relative(config.baselines_dir / tally_relpath(target.ref))
        if tally is None:
            tasks.append(TaskPlan(str(target.ref), shown, None, None, None, None, False))
            continue
        rate = tally.passed / tally.rollouts if tally.rollouts else 0.0
        after = max(0.0, rate - request.detect)
        need = rollouts_to_detect(
            tally.passed, tally.rollouts, rate=after, alpha=ALPHA, power=request.power
        )
        tasks.append(
            TaskPlan(
                task=str(target.ref),
                tally_path=shown,
                base_passed=tally.passed,
                base_rollouts=tally.rollouts,
                rollouts=need,
                power=None
                if need is None
                else task_power(tally.passed, tally.rollouts, need, rate=after, alpha=ALPHA),
                power_fewer=task_power(
                    tally.passed, tally.rollouts, need - 1, rate=after, alpha=ALPHA
                )
                if need is not None and need > 1
                else None,
                smallest_drop=smallest_task_drop(
                    tally.passed, tally.rollouts, m, alpha=ALPHA, power=request.power
                )
                if tally.passed
                else None,
                cannot_decline=tally.passed == 0,
            )
        )
        if tally.rollouts:
            suite_tasks.append(SuiteTask(tally.passed, tally.rollouts, after))
            names.append(str(target.ref))
            # A table's repeat outranks the top-level key the plan suggests.
            own = tables_only.task_settings(
                target.ref, environment=target.key[0] if target.key else None
            ).repeat
            if own is not None:
                overrides.append(Override(str(target.ref), own))
    return Plan(
        detect=request.detect,
        power=request.power,
        alpha=ALPHA,
        configured_m=m,
        looks=looks,
        looks_configured=config.sequential_looks is not None,
        tasks=tuple(tasks),
        suite=replace(
            _suite(suite_tasks, m=m, looks=looks, detect=request.detect, power=request.power),
            names=tuple(names),
            overrides=tuple(overrides),
        ),
        limit=PRACTICAL_ROLLOUTS,
        pyproject=config.location.style is ConfigStyle.PYPROJECT,
    )


def _suite(
    tasks: list[SuiteTask], *, m: int, looks: tuple[int, ...], detect: float, power: float
) -> SuitePlan:
    from silo_regress.stats.planning import (
        PRACTICAL_ROLLOUTS,
        SIMULATED_TASKS,
        SuiteTask,
        suite_allocation,
        suite_power,
    )

    live = [t for t in tasks if t.base_passed > 0]
    if not live:
        return SuitePlan(0, None, None, None, None)
    level = 0.9 * ALPHA
    # Every task the check judges takes part in its suite test (one that never passed
    # adds a table that cannot decline, and counts in the smallest-p branch's m).
    allocation = suite_allocation(tasks, alpha=ALPHA, power=power)
    needed = None if allocation is None else max(allocation.uniform.rollouts)

    def dropped(drop: float) -> list[SuiteTask]:
        return [
            SuiteTask(
                t.base_passed, t.base_rollouts, max(0.0, t.base_passed / t.base_rollouts - drop)
            )
            for t in live
        ]

    smallest: float | None = None
    if suite_power(dropped(1.0), m, level=level) >= power:
        low, high = 0.0, 1.0
        while high - low > 0.0025:
            middle = (low + high) / 2
            if suite_power(dropped(middle), m, level=level) >= power:
                high = middle
            else:
                low = middle
        smallest = high

    # Over SIMULATED_TASKS tasks simulating is too slow for a command: approximate.
    sequential = simulated_sequential if len(live) <= SIMULATED_TASKS else plan_policy
    configured = sequential(live, looks)

    def scaled(cap: int) -> tuple[int, ...]:
        return tuple(sorted({max(1, round(x * cap / looks[-1])) for x in looks}))

    # The smallest cap: the normal approximation's (bisected, cheap), then the
    # simulated check's power there, a step up at a time while it falls short.
    cap_needed = cap_power = None
    if configured.power < power:
        low, high = looks[-1], PRACTICAL_ROLLOUTS  # power grows with the cap: bisect
        if plan_policy(live, scaled(high)).power >= power:
            while high - low > 1:
                middle = (low + high) // 2
                if plan_policy(live, scaled(middle)).power >= power:
                    high = middle
                else:
                    low = middle
        for cap in range(max(high, looks[-1] + 1), PRACTICAL_ROLLOUTS + 1):
            cap_power = sequential(live, scaled(cap)).power
            if cap_power >= power:
                cap_needed = cap
                break
    return SuitePlan(len(live), needed, smallest, configured, cap_needed, cap_power, allocation)


def plan_policy(tasks: list[SuiteTask], looks: tuple[int, ...]) -> SequentialPlan:
    """The sequential check with these looks (the default design otherwise), for
    tasks whose baseline passed: its power and costs by the normal approximation."""
    from silo_regress.stats.groupsequential import SequentialPolicy, levels_for
    from silo_regress.stats.planning import plan_sequential

    policy = SequentialPolicy(looks=looks)
    levels = levels_for([t.base_rollouts for t in tasks], policy)
    futility = [policy.futility_level(f) for f in levels.fractions[:-1]]
    return plan_sequential(
        tasks,
        looks,
        alpha=policy.alpha,
        suite_share=policy.suite_share,
        gamma=policy.gamma,
        futility=futility,
        fractions=levels.fractions,
    )


def simulated_sequential(
    tasks: Sequence[SuiteTask],
    looks: tuple[int, ...],
    *,
    checks: int | None = None,
    seed: int = 32,
) -> SequentialPlan:
    """Power and costs of the sequential check with these looks (the default design
    otherwise) on seeded simulated checks of its own looks
    (:func:`silo_regress.stats.groupsequential.decide_look`): with the drop (each task
    at ``rate_after``) and with no change (at the tally's rate). The normal
    approximation (:func:`silo_regress.stats.planning.plan_sequential`) was off by
    up to 0.10 in power on suites of 5 and 20 tasks (bench/plan.py --part sequential)."""
    from silo_regress.stats.groupsequential import SequentialPolicy, SuiteStep, run_looks
    from silo_regress.stats.planning import SIMULATED_CHECKS, SeededRollouts
    from silo_regress.stats.tally import Tally

    checks = SIMULATED_CHECKS if checks is None else checks
    policy = SequentialPolicy(looks=looks)
    baselines = [Tally(t.base_rollouts, t.base_passed) for t in tasks]
    live = sum(1 for t in tasks if t.base_passed > 0) or 1

    def run(rates: Sequence[float]) -> tuple[float, float, float]:
        draws = SeededRollouts(rates, checks=checks, seed=seed)
        rejects = rounds = 0
        rollouts = 0.0
        for check in range(checks):

            def passes(i: int, before: int, after: int, check: int = check) -> int:
                return draws.passes(check, i, after) - draws.passes(check, i, before)

            done = run_looks(baselines, policy, passes=passes)
            rejects += done.decision.suite is SuiteStep.REJECT
            rollouts += sum(done.made) / live
            rounds += done.looks
        return rejects / checks, rollouts / checks, rounds / checks

    power, with_drop, rounds_drop = run([t.rate_after for t in tasks])
    _, no_change, rounds_none = run([t.base_passed / t.base_rollouts for t in tasks])
    return SequentialPlan(looks, power, no_change, with_drop, rounds_none, rounds_drop)
