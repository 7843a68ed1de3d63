"""Run a batch of rollouts under a thread pool and collect the runs they make.

Values only: progress goes to an ``on_event`` callback (called from the calling
thread only), results come back as a :class:`Batch`; nothing here prints or
picks an exit code. The parts: :mod:`.process` supervises each process group,
:mod:`.attribution` decides which new run belongs to which rollout,
:mod:`.classification` words what each rollout came to.
"""

from __future__ import annotations

import contextlib
import functools
import os
import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from silo_regress.judging.tallying import RolloutResult, read_result
from silo_regress.project.config import Config
from silo_regress.project.fingerprint import ProvenanceError
from silo_regress.runner.attribution import Claim, Ended, Key, Ledger
from silo_regress.runner.classification import RolloutOutcome, classify
from silo_regress.runner.plan import Rollout
from silo_regress.runner.process import (
    DEFAULT_KILL_GRACE,
    GroupExit,
    ProcessGroups,
    StoppedError,
    ignoring_interrupts,
    sigterm_as_interrupt,
)
from silo_regress.runs.index import Run, list_run_dirs, read_run, result_is_complete
from silo_regress.runs.provenance import start_batch, write_provenance
from silo_regress.system.cpus import capped_jobs


@dataclass(frozen=True)
class Started:
    rollout: Rollout
    running: int
    total: int


@dataclass(frozen=True)
class Exited:
    rollout: Rollout
    exit_code: int | None  # None: it could not be started; negative: killed by a signal
    seconds: float
    timed_out: bool
    done: int
    total: int


Event = Started | Exited


@dataclass(frozen=True)
class Batch:
    """What a batch of rollouts did: one outcome per rollout, the new runs per task."""

    outcomes: tuple[RolloutOutcome, ...]
    runs: dict[Key, tuple[Run, ...]]  # new runs of each task, oldest first
    strays: tuple[str, ...]  # new directories not tied to a rollout of this batch
    seconds: float
    # Attempts a retry stood in for (commands/rollouts.py): shown, never counted.
    retried: tuple[RolloutOutcome, ...] = ()

    @property
    def problems(self) -> tuple[RolloutOutcome, ...]:
        return tuple(o for o in self.outcomes if o.problem)

    def newest(self) -> dict[Key, Run]:
        return {key: runs[-1] for key, runs in self.runs.items() if runs}


# Messages from the worker threads to the calling thread.
@dataclass(frozen=True)
class _Began:
    rollout: Rollout
    running: int


@dataclass(frozen=True)
class _Finished:
    index: int
    future: Future[GroupExit | None]


def execute(
    config: Config,
    rollouts: Sequence[Rollout],
    *,
    jobs: int,
    on_event: Callable[[Event], None] | None = None,
    kill_grace: float = DEFAULT_KILL_GRACE,
) -> Batch:
    """Run ``rollouts``, ``jobs`` at a time, in the project directory; collect their runs.

    On ``KeyboardInterrupt`` (or SIGTERM) every running rollout's process group
    is stopped before it propagates, and rollouts not yet started never start.
    """
    began = time.monotonic()
    collector = _Collector(config, rollouts)
    groups = ProcessGroups(kill_grace=kill_grace)
    inbox: queue.SimpleQueue[_Began | _Finished] = queue.SimpleQueue()
    # A rollout's start and the listing that settles its task never overlap.
    lock = threading.Lock()

    def roll(rollout: Rollout) -> GroupExit | None:
        with lock:
            spawned = datetime.now(UTC)  # no run of this rollout can start before it
            try:
                group = groups.start(
                    rollout.argv, cwd=config.project, timeout=rollout.timeout, env=rollout.environ
                )
            except StoppedError:  # Ctrl-C came between taking the rollout and starting it
                return None
            collector.ledger.start(rollout.task.key, at=spawned)
            running = len(groups)
        if isinstance(group, GroupExit):
            return group
        inbox.put(_Began(rollout, running))
        return group.wait()

    def emit(event: Event) -> None:
        if on_event is not None:
            on_event(event)

    total = len(rollouts)
    # SILO_REGRESS_JOBS=1: one rollout at a time, whatever --jobs says.
    workers = capped_jobs(min(jobs, total))
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rollout")
    with sigterm_as_interrupt():
        try:
            for index, rollout in enumerate(rollouts):
                future = pool.submit(roll, rollout)
                future.add_done_callback(functools.partial(_post, inbox, index))
            done = 0
            while done < total:
                message = inbox.get()
                if isinstance(message, _Began):
                    emit(Started(message.rollout, message.running, total))
                    continue
                exit_ = message.future.result()  # a bug in a worker is raised here
                done += 1
                if exit_ is None:
                    continue
                rollout = rollouts[message.index]
                emit(Exited(rollout, exit_.code, exit_.seconds, exit_.timed_out, done, total))
                with lock:
                    collector.exited(message.index, exit_)
        except BaseException:
            with ignoring_interrupts():
                groups.stop_all()
                pool.shutdown(wait=True, cancel_futures=True)
            raise
    pool.shutdown(wait=True)
    collector.settle_rest()
    collector.claim_unfinished()
    return Batch(
        outcomes=tuple(o for o in collector.outcomes if o is not None),
        runs={key: tuple(runs) for key, runs in collector.ledger.claimed.items()},
        strays=tuple(collector.strays()),
        seconds=time.monotonic() - began,
    )


def _post(
    inbox: queue.SimpleQueue[_Began | _Finished], index: int, future: Future[GroupExit | None]
) -> None:
    inbox.put(_Finished(index, future))


class _Collector:
    """The runs directory side of attribution: listing, reading run.json, outcomes."""

    def __init__(self, config: Config, rollouts: Sequence[Rollout]) -> None:
        self.config = config
        self.rollouts = rollouts
        self.ledger = Ledger(frozenset(e.name for e in list_run_dirs(config.runs_dir)))
        self.exits: dict[int, GroupExit] = {}
        self.known: dict[str, Run] = {}
        self.outcomes: list[RolloutOutcome | None] = [None] * len(rollouts)
        # Each new run's result.json, read the first time it was seen complete: what a
        # rollout counts for is fixed when it ends, not when the batch does.
        self.results: dict[str, RolloutResult] = {}
        # Taken once per batch, before any rollout starts: every rollout is made from
        # the same inputs and commit, and is checked against them when it ends.
        self.provenance = start_batch(config)
        with contextlib.suppress(OSError, ProvenanceError):
            self.provenance.take_before([(r.task.environment, r.agent) for r in rollouts])

    def exited(self, index: int, exit_: GroupExit) -> None:
        """Note an exit; settle its task when none of the task's rollouts still runs."""
        self.exits[index] = exit_
        ended = Ended(index, self.rollouts[index].task.key, exit_.code, exit_.timed_out)
        self._read_results(ended.key)
        if self.ledger.exit(ended):
            self._settle(ended.key)

    def _read_results(self, key: Key) -> None:
        """Read every complete new run of ``key`` not read yet. A run of a rollout that
        has ended is final; one whose writer still runs is read once it is complete (Silo
        writes the result last), so a later rewrite is seen as a change, not counted."""
        for name, run in self._identify_new().items():
            if run.key != key or name in self.results:
                continue
            result = read_result(run)
            if result.has_result:
                self.results[name] = result

    def settle_rest(self) -> None:
        for key in self.ledger.unsettled():
            self._settle(key)

    def _settle(self, key: Key) -> None:
        claims = self.ledger.settle(key, self._identify_new(), complete=result_is_complete)
        for claim in claims:
            self._classify(claim)

    def _classify(self, claim: Claim) -> None:
        index = claim.ended.index
        result = None
        if claim.run is not None:
            self._write_provenance(self.rollouts[index], claim.run)
            result = self.results.get(claim.run.name) or read_result(claim.run)
        outcome = classify(
            self.config, self.rollouts[index], self.exits[index], claim.run, complete=claim.complete
        )
        self.outcomes[index] = replace(outcome, result=result)

    def _write_provenance(self, rollout: Rollout, run: Run) -> None:
        """``silo-regress.json`` beside the run: which inputs and agent made it."""
        # A run left without a record is judged by time instead: not worth failing for.
        with contextlib.suppress(OSError, ProvenanceError):
            record = self.provenance.record_for(
                environment=run.environment,
                task_id=run.task_id,
                agent=rollout.agent,
                silo_command=rollout.argv,
                recheck=True,
                rollout=str(rollout.unit),
            )
            write_provenance(run.path, record)

    def claim_unfinished(self) -> None:
        """Give rollouts that started and left no run a new directory Silo never finished.

        Silo writes ``run.json`` last, so a rollout killed mid-way (its timeout, a crash
        of Silo itself) leaves a directory that names no task: by its name alone it is
        nobody's. When every such rollout of this batch is of one task, the directories
        are theirs (which of two identical processes left which does not matter), and
        each counts as a failed rollout, not an infrastructure error: the agent began.
        """
        from silo_regress.runner.classification import RolloutState

        unexplained = [
            n
            for n, o in enumerate(self.outcomes)
            if o is not None
            and o.run is None
            and o.state in (RolloutState.TIMED_OUT, RolloutState.NO_RUN)
            and self.exits[n].code is not None
        ]
        if not unexplained:
            return
        keys = {self.rollouts[n].task.key for n in unexplained}
        unfinished = self._unfinished()
        if len(keys) != 1 or not unfinished:
            return
        environment, task_id = keys.pop()
        for n, (name, path, when) in zip(unexplained, unfinished, strict=False):
            outcome = self.outcomes[n]
            assert outcome is not None
            stamp = when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
            run = Run(name, path, environment, task_id, stamp, when)
            self.ledger.claimed_names.add(name)
            self.ledger.claimed.setdefault(run.key, []).append(run)
            self.outcomes[n] = replace(
                outcome,
                state=RolloutState.INCOMPLETE,
                run=run,
                result=RolloutResult(name, None),
                message=f"{outcome.message}; it left {self.config.relative(path)} unfinished "
                "(no run.json), which counts as a failed rollout",
            )

    def _unfinished(self) -> list[tuple[str, Path, datetime]]:
        """New directories of this batch with no ``run.json`` (Silo never finished them)."""
        found = []
        for entry in list_run_dirs(self.config.runs_dir):
            if not self.ledger.is_new(entry.name) or entry.name in self.ledger.claimed_names:
                continue
            path = Path(entry.path)
            if os.path.lexists(path / "run.json") or not os.path.isdir(path):
                continue
            try:
                when = datetime.fromtimestamp(os.stat(path).st_mtime, UTC)
            except OSError:
                continue
            found.append((entry.name, path, when))
        return sorted(found, key=lambda item: (item[2], item[0]))

    def _identify_new(self) -> dict[str, Run]:
        for entry in list_run_dirs(self.config.runs_dir):
            if not self.ledger.is_new(entry.name) or entry.name in self.known:
                continue
            found = read_run(Path(entry.path))
            if isinstance(found, Run):
                self.known[entry.name] = found
        return self.known

    def strays(self) -> list[str]:
        runs_dir = self.config.relative(self.config.runs_dir)
        paths = {e.name: Path(e.path) for e in list_run_dirs(self.config.runs_dir)}
        found = []
        for name in self.ledger.strays(paths):
            run = read_run(paths[name])
            if isinstance(run, Run):
                found.append(
                    f"{runs_dir}/{name}: a new run of {run.environment}/{run.task_id}, "
                    "which this command did not start (another Silo process?)"
                )
            else:
                found.append(f"{runs_dir}/{name}: new, but not a usable run: {run.reason}")
        return found
