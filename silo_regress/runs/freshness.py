"""Stale runs: whether a run was made from the inputs being checked.

A check compares a run's recorded fingerprint with the inputs being checked (the
git index for the hook, the working tree otherwise): a run made from other inputs
cannot judge this code, so it is ``stale-run``. A run without a record (plain
``silo run``) is judged by time: it is stale when an input file was modified after
the run started.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from silo_regress.project.config import Config
from silo_regress.project.fingerprint import GIT_INDEX, InputSnapshot
from silo_regress.project.taskref import TaskRef
from silo_regress.runs.provenance import Provenance, inspect_provenance, normalize_agent

FUTURE_SLACK_SECONDS = 120  # mtimes further ahead than this are clock skew
# The key an agent file takes when two inputs lists are compared: two agent files with
# the same bytes are the same agent, whatever they are called.
_AGENT_KEY = "\0agent"


@dataclass(frozen=True)
class AgentFile:
    """The agent a run is judged against: named by its path, compared by its content."""

    path: str  # project-relative, as normalize_agent spells it
    sha256: str | None  # None: the file cannot be read now
    given: bool = False  # named by --agent on this command line, not by the config
    # The configured agent this one stands in for among the inputs (run --agent X
    # fingerprints X where the config's agent would be): None when it is the configured one.
    replaces: str | None = None

    @property
    def origin(self) -> str:
        return f"--agent {self.path}" if self.given else f"the configured {self.path}"


def agent_file(
    config: Config, *, environment: str, given: str | None, current: InputSnapshot | None
) -> AgentFile | None:
    """The agent runs of ``environment`` are judged against: ``given`` (--agent) when the
    command ran with one, else the configured one; None when neither names an agent."""
    configured = normalize_agent(config.settings_for(environment).agent)
    path = normalize_agent(given) if given is not None else configured
    if path is None:
        return None
    sha = current.digest_of(path) if current is not None else None
    if sha is None:
        sha = _hash_file(config.project / path)
    replaces = None
    if given is not None and configured is not None and configured != path and not config.inputs:
        replaces = configured
    return AgentFile(path, sha, given=given is not None, replaces=replaces)


_HASHED: dict[tuple[str, int, int, int], str | None] = {}


def _hash_file(full: Path) -> str | None:
    """SHA-256 of a small regular file, cached by its stat: the hook asks once per run."""
    try:
        info = os.stat(full)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    key = (str(full), info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    if key not in _HASHED:
        try:
            _HASHED[key] = hashlib.sha256(full.read_bytes()).hexdigest()
        except OSError:
            return None
    return _HASHED[key]


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
    agent: AgentFile | None,
    now: datetime | None = None,
) -> Staleness | None:
    """None when the run was made from ``current`` by ``agent``; else why not."""
    if record is not None:
        return _by_record(current, record, agent)
    return _by_time(current, started, now or datetime.now(UTC))


def _by_record(
    current: InputSnapshot, record: Provenance, agent: AgentFile | None
) -> Staleness | None:
    if record.changed_while_running:
        head = record.changed_while_running[0]
        return Staleness(
            f"{head} changed while the run was being made, so no one set of inputs made it",
            record.changed_while_running,
        )
    if agent is not None and record.agent is not None:
        other = _other_agent(record, agent)
        if other is not None:
            return other
    if record.fingerprint is None:
        # Written before `agent` or `inputs` was configured: it vouches for no inputs.
        return Staleness(
            "its provenance record has no inputs fingerprint (it was made before `agent` "
            "or `inputs` was configured)",
            (),
        )
    if record.fingerprint == current.fingerprint and (agent is None or agent.replaces is None):
        return None
    then, now = _keyed_by_agent(record, current, agent)
    changed = sorted(p for p in set(then) | set(now) if then.get(p) != now.get(p))
    if not changed:
        return None
    key = changed[0]
    verb = "was added" if key not in then else "was removed" if key not in now else "changed"
    changed = [agent.path if p == _AGENT_KEY and agent is not None else p for p in changed]
    head = changed[0]
    more = f" (and {len(changed) - 1} more input{'s' * (len(changed) > 2)})" if changed[1:] else ""
    where = "as staged" if current.source == GIT_INDEX else "in the working tree"
    return Staleness(f"{head} {verb} since it was made{more}, {where}", tuple(changed))


def _other_agent(record: Provenance, agent: AgentFile) -> Staleness | None:
    """Stale when the record's agent is not ``agent``: by content when both hashes are
    known (a copy under another name is the same agent), else by name."""
    if record.agent_sha256 is not None and agent.sha256 is not None:
        if record.agent_sha256 == agent.sha256:
            return None
        if record.agent == agent.path:
            return None  # the inputs comparison names it as changed, where it changed
        return Staleness(
            f"it was made by agent {record.agent}, not {agent.origin} (their contents differ)",
            (record.agent or agent.path,),
        )
    if record.agent == agent.path:
        return None
    return Staleness(f"it was made by agent {record.agent}, not {agent.origin}", (agent.path,))


def _keyed_by_agent(
    record: Provenance, current: InputSnapshot, agent: AgentFile | None
) -> tuple[dict[str, str], dict[str, str]]:
    """The record's inputs and the current ones, the agent file under one key in both."""
    then = {f.path: f.sha256 for f in record.inputs}
    now = current.digests()
    if agent is None or record.agent is None:
        return then, now
    if record.agent in then:
        then[_AGENT_KEY] = then.pop(record.agent)
    if agent.replaces is not None and agent.replaces in now:
        del now[agent.replaces]
        if agent.sha256 is not None:
            now[_AGENT_KEY] = agent.sha256
    elif agent.path in now:
        now[_AGENT_KEY] = now.pop(agent.path)
    return then, now


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

    def describe(self, *, advice: bool = True) -> str:
        """Why the run is stale; with ``advice``, how to refresh it (a report gives that
        once for every stale run instead, among its next steps)."""
        assert self.stale is not None
        by = self.made_by()
        why = f"run {self.run_name}{f' ({by})' if by else ''} is stale: {self.stale.reason}"
        if not advice:
            return why
        return (
            f"{why}; refresh it with `silo-regress run {self.ref}` (or `silo-regress check --run`)"
        )


def judge_run(
    config: Config,
    run: _RunLike,
    inputs: InputSnapshot | None,
    *,
    ref: TaskRef,
    agent: str | None = None,
) -> RunFreshness:
    """Read the run's record and compare it with ``inputs``.

    Without ``inputs`` nothing can be stale, but the record still says which agent
    and commit made the run, for the reports. ``agent`` is the --agent the command
    ran with: its runs are judged against that agent, not the configured one.
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
        agent=agent_file(config, environment=run.environment, given=agent, current=inputs),
    )
    return RunFreshness(ref, run.name, reading.record, stale, tuple(warnings))
