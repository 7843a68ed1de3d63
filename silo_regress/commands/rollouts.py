"""Rollouts a command starts: run a plan of tasks through the runner, say what went wrong,
and hand the runs back per task, in the order they started.

The policy that every command starting Silo shares lives here: which runs a check
compares (only the runs it just made), and that a rollout which left no run at all
stops the command (exit 3) rather than being judged on an older run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from silo_regress.errors import RunnerError, UsageError
from silo_regress.system.cpus import capped_jobs

if TYPE_CHECKING:
    from silo_regress.judging.tallying import RolloutResult
    from silo_regress.project.config import Config
    from silo_regress.project.taskref import TaskRef
    from silo_regress.runner import Batch, Event, Rollout, RolloutOutcome, Task
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

    def note(self, message: str) -> None:
        """What a round decided, and why the rest goes on: information, not a warning."""
        ...

    def warn(self, message: str) -> None: ...

    def error(self, message: str) -> None: ...


class QuietWatcher:
    """A watcher that shows nothing and keeps what it was told (tests, library use)."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.warnings: list[str] = []
        self.errors: list[str] = []

    @contextmanager
    def _events(self) -> Iterator[Callable[[Event], None]]:
        yield lambda event: None

    def rollouts(self, total: int, width: int) -> AbstractContextManager[Callable[[Event], None]]:
        return self._events()

    def note(self, message: str) -> None:
        self.notes.append(message)

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def error(self, message: str) -> None:
        self.errors.append(message)


def plan_rollouts(
    config: Config,
    tasks: Sequence[Task],
    *,
    repeat: int | Mapping[Key, int],
    flags: RolloutFlags,
) -> list[Rollout]:
    """Each task's rollouts, ``repeat`` each (or a count per task), interleaved: every
    task's first rollout, then every second, so a slow task does not hold a batch."""
    from silo_regress import runner

    counts = {t.key: repeat if isinstance(repeat, int) else repeat.get(t.key, 1) for t in tasks}
    groups: dict[int, list[Task]] = {}
    for task in tasks:
        groups.setdefault(counts[task.key], []).append(task)
    planned: list[Rollout] = []
    for count, members in groups.items():
        planned += runner.prepare_rollouts(
            config, members, repeat=count, agent=flags.agent, timeout=flags.timeout
        )
    order = {t.key: n for n, t in enumerate(tasks)}
    return sorted(planned, key=lambda r: (r.number, order[r.task.key]))


def execute_tasks(
    config: Config,
    tasks: Sequence[Task],
    *,
    repeat: int | Mapping[Key, int],
    flags: RolloutFlags,
    watcher: Watcher,
) -> Batch:
    """Run ``tasks`` ``repeat`` times each, with progress shown through ``watcher``, and
    run again what the config says to retry (:func:`execute_rollouts`)."""
    rollouts = plan_rollouts(config, tasks, repeat=repeat, flags=flags)
    return execute_rollouts(config, rollouts, flags=flags, watcher=watcher)


def _retry_reason(outcome: RolloutOutcome, *, infra: int, incomplete: int) -> str | None:
    """Why this outcome is run again, or None: an infrastructure error while ``infra``
    retries are left (not a command that cannot start: that would fail the same way), a
    rollout without a result while ``incomplete`` are (retry-incomplete, opt in)."""
    from silo_regress.runner import RolloutState

    if outcome.problem:
        lasting = outcome.state in (RolloutState.NOT_STARTED, RolloutState.DISK_FULL)
        return None if lasting or infra <= 0 else "left no run of its own (infra-error)"
    if outcome.without_result and incomplete > 0:
        return "left no complete result.json (retry-incomplete)"
    return None


def execute_rollouts(
    config: Config, rollouts: Sequence[Rollout], *, flags: RolloutFlags, watcher: Watcher
) -> Batch:
    """Run ``rollouts``; then, round by round, run again each one that Silo could not
    start (up to ``retry-infra`` times) or, opted in, that left no result (up to
    ``retry-incomplete``). A retry stands in for the attempt it repeats, which the batch
    keeps in ``retried``; a completed rollout is never run again."""
    from silo_regress import runner

    # SILO_REGRESS_JOBS caps it, so the progress line says what really runs at once.
    width = capped_jobs(flags.jobs or config.jobs or runner.default_jobs())
    with watcher.rollouts(len(rollouts), width) as on_event:
        batch = runner.execute(config, rollouts, jobs=width, on_event=on_event)
    final = list(batch.outcomes)
    retried: list[RolloutOutcome] = []
    strays = list(batch.strays)
    seconds = batch.seconds
    infra = [config.retry_infra] * len(final)
    incomplete = [config.retry_incomplete] * len(final)
    while True:
        redo = []
        for n, outcome in enumerate(final):
            why = _retry_reason(outcome, infra=infra[n], incomplete=incomplete[n])
            if why is not None:
                redo.append((n, why))
        if not redo:
            break
        for n, why in redo[:_NAMED]:
            watcher.warn(f"{final[n].rollout.label} {why}: running it again")
        if len(redo) > _NAMED:
            watcher.warn(f"... and {len(redo) - _NAMED} more rollouts run again")
        again = [final[n].rollout for n, _ in redo]
        with watcher.rollouts(len(again), width) as on_event:
            more = runner.execute(config, again, jobs=width, on_event=on_event)
        strays += more.strays
        seconds += more.seconds
        for (n, _), outcome in zip(redo, more.outcomes, strict=True):
            if final[n].problem:
                infra[n] -= 1
            else:
                incomplete[n] -= 1
            retried.append(final[n])
            final[n] = outcome
    runs: dict[Key, list[Run]] = {}
    for outcome in final:
        if outcome.run is not None:
            runs.setdefault(outcome.rollout.task.key, []).append(outcome.run)
    return runner.Batch(
        outcomes=tuple(final),
        runs={key: tuple(sorted(found, key=lambda r: r.order)) for key, found in runs.items()},
        strays=tuple(strays),
        seconds=seconds,
        retried=tuple(retried),
    )


_NAMED = 12  # retried rollouts named one by one; the rest are counted


def report_problems(batch: Batch, watcher: Watcher) -> bool:
    """Say why rollouts left no usable run; True when any did (the command exits 3)."""
    for stray in batch.strays:
        watcher.warn(stray)
    # A silo-command that cannot start Silo says so once, not once per rollout.
    for message in dict.fromkeys(o.message for o in batch.problems):
        watcher.error(message)
    return bool(batch.problems)


@dataclass(frozen=True)
class Made:
    """The rollouts a check just made: per rollout number k (from 1), the run of each task
    that had a k-th rollout; what each run counted for when its rollout ended; and the
    attempts a retry stood in for."""

    pins: Pins
    results: Mapping[str, RolloutResult]  # by run name
    retried: tuple[RolloutOutcome, ...] = ()

    def runs_of(self, key: Key) -> list[Run]:
        return [pin[key] for pin in self.pins if key in pin]

    def __add__(self, other: Made) -> Made:
        return Made(
            self.pins + other.pins, {**self.results, **other.results}, self.retried + other.retried
        )


def run_before_check(
    config: Config,
    source: BaselineSource,
    refs: Sequence[TaskRef],
    *,
    flags: RolloutFlags,
    watcher: Watcher,
    repeat: int | None = None,
) -> Made:
    """Run the tasks ``check --run`` will check, ``repeat`` times each (None: each task's
    configured ``repeat``, else once).

    Only runs made just now are returned, a crashed rollout's incomplete run among them
    (a failed rollout for pass counts, ``incomplete-run`` for bytes). A rollout that left
    no run of its own even after its retries (an infrastructure error: Silo could not
    start, or was killed before it wrote a run) stops the check with exit 3: comparing an
    older run instead would report a result nobody just produced.
    """
    from silo_regress import runner
    from silo_regress.runs.cache import index_runs

    index = index_runs(config.runs_dir)
    tasks = runner.plan_tasks(config, index, source, refs)
    counts = {
        t.key: repeat
        if repeat is not None
        else config.task_settings(t.ref, environment=t.environment).repeat or 1
        for t in tasks
    }
    batch = execute_tasks(config, tasks, repeat=counts, flags=flags, watcher=watcher)
    if report_problems(batch, watcher):
        failed = len(batch.problems)
        where = ", ".join(dict.fromkeys(o.rollout.label for o in batch.problems))
        raise RunnerError(
            f"{failed} of {len(batch.outcomes)} rollouts left no run to check even after "
            f"{config.retry_infra} retr{'y' if config.retry_infra == 1 else 'ies'} "
            f"(infra-error: {where}; see above), so nothing was compared and nothing passed"
        )
    made: dict[Key, list[Run]] = {}
    results: dict[str, RolloutResult] = {}
    for outcome in batch.outcomes:
        if outcome.run is not None:
            made.setdefault(outcome.rollout.task.key, []).append(outcome.run)
            if outcome.result is not None:
                results[outcome.run.name] = outcome.result
    pins: Pins = [{} for _ in range(max(counts.values(), default=1))]
    for key, runs in made.items():
        for pin, run in zip(pins, sorted(runs, key=lambda r: r.order), strict=False):
            pin[key] = run
    return Made(pins, results, batch.retried)
