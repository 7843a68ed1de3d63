"""A sequential ``check --run``: rollouts in rounds until the check is decided.

The round loop's policy: before the first round, the stats tasks that cannot change the
decision (a baseline that never passed, or no usable tally) are left out when nothing
but their pass counts is judged; every other task runs to the first look. After each
round :func:`silo_regress.stats.groupsequential.decide_look` takes the global step at
this look and says which tasks run to the next one; the loop stops when the suite is
decided (reject, stable by futility, or the last look). One line per round, through
the watcher's ``warn``, says what was decided and why the rest goes on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from silo_regress.commands.rollouts import Made, RolloutFlags, Watcher, run_before_check

if TYPE_CHECKING:
    from silo_regress.judging.tallying import RolloutResult
    from silo_regress.judging.targets import Target
    from silo_regress.project.config import Config
    from silo_regress.project.taskref import TaskRef
    from silo_regress.runs.index import Run
    from silo_regress.stats.groupsequential import LookDecision
    from silo_regress.stats.verdicts import Evidence
    from silo_regress.store.baselines import BaselineSource


def looks_of(round_size: int, cap: int) -> tuple[int, ...]:
    """``--repeat M --max-repeat K``: a look after every M rollouts, and at K."""
    points = list(range(round_size, cap + 1, round_size))
    if not points or points[-1] != cap:
        points.append(cap)
    return tuple(points)


def _evidence(
    config: Config,
    source: BaselineSource,
    gated: Sequence[Target],
    runs: Mapping[tuple[str, str], list[Run]],
    results: Mapping[str, RolloutResult] | None,
) -> list[Evidence]:
    from silo_regress.judging.statsgate import read_baseline_tally
    from silo_regress.judging.tallying import count_results, read_result
    from silo_regress.stats.verdicts import Evidence

    known = results or {}
    evidence = []
    for target in gated:
        assert target.key is not None  # gated targets have one
        made = runs.get(target.key, [])
        counted = count_results([known.get(r.name) or read_result(r) for r in made], variants={})
        candidate = counted.tally if counted.tally.rollouts else None
        evidence.append(
            Evidence(str(target.ref), read_baseline_tally(source, target.ref), candidate)
        )
    return evidence


def run_until_decided(
    config: Config,
    source: BaselineSource,
    refs: Sequence[TaskRef],
    *,
    flags: RolloutFlags,
    watcher: Watcher,
    looks: tuple[int, ...],
) -> tuple[Made, LookDecision | None]:
    """Run the check's tasks look by look; returns one pin per rollout (later ones hold
    only the tasks that ran in that round) and the last look's decision (None when no
    task is judged statistically: every task ran to the first look only). A round that
    fails stops the check (exit 3); the rollouts already made stay on disk."""
    from silo_regress.judging.statsgate import gated_targets
    from silo_regress.judging.targets import select_targets
    from silo_regress.project.config import Gate
    from silo_regress.render.looks import describe_look
    from silo_regress.runs.cache import index_runs
    from silo_regress.stats.groupsequential import SequentialPolicy, TaskStep, decide_look

    policy = SequentialPolicy(looks=looks)
    targets = select_targets(config, index_runs(config.runs_dir), source, refs)
    gated = gated_targets(config, targets)
    decision = decide_look(_evidence(config, source, gated, {}, None), policy, look=0)
    # Only a task judged by its counts alone may run nothing: a "both" task's bytes count.
    skipped = {
        t.task
        for t in decision.tasks
        if t.step is TaskStep.STOP
        and config.task_settings(_ref(gated, t.task).ref, environment=_env(gated, t.task)).gate
        is Gate.STATS
    }
    first = [t.ref for t in targets if not t.refused and str(t.ref) not in skipped]
    if skipped:
        watcher.note(describe_look(decision, skipped=len(skipped)))
    if first:
        made = run_before_check(
            config, source, first, flags=flags, watcher=watcher, repeat=looks[0]
        )
    else:  # no refs would mean every task to the runner: run none instead
        made = Made([{} for _ in range(looks[0])], {})
    if not gated:
        return made, None
    look = 0
    while True:
        look += 1
        runs: dict[tuple[str, str], list[Run]] = {}
        for pin in made.pins:
            for key, run in pin.items():
                runs.setdefault(key, []).append(run)
        evidence = _evidence(config, source, gated, runs, made.results)
        decision = decide_look(evidence, policy, look=look)
        watcher.note(describe_look(decision))
        if decision.done or look >= len(looks):
            return made, decision
        by_size: dict[int, list[TaskRef]] = {}
        for task in decision.running:
            if task.more > 0:
                by_size.setdefault(task.more, []).append(_ref(gated, task.task).ref)
        for size, group in sorted(by_size.items()):
            made = made + run_before_check(
                config, source, group, flags=flags, watcher=watcher, repeat=size
            )


def _ref(gated: Sequence[Target], name: str) -> Target:
    return next(t for t in gated if str(t.ref) == name)


def _env(gated: Sequence[Target], name: str) -> str | None:
    key = _ref(gated, name).key
    return key[0] if key is not None else None
