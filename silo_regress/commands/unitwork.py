"""``check --run --unit I/N``: worker I's units of the plan, run, retried and reported.

Every worker plans the whole check (:func:`~silo_regress.judging.units.plan_units`:
the stats-gated tasks of the baselines, ``repeat`` rollouts each) and runs only its
own units. A unit already made in this project, with a complete result and by the same
inputs (its ``silo-regress.json`` names the rollout and the fingerprint), is not made
again: a worker killed mid-way and started again recomputes only the rollout it was
in. A rollout Silo could not start (no run directory) is an infrastructure error: it
is started again, up to ``retry-infra`` more times, and one that never started is reported
as ``infra-error``, in no tally. The result is a typed :class:`UnitReport` that
``merge`` pools with the other workers'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from silo_regress.commands.rollouts import QuietWatcher, RolloutFlags, Watcher
from silo_regress.errors import InputError, UsageError
from silo_regress.judging.units import Plan, PlannedTask, Unit, Worker, plan_units
from silo_regress.reports.unitreport import PlanTaskEntry, UnitOutcome, UnitReport, UnitResult
from silo_regress.system.cpus import capped_jobs

if TYPE_CHECKING:
    from silo_regress.judging.tallying import RolloutResult
    from silo_regress.project.config import Config
    from silo_regress.project.taskref import TaskRef
    from silo_regress.runner import Rollout, RolloutOutcome
    from silo_regress.runs.index import Run
    from silo_regress.stats.verdicts import Policy
    from silo_regress.store.baselines import BaselineSource


@dataclass(frozen=True)
class UnitOptions:
    """What a unit worker was asked for."""

    worker: Worker
    repeat: int
    refs: tuple[TaskRef, ...] = ()
    flags: RolloutFlags = field(default_factory=RolloutFlags)
    retries: int | None = None  # None: the config's retry-infra


def unit_options(
    worker: Worker,
    *,
    run_first: bool,
    repeat: int | None,
    conflicting: Sequence[str] = (),
    refs: Sequence[TaskRef] = (),
    flags: RolloutFlags | None = None,
) -> UnitOptions:
    """A worker's request, or UsageError when its options cannot make a unit plan: a
    plan is fixed rollouts (``--run`` and one M on every worker), so ``conflicting``
    (the flags given that make it otherwise, e.g. ``--repeat-until-decided``) refuse."""
    if not run_first or conflicting:
        without = f", without {', '.join(conflicting)}" if conflicting else ""
        raise UsageError(
            f"--unit {worker} runs a fixed plan of rollouts: give it with --run and "
            f"--repeat M{without}"
        )
    if repeat is None:
        raise UsageError(
            f"--unit {worker} needs --repeat M or the repeat key (the rollouts per task of "
            "the whole plan, the same on every worker)"
        )
    return UnitOptions(
        worker=worker, repeat=repeat, refs=tuple(refs), flags=flags or RolloutFlags()
    )


def plan_check(
    config: Config, source: BaselineSource, refs: Sequence[TaskRef], *, repeat: int
) -> tuple[Plan, list[PlanTaskEntry]]:
    """The plan every worker computes alike, and each task's baseline tally."""
    from silo_regress.judging.statsgate import gated_targets, read_baseline_tally
    from silo_regress.judging.targets import select_targets
    from silo_regress.project.fingerprint import current_inputs
    from silo_regress.runs.cache import index_runs
    from silo_regress.store.baselinenames import tally_relpath

    targets = select_targets(config, index_runs(config.runs_dir), source, refs)
    gated = gated_targets(config, targets)
    if not gated:
        raise InputError(
            f"{config.relative(config.baselines_dir)}/: no task is judged by pass rate "
            '(gate = "stats" or "both"), so there are no units to run; check exact tasks '
            "with check --shard K/N (docs/distributed.md)"
        )
    from silo_regress.reports.unitreport import MAX_PLAN_TASKS

    if len(gated) > MAX_PLAN_TASKS:
        raise InputError(
            f"{len(gated)} tasks are judged by pass rate, over the {MAX_PLAN_TASKS} a plan of "
            "units may hold; split the suite with task refs (check --run --unit I/N REF...)"
        )
    inputs = current_inputs(config, staged=False)
    planned = []
    entries = []
    for target in gated:
        assert target.key is not None  # gated_targets keeps only targets with a key
        task = PlannedTask(target.ref, *target.key)
        planned.append(task)
        shown = config.relative(config.baselines_dir / tally_relpath(target.ref))
        entries.append(PlanTaskEntry(task, shown, read_baseline_tally(source, target.ref)))
    plan = plan_units(
        planned, repeat=repeat, fingerprint=inputs.fingerprint if inputs is not None else None
    )
    order = {(t.environment, t.task_id): n for n, t in enumerate(plan.tasks)}
    entries.sort(key=lambda e: order[(e.task.environment, e.task.task_id)])
    return plan, entries


def run_unit(
    config: Config,
    source: BaselineSource,
    options: UnitOptions,
    *,
    watcher: Watcher | None = None,
) -> UnitReport:
    """Run worker ``options.worker``'s units (those not already made) and report them."""
    import os

    from silo_regress import runner
    from silo_regress.runs.provenance import current_resource_class

    if options.repeat < 2:
        raise UsageError(
            f"--unit needs --repeat M of 2 or more (not {options.repeat}): a unit is one of "
            "M rollouts of a task judged by its pass rate"
        )
    resource = current_resource_class(os.environ)
    plan, entries = plan_check(config, source, options.refs, repeat=options.repeat)
    mine = plan.part(options.worker)
    flags = options.flags
    watcher = watcher or QuietWatcher()
    made = _made_before(config, set(mine), agent=flags.agent)
    todo = [u for u in mine if u not in made]
    tasks = [
        runner.Task(t.ref, t.environment, t.task_id)
        for t in plan.tasks
        if any((u.environment, u.task_id) == (t.environment, t.task_id) for u in todo)
    ]
    rollouts: list[Rollout] = []
    if tasks:
        wanted = set(todo)
        every = runner.prepare_rollouts(
            config, tasks, repeat=plan.repeat, agent=flags.agent, timeout=flags.timeout
        )
        rollouts = [r for r in every if r.unit in wanted]
    attempts: dict[Unit, int] = dict.fromkeys(todo, 0)
    errors: dict[Unit, list[str]] = {u: [] for u in todo}
    finished: dict[Unit, RolloutOutcome] = {}
    retries = config.retry_infra if options.retries is None else options.retries
    for _ in range(retries + 1):
        if not rollouts:
            break
        width = capped_jobs(flags.jobs or config.jobs or runner.default_jobs())
        with watcher.rollouts(len(rollouts), width) as on_event:
            batch = runner.execute(config, rollouts, jobs=width, on_event=on_event)
        for stray in batch.strays:
            watcher.warn(stray)
        again = []
        by_unit = {o.rollout.unit: o for o in batch.outcomes}
        for rollout in rollouts:
            unit = rollout.unit
            attempts[unit] += 1
            outcome = by_unit.get(unit)
            if outcome is None or outcome.run is None:
                # Silo never made a run directory: the machine's fault, not the agent's.
                errors[unit].append(outcome.message if outcome else "not started")
                again.append(rollout)
            else:
                finished[unit] = outcome
        rollouts = again
    outcomes = []
    for unit in mine:
        if unit in made:
            outcomes.append(_counted(unit, made[unit], attempts=1, errors=()))
        elif unit in finished:
            done = finished[unit]
            assert done.run is not None
            outcomes.append(
                _counted(
                    unit,
                    done.run,
                    attempts=attempts[unit],
                    errors=tuple(errors[unit]),
                    read=done.result,  # read and hashed when the rollout ended
                )
            )
        else:
            outcomes.append(
                UnitOutcome(
                    unit=unit,
                    result=UnitResult.INFRA_ERROR,
                    result_sha256=None,
                    run=None,
                    reward=0.0,
                    checks=(),
                    attempts=attempts[unit],
                    infra_errors=tuple(errors[unit]),
                )
            )
    return UnitReport(
        worker=options.worker,
        plan=plan,
        fingerprint=plan.fingerprint,
        resource=resource,
        policy=_policy(config, entries),
        tasks=tuple(entries),
        outcomes=tuple(outcomes),
    )


def _policy(config: Config, entries: Sequence[PlanTaskEntry]) -> Policy:
    """The policy the one-machine check would judge these tasks by (judging/statsgate)."""
    from silo_regress.judging.statsgate import policy_for
    from silo_regress.stats.verdicts import Floor

    floors = set()
    for entry in entries:
        settings = config.task_settings(entry.task.ref, environment=entry.task.environment)
        if settings.min_pass_hat_k is not None:
            floors.add(settings.min_pass_hat_k)
    floor = max(floors, key=lambda f: (f.value, f.k), default=None)
    return policy_for(config, Floor(floor.k, floor.value) if floor else None)


def _made_before(config: Config, units: set[Unit], *, agent: str | None) -> dict[Unit, Run]:
    """Units of this worker already made here from the current inputs, with a result."""
    import contextlib

    from silo_regress.project.fingerprint import ProvenanceError
    from silo_regress.runs.cache import index_runs
    from silo_regress.runs.index import result_is_complete
    from silo_regress.runs.provenance import inspect_provenance, start_batch

    if not units:
        return {}
    index = index_runs(config.runs_dir)
    context = start_batch(config)
    found: dict[Unit, Run] = {}
    for environment, task_id in {(u.environment, u.task_id) for u in units}:
        expected = None
        with contextlib.suppress(OSError, ProvenanceError):
            expected = context.record_for(
                environment=environment, task_id=task_id, agent=agent, silo_command=()
            ).fingerprint
        # Oldest first: a unit made twice here counts its first complete run.
        for run in sorted(index.runs_of(environment, task_id), key=lambda r: r.order):
            record = inspect_provenance(
                run.path, environment=environment, task_id=task_id, expected=expected
            ).record
            if record is None or record.rollout is None or record.changed_while_running:
                continue
            unit = next((u for u in units if str(u) == record.rollout), None)
            if (
                unit is None
                or unit in found
                or record.fingerprint != expected
                or not result_is_complete(run)
            ):
                continue
            found[unit] = run
    return found


def _counted(
    unit: Unit,
    run: Run,
    *,
    attempts: int,
    errors: tuple[str, ...],
    read: RolloutResult | None = None,
) -> UnitOutcome:
    """A unit's result from its run: result.json read once and hashed as it is read, as
    a one-machine check counts it (judging/tallying); ``read`` when the runner read it
    as the rollout ended, so a file rewritten later changes nothing."""
    from silo_regress.judging.tallying import read_result

    result = read if read is not None else read_result(run)
    if not result.has_result:
        # Started and left no result: a failed rollout of the agent (DESIGN.md).
        return UnitOutcome(unit, UnitResult.NO_RESULT, None, run.name, 0.0, (), attempts, errors)
    return UnitOutcome(
        unit=unit,
        result=UnitResult.PASSED if result.passed else UnitResult.FAILED,
        result_sha256=result.digest,
        run=run.name,
        reward=result.reward,
        checks=result.checks,
        attempts=attempts,
        infra_errors=errors,
    )
