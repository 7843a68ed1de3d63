"""Rollouts a command starts: run a plan of tasks through the runner, say what went wrong,
and hand the runs back per task, in the order they started.

The policy that every command starting Silo shares lives here: which runs a check
compares (only the runs it just made), and that a rollout which left no run at all
stops the command (exit 3) rather than being judged on an older run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from silo_regress.errors import RunnerError, UsageError
from silo_regress.system.cpus import capped_jobs

if TYPE_CHECKING:
    from silo_regress.project.config import Config
    from silo_regress.project.taskref import TaskRef
    from silo_regress.runner import Batch, Event, Task
    from silo_regress.runs.index import Run
    from silo_regress.store.baselines import BaselineSource

Key = tuple[str, str]
Pins = list[dict[Key, "Run"]]


@dataclass(frozen=True)
class RolloutFlags:
    """What the command line says about starting Silo; None: config decides."""

    jobs: int | None = None
    agent: str | None = None
    timeout: float | None = None

    def require(self, starts: bool, *, needs: str) -> None:
        """Refuse rollout flags on a command line that starts no rollout."""
        given = [
            flag
            for flag, value in (
                ("--jobs", self.jobs),
                ("--agent", self.agent),
                ("--timeout", self.timeout),
            )
            if value is not None
        ]
        if given and not starts:
            raise UsageError(f"{' and '.join(given)} only apply with {needs}, which starts Silo")


class Watcher(Protocol):
    """How a person sees rollouts happen: live progress, warnings and errors as they come."""

    def rollouts(self, total: int, width: int) -> AbstractContextManager[Callable[[Event], None]]:
        """A context for ``total`` rollouts, ``width`` at a time, giving the event callback."""
        ...

    def warn(self, message: str) -> None: ...

    def error(self, message: str) -> None: ...


class QuietWatcher:
    """A watcher that shows nothing and keeps what it was told (tests, library use)."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self.errors: list[str] = []

    @contextmanager
    def _events(self) -> Iterator[Callable[[Event], None]]:
        yield lambda event: None

    def rollouts(self, total: int, width: int) -> AbstractContextManager[Callable[[Event], None]]:
        return self._events()

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def error(self, message: str) -> None:
        self.errors.append(message)


def execute_tasks(
    config: Config,
    tasks: Sequence[Task],
    *,
    repeat: int,
    flags: RolloutFlags,
    watcher: Watcher,
) -> Batch:
    """Run ``tasks`` ``repeat`` times each, with progress shown through ``watcher``."""
    from silo_regress import runner

    rollouts = runner.prepare_rollouts(
        config, tasks, repeat=repeat, agent=flags.agent, timeout=flags.timeout
    )
    # SILO_REGRESS_JOBS caps it, so the progress line says what really runs at once.
    width = capped_jobs(flags.jobs or config.jobs or runner.default_jobs())
    with watcher.rollouts(len(rollouts), width) as on_event:
        return runner.execute(config, rollouts, jobs=width, on_event=on_event)


def report_problems(batch: Batch, watcher: Watcher) -> bool:
    """Say why rollouts left no usable run; True when any did (the command exits 3)."""
    for stray in batch.strays:
        watcher.warn(stray)
    # A silo-command that cannot start Silo says so once, not once per rollout.
    for message in dict.fromkeys(o.message for o in batch.problems):
        watcher.error(message)
    return bool(batch.problems)


def run_before_check(
    config: Config,
    source: BaselineSource,
    refs: Sequence[TaskRef],
    *,
    flags: RolloutFlags,
    watcher: Watcher,
    repeat: int = 1,
) -> Pins:
    """Run the tasks ``check --run`` will check, ``repeat`` times each.

    Item k of the list is the run to check per (environment, task) for rollout
    k + 1, the rollouts of a task in the order they started. Only runs made just
    now are returned, a crashed rollout's incomplete run among them (its verdict
    is ``incomplete-run``). A rollout that left no run (timeout, configuration
    error) stops the check with exit 3: comparing an older run instead would
    report a result nobody just produced.
    """
    from silo_regress import runner
    from silo_regress.runs.cache import index_runs

    index = index_runs(config.runs_dir)
    tasks = runner.plan_tasks(config, index, source, refs)
    batch = execute_tasks(config, tasks, repeat=repeat, flags=flags, watcher=watcher)
    if report_problems(batch, watcher):
        failed = len(batch.problems)
        raise RunnerError(
            f"{failed} of {len(batch.outcomes)} rollouts did not leave a run to check "
            "(see above), so nothing was compared"
        )
    if repeat == 1:
        return [batch.newest()]
    made: dict[Key, list[Run]] = {}
    for outcome in batch.outcomes:
        if outcome.run is not None:
            made.setdefault(outcome.rollout.task.key, []).append(outcome.run)
    pins: Pins = [{} for _ in range(repeat)]
    for key, runs in made.items():
        for pin, run in zip(pins, sorted(runs, key=lambda r: r.order), strict=False):
            pin[key] = run
    return pins
