"""Run attribution: which new run directories belong to which rollout.

Pure bookkeeping over names and :class:`~silo_regress.runs.index.Run` values; the
caller lists the runs directory and reads ``run.json``.

Silo prints no run paths, has no flag for the runs directory, and every rollout
of a project writes into the same one. So the names in the runs directory are
snapshotted before a batch starts, and a directory that appears later is new. A
new directory is tied to a task only by its ``run.json`` (``environment`` and
``taskId``), never by its name or its timing, so rollouts of *different* tasks
can never be confused, however they interleave.

Rollouts of the *same* task run the very same command, and ``run.json`` does not
name the process that wrote it, so nothing here guesses which of two
simultaneous processes made which directory. It counts instead: a task's new
runs are collected only when every rollout of that task that has started has
also been seen to exit (so no directory of that task can still be in the
making), and then they are handed to those rollouts by kind: complete runs first
to rollouts that exited 0, then to rollouts that exited 1 (a verifier check
failed), runs without a result last (crashes, timeouts). What a task ran is
exact; which of two identical processes wrote which directory is unknowable and
does not matter.

A plain ``silo run`` of the same task, started by someone else meanwhile, writes
into the same runs directory, and claiming its run as a rollout's would record
a result this command never produced. Two rules keep it out: a run whose
``startedAt`` is before the earliest of the task's rollouts started (less
:data:`START_SLACK`) is not this batch's; and when a task has more new runs than
started rollouts, which are ours is unknowable, so none is claimed (each is
named as a stray, and the rollouts report that they left no run of their own).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from silo_regress.runs.index import Run

Key = tuple[str, str]
# startedAt is Silo's clock reading at its own start, after ours at spawn; this
# allows for the two readings' rounding (milliseconds) and nothing more.
START_SLACK = timedelta(seconds=2)


@dataclass(frozen=True)
class Ended:
    """A rollout that has exited and waits for its run."""

    index: int  # the rollout's place in the batch
    key: Key  # (environment, task id)
    code: int | None  # None: it could not be started
    timed_out: bool = False

    @property
    def started(self) -> bool:
        return self.code is not None


@dataclass(frozen=True)
class Claim:
    """The run handed to an exited rollout, if any."""

    ended: Ended
    run: Run | None
    complete: bool  # the run has a complete result.json


def claim_order(ended: Ended) -> tuple[bool, bool, bool, int]:
    """Who gets a complete run first: exit 0, then exit 1, then the rest; timeouts last."""
    return (ended.timed_out, ended.code != 0, ended.code != 1, ended.index)


def hand_out(
    exits: Sequence[Ended], runs: Sequence[Run], *, complete: Callable[[Run], bool]
) -> list[Claim]:
    """Give each exited rollout of one task one of the task's new runs, by kind."""
    whole = [r for r in runs if complete(r)]
    broken = [r for r in runs if not complete(r)]
    claims = []
    for ended in sorted(exits, key=claim_order):
        if ended.started and whole:
            claims.append(Claim(ended, whole.pop(0), complete=True))
        elif ended.started and broken:
            claims.append(Claim(ended, broken.pop(0), complete=False))
        else:
            claims.append(Claim(ended, None, complete=False))
    return claims


@dataclass
class Ledger:
    """Started and exited rollouts per task, and the new runs already handed out.

    Not thread-safe: the caller serialises :meth:`start` with the listing that
    precedes :meth:`settle` (no rollout of a task may start between the two).
    """

    before: frozenset[str]  # names in the runs directory before the batch
    started: Counter[Key] = field(default_factory=Counter)
    exited: Counter[Key] = field(default_factory=Counter)
    waiting: dict[Key, list[Ended]] = field(default_factory=dict)
    claimed: dict[Key, list[Run]] = field(default_factory=dict)
    claimed_names: set[str] = field(default_factory=set)
    began: dict[Key, list[datetime]] = field(default_factory=dict)

    def start(self, key: Key, *, at: datetime | None = None) -> None:
        """Note a rollout of ``key`` started (spawned ``at``, when the caller knows)."""
        self.started[key] += 1
        if at is not None:
            self.began.setdefault(key, []).append(at)

    def exit(self, ended: Ended) -> bool:
        """Note an exit; True when no rollout of its task is still running (settle now)."""
        self.waiting.setdefault(ended.key, []).append(ended)
        self.exited[ended.key] += 1
        return self.started[ended.key] <= self.exited[ended.key]

    def is_new(self, name: str) -> bool:
        return name not in self.before

    def settle(
        self, key: Key, found: Mapping[str, Run], *, complete: Callable[[Run], bool]
    ) -> list[Claim]:
        """Hand the task's unclaimed new runs among ``found`` to its waiting exits."""
        starts = self.began.pop(key, [])
        earliest = min(starts) - START_SLACK if starts else None
        fresh = [
            (name, run)
            for name, run in found.items()
            if run.key == key
            and self.is_new(name)
            and name not in self.claimed_names
            and (earliest is None or run.started >= earliest)
        ]
        waiting = self.waiting.get(key, [])
        if len(fresh) > sum(1 for ended in waiting if ended.started):
            fresh = []  # someone else ran this task meanwhile: no run is surely ours
        self.claimed_names.update(name for name, _ in fresh)
        runs = sorted((run for _, run in fresh), key=lambda r: r.order)
        mine = self.claimed.setdefault(key, [])
        mine.extend(runs)
        mine.sort(key=lambda r: r.order)
        return hand_out(self.waiting.pop(key, []), runs, complete=complete)

    def unsettled(self) -> list[Key]:
        return list(self.waiting)

    def strays(self, names: Iterable[str]) -> list[str]:
        """New names that no rollout of this batch claimed, sorted."""
        return sorted(n for n in names if self.is_new(n) and n not in self.claimed_names)
