"""Stale runs: whether a run was made from the inputs being checked.

A check compares a run's recorded fingerprint with the inputs being checked (the
git index for the hook, the working tree otherwise): a run made from other inputs
cannot judge this code, so it is ``stale-run``. A run without a record (plain
``silo run``) is judged by time: it is stale when an input file was modified after
the run started.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from silo_regress.project.config import Config
from silo_regress.project.fingerprint import GIT_INDEX, InputSnapshot
from silo_regress.project.taskref import TaskRef
from silo_regress.runs.provenance import Provenance, inspect_provenance, normalize_agent

FUTURE_SLACK_SECONDS = 120  # mtimes further ahead than this are clock skew

# --- stale runs -------------------------------------------------------------------


@dataclass(frozen=True)
class Staleness:
    """Why a run cannot judge the inputs being checked."""

    reason: str  # a clause: "silo.agent.ts changed since the run was made"
    changed: tuple[str, ...]  # the inputs that differ (project-relative)


def judge_freshness(
    current: InputSnapshot,
    *,
    record: Provenance | None,
    started: datetime,
    configured_agent: str | None,
    now: datetime | None = None,
) -> Staleness | None:
    """None when the run was made from ``current``; else why not."""
    if record is not None:
        return _by_record(current, record, configured_agent)
    return _by_time(current, started, now or datetime.now(UTC))


def _by_record(
    current: InputSnapshot, record: Provenance, configured_agent: str | None
) -> Staleness | None:
    configured = normalize_agent(configured_agent)
    if configured is not None and record.agent is not None and record.agent != configured:
        return Staleness(
            f"it was made by agent {record.agent}, not the configured {configured}",
            (record.agent,),
        )
    if record.fingerprint is None or record.fingerprint == current.fingerprint:
        return None
    then, now = {f.path: f.sha256 for f in record.inputs}, current.digests()
    changed = sorted(p for p in set(then) | set(now) if then.get(p) != now.get(p))
    if not changed:
        return Staleness("it was made from other inputs", ())
    head = changed[0]
    verb = "was added" if head not in then else "was removed" if head not in now else "changed"
    more = f" (and {len(changed) - 1} more input{'s' * (len(changed) > 2)})" if changed[1:] else ""
    where = "as staged" if current.source == GIT_INDEX else "in the working tree"
    return Staleness(f"{head} {verb} since it was made{more}, {where}", tuple(changed))


def _by_time(current: InputSnapshot, started: datetime, now: datetime) -> Staleness | None:
    start_ns = int(started.timestamp() * 1_000_000_000)
    future_ns = int(now.timestamp() * 1_000_000_000) + FUTURE_SLACK_SECONDS * 1_000_000_000
    later = [f for f in current.files if f.mtime_ns is not None and f.mtime_ns > start_ns]
    if not later:
        return None
    newest = max(later, key=lambda f: f.mtime_ns or 0)
    assert newest.mtime_ns is not None
    if newest.mtime_ns > future_ns:
        return Staleness(
            f"{newest.path} has a modification time in the future (clock skew?), so no run "
            "is newer than it; fix the clock or `touch` it",
            (newest.path,),
        )
    when = datetime.fromtimestamp(newest.mtime_ns / 1e9, UTC).isoformat(timespec="seconds")
    return Staleness(
        f"{newest.path} was modified at {when.replace('+00:00', 'Z')}, after the run started "
        "(the run has no provenance record, so it is judged by time)",
        tuple(f.path for f in later),
    )


# --- judging one run --------------------------------------------------------------


class _RunLike(Protocol):
    """What the judge knows of a run (runs.Run; a Protocol keeps the layers apart)."""

    @property
    def name(self) -> str: ...
    @property
    def path(self) -> Path: ...
    @property
    def environment(self) -> str: ...
    @property
    def task_id(self) -> str: ...
    @property
    def started(self) -> datetime: ...


@dataclass(frozen=True)
class RunFreshness:
    """A run's provenance and whether it was made from the inputs being checked."""

    ref: TaskRef
    run_name: str
    record: Provenance | None
    stale: Staleness | None
    warnings: tuple[str, ...] = ()

    def made_by(self) -> str:
        """``made by agent X at commit abc1234+dirty``, or "" when unknown."""
        return self.record.made_by() if self.record is not None else ""

    def describe(self) -> str:
        assert self.stale is not None
        by = self.made_by()
        return (
            f"run {self.run_name}{f' ({by})' if by else ''} is stale: {self.stale.reason}; "
            f"refresh it with `silo-regress run {self.ref}` (or `silo-regress check --run`)"
        )


def judge_run(
    config: Config, run: _RunLike, inputs: InputSnapshot | None, *, ref: TaskRef
) -> RunFreshness:
    """Read the run's record and compare it with ``inputs``.

    Without ``inputs`` nothing can be stale, but the record still says which agent
    and commit made the run, for the reports.
    """
    reading = inspect_provenance(
        run.path,
        environment=run.environment,
        task_id=run.task_id,
        expected=inputs.fingerprint if inputs is not None else None,
    )
    warnings = []
    if reading.problem is not None:
        where = config.relative(run.path)
        then = "its agent and commit are not known" if inputs is None else "judged by time instead"
        warnings.append(f"{where}/{reading.problem}; the run is {then}")
    if inputs is None:
        return RunFreshness(ref, run.name, reading.record, None, tuple(warnings))
    stale = judge_freshness(
        inputs,
        record=reading.record,
        started=run.started,
        configured_agent=config.settings_for(run.environment).agent,
    )
    return RunFreshness(ref, run.name, reading.record, stale, tuple(warnings))
