"""``run``: Silo started for each task, ``repeat`` times, and whether its rollouts agree.

One rollout a task collects the runs; with two or more, each task's rollouts are
compared (a task whose bytes differ is unsettled, exit 1) and a stats task's rollouts
are counted as the gate counts them. Rollouts that left no usable run are the runner's
problems (exit 3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from silo_regress.commands.rollouts import RolloutFlags, Watcher, execute_tasks
from silo_regress.commands.sources import working_tree

if TYPE_CHECKING:
    from silo_regress.project.config import Config
    from silo_regress.project.taskref import TaskRef
    from silo_regress.runner import Batch, Stability
    from silo_regress.stats.tally import Tally


@dataclass(frozen=True)
class RunRequest:
    refs: tuple[TaskRef, ...] = ()
    repeat: int = 1
    flags: RolloutFlags = field(default_factory=RolloutFlags)


@dataclass(frozen=True)
class Ran:
    batch: Batch
    stabilities: tuple[Stability, ...]  # with repeat >= 2: per task, whether they agree
    tallies: tuple[tuple[str, Tally], ...]  # per stats task (by label): every rollout counted
    unsettled: bool  # a rollout left no complete run, or a task's rollouts differ
    problems: bool  # a rollout left no usable run (an infrastructure error)


def run_tasks(config: Config, request: RunRequest, *, watcher: Watcher) -> Ran:
    """Start each task's rollouts and judge whether they settled."""
    from silo_regress import runner
    from silo_regress.runs.cache import index_runs

    if request.repeat < 1:
        raise ValueError("a run makes at least one rollout a task")
    index = index_runs(config.runs_dir)
    tasks = runner.plan_tasks(config, index, working_tree(config), request.refs)
    batch = execute_tasks(
        config, tasks, repeat=request.repeat, flags=request.flags, watcher=watcher
    )
    stabilities: tuple[Stability, ...] = ()
    tallies: tuple[tuple[str, Tally], ...] = ()
    if request.repeat > 1:
        from silo_regress.commands.recording import count_stats_tasks

        stabilities = tuple(runner.assess(config, batch, tasks, repeat=request.repeat))
        tallies = tuple(count_stats_tasks(config, list(stabilities)))
        unsettled = any(not s.stable for s in stabilities)
    else:
        unsettled = any(o.state is runner.RolloutState.INCOMPLETE for o in batch.outcomes)
    # Said by the caller after the report (report_problems): the last thing a user reads.
    return Ran(batch, stabilities, tallies, unsettled, problems=bool(batch.problems))
