"""What a run was made from: its provenance record, written and read.

Every rollout silo-regress starts gets ``silo-regress.json`` beside Silo's own
files: the fingerprint of the configured ``inputs`` (see :mod:`fingerprint`),
the agent and its SHA-256, the Silo command, the git commit and whether the tree
was dirty, and the tool's version. A record that is truncated, forged (another
task's) or from a newer tool is a named problem, never a trusted record.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from silo_regress import __version__
from silo_regress.project.config import Config
from silo_regress.project.fingerprint import (
    MAX_INPUT_FILES,
    InputDigest,
    InputSnapshot,
    fingerprint_of,
    working_tree_snapshot,
)

RESOURCE_CLASS_VARIABLE = "SILO_REGRESS_RESOURCE_CLASS"
_CLASS_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,63}")
PROVENANCE_FILE = "silo-regress.json"
PROVENANCE_VERSION = 1
MAX_RECORD_BYTES = 1 << 20
_HEX64 = re.compile(r"[0-9a-f]{64}")

# --- the record -------------------------------------------------------------------


@dataclass(frozen=True)
class Provenance:
    """What one rollout was made from (``silo-regress.json`` in its run directory)."""

    environment: str
    task_id: str
    fingerprint: str | None
    inputs: tuple[InputDigest, ...]
    agent: str | None
    agent_sha256: str | None
    silo_command: tuple[str, ...]
    commit: str | None
    dirty: bool | None
    tool_version: str = __version__
    version: int = PROVENANCE_VERSION
    created_at: str | None = None
    # Inputs whose content differed after the rollout from before it started (the agent
    # switched mid-run): no single set of inputs made the run, so it vouches for none.
    changed_while_running: tuple[str, ...] = ()
    # New in 0.4, absent from older records: which rollout of a plan of units this run
    # is (ENV/TASK#k), and the kind of machine that made it.
    rollout: str | None = None
    resource: ResourceClass | None = None

    def to_json(self) -> bytes:
        document = {
            "version": self.version,
            "tool": f"silo-regress {self.tool_version}",
            "environment": self.environment,
            "taskId": self.task_id,
            "fingerprint": self.fingerprint,
            "inputs": [{"path": f.path, "sha256": f.sha256} for f in self.inputs],
            "agent": self.agent,
            "agentSha256": self.agent_sha256,
            "siloCommand": list(self.silo_command),
            "commit": self.commit,
            "dirty": self.dirty,
            "createdAt": self.created_at,
        }
        if self.changed_while_running:
            document["inputsChangedWhileRunning"] = list(self.changed_while_running)
        if self.rollout is not None:
            document["rollout"] = self.rollout
        if self.resource is not None:
            document["resourceClass"] = self.resource.to_json()
        return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")

    @property
    def short_commit(self) -> str | None:
        if self.commit is None:
            return None
        return self.commit[:7] + ("+dirty" if self.dirty else "")

    def made_by(self) -> str:
        """``made by agent X at commit abc1234+dirty``, or "" when neither is known."""
        parts = []
        if self.agent:
            parts.append(f"agent {self.agent}")
        if self.short_commit:
            parts.append(f"commit {self.short_commit}")
        return "made by " + " at ".join(parts) if parts else ""


def normalize_agent(agent: str | None) -> str | None:
    """An agent path as the project sees it: ``./a.agent.ts`` and ``a.agent.ts`` agree."""
    if agent is None:
        return None
    text = os.path.normpath(agent).replace(os.sep, "/")
    return text


def write_provenance(run_dir: Path, record: Provenance) -> None:
    """Write ``silo-regress.json`` into ``run_dir`` atomically (temp file, fsync, rename)."""
    import tempfile  # only rollouts write records; a check that reads them never pays

    target = Path(run_dir) / PROVENANCE_FILE
    fd, temporary = tempfile.mkstemp(prefix=".silo-regress-", suffix=".tmp", dir=run_dir)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(record.to_json())
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


@dataclass(frozen=True)
class ProvenanceReading:
    """A run's record, or why there is none to trust (None and None: no record at all)."""

    record: Provenance | None
    problem: str | None = None


def read_provenance(run_dir: Path) -> Provenance | None:
    """The run's record; None when it has none or it cannot be trusted."""
    return inspect_provenance(run_dir).record


def inspect_provenance(
    run_dir: Path,
    *,
    environment: str | None = None,
    task_id: str | None = None,
    expected: str | None = None,
) -> ProvenanceReading:
    """Read and validate a run's record; a bad one is a problem, never a trusted record.

    ``environment`` and ``task_id`` are the run's own (from run.json): a record
    that names another task was copied from another run. A record whose
    fingerprint is ``expected`` (the inputs being checked) needs no list of
    inputs: the hook reads a thousand of them, so that list is left unparsed.
    """
    path = Path(run_dir) / PROVENANCE_FILE
    try:
        data = _read_small(path)
    except FileNotFoundError:
        return ProvenanceReading(None)
    except (OSError, ValueError) as exc:
        return ProvenanceReading(None, f"{PROVENANCE_FILE} cannot be read: {exc}")
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return ProvenanceReading(None, f"{PROVENANCE_FILE} is not valid JSON (truncated?)")
    if not isinstance(document, dict):
        return ProvenanceReading(None, f"{PROVENANCE_FILE} is not a JSON object")
    version = document.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version > PROVENANCE_VERSION:
        return ProvenanceReading(
            None,
            f"{PROVENANCE_FILE} was written by a newer silo-regress "
            f"({document.get('tool')!s}, record version {version}); upgrade to read it",
        )
    try:
        skip = expected is not None and document.get("fingerprint") == expected
        record = _parse(document, skip_inputs=skip)
    except (TypeError, ValueError, KeyError) as exc:
        return ProvenanceReading(None, f"{PROVENANCE_FILE} is malformed: {exc}")
    if (environment, task_id) != (None, None) and (record.environment, record.task_id) != (
        environment,
        task_id,
    ):
        return ProvenanceReading(
            None,
            f"{PROVENANCE_FILE} names task {record.environment}/{record.task_id}, not this "
            f"run's {environment}/{task_id} (copied from another run?)",
        )
    if expected is not None and record.fingerprint == expected:
        return ProvenanceReading(record)
    if record.fingerprint is not None and record.fingerprint != fingerprint_of(
        (f.path, f.sha256) for f in record.inputs
    ):
        return ProvenanceReading(
            None, f"{PROVENANCE_FILE}: its fingerprint does not match the inputs it lists"
        )
    return ProvenanceReading(record)


def _read_small(path: Path) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        if os.path.islink(path):
            raise ValueError("it is a symlink") from None
        raise ValueError(exc.strerror) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("it is not a regular file")
        data = os.read(fd, MAX_RECORD_BYTES + 1)
        if len(data) > MAX_RECORD_BYTES:
            raise ValueError(f"it is over {MAX_RECORD_BYTES} bytes")
        return data
    finally:
        os.close(fd)


def _parse(document: dict[str, Any], *, skip_inputs: bool = False) -> Provenance:
    def text(key: str, *, optional: bool = True) -> str | None:
        value = document.get(key)
        if value is None and optional:
            return None
        if not isinstance(value, str) or not value:
            raise ValueError(f"{key!r} must be a string")
        return value

    def digest(key: str) -> str | None:
        value = text(key)
        if value is not None and not _HEX64.fullmatch(value):
            raise ValueError(f"{key!r} must be a SHA-256 in hex")
        return value

    inputs = document.get("inputs", [])
    if not isinstance(inputs, list) or len(inputs) > MAX_INPUT_FILES:
        raise ValueError("'inputs' must be a list")
    files = []
    if skip_inputs and document.get("fingerprint") is not None:
        inputs = []
    for item in inputs:
        if not isinstance(item, dict):
            raise ValueError("'inputs' must hold objects")
        path, sha = item.get("path"), item.get("sha256")
        if not isinstance(path, str) or not isinstance(sha, str) or not _HEX64.fullmatch(sha):
            raise ValueError("an 'inputs' entry needs a path and a SHA-256")
        files.append(InputDigest(path, sha))
    command = document.get("siloCommand", [])
    if not isinstance(command, list) or not all(isinstance(c, str) for c in command):
        raise ValueError("'siloCommand' must be a list of strings")
    dirty = document.get("dirty")
    if dirty is not None and not isinstance(dirty, bool):
        raise ValueError("'dirty' must be true or false")
    tool = text("tool") or "silo-regress ?"
    moved = document.get("inputsChangedWhileRunning", [])
    if not isinstance(moved, list) or not all(isinstance(m, str) and m for m in moved):
        raise ValueError("'inputsChangedWhileRunning' must be a list of paths")
    rollout = text("rollout")
    if rollout is not None and not rollout.isprintable():
        raise ValueError("'rollout' must be ENV/TASK#k")
    return Provenance(
        rollout=rollout,
        resource=read_resource_class(document.get("resourceClass")),
        environment=str(text("environment", optional=False)),
        task_id=str(text("taskId", optional=False)),
        fingerprint=digest("fingerprint"),
        inputs=tuple(files),
        agent=text("agent"),
        agent_sha256=digest("agentSha256"),
        silo_command=tuple(command),
        commit=text("commit"),
        dirty=dirty,
        tool_version=tool.rpartition(" ")[2],
        version=int(document.get("version") or PROVENANCE_VERSION),
        created_at=text("createdAt"),
        changed_while_running=tuple(moved),
    )


# --- the machine ------------------------------------------------------------------


@dataclass(frozen=True)
class ResourceClass:
    """The kind of machine a rollout ran on: a name the team chose, and its CPUs.

    The same agent can pass a few points more or less on a bigger machine (timeouts,
    tool latency), so tallies made on different classes are not pooled unasked."""

    name: str | None
    cpus: int

    def __str__(self) -> str:
        return f"{self.name or 'unnamed'} ({self.cpus} CPU{'s' * (self.cpus != 1)})"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "cpus": self.cpus}


def read_resource_class(value: Any) -> ResourceClass | None:
    """A record's or a report's ``resourceClass``; ValueError when it is not one."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError("'resourceClass' must be an object of name and cpus")
    name, cpus = value.get("name"), value.get("cpus")
    if name is not None and (not isinstance(name, str) or not _CLASS_NAME.fullmatch(name)):
        raise ValueError("'resourceClass.name' must be a short name (letters, digits, ._:+-)")
    if isinstance(cpus, bool) or not isinstance(cpus, int) or not 1 <= cpus <= 1 << 16:
        raise ValueError("'resourceClass.cpus' must be a whole number of CPUs")
    return ResourceClass(name, cpus)


def current_resource_class(environ: Mapping[str, str]) -> ResourceClass:
    """This machine's class: ``SILO_REGRESS_RESOURCE_CLASS`` and the CPUs really usable."""
    from silo_regress.errors import ConfigError
    from silo_regress.system.cpus import available_cpus

    name = environ.get(RESOURCE_CLASS_VARIABLE, "").strip() or None
    if name is not None and not _CLASS_NAME.fullmatch(name):
        raise ConfigError(
            f"{RESOURCE_CLASS_VARIABLE}={name!r}: name the machine kind in at most 64 letters, "
            "digits and ._:+- (e.g. ubuntu-latest, c6i.2xlarge)"
        )
    return ResourceClass(name, available_cpus())


# --- making records (the runner) --------------------------------------------------


@dataclass
class ProvenanceContext:
    """What every rollout of one batch shares: the inputs and the git state, taken once."""

    config: Config
    commit: str | None
    dirty: bool | None
    resource: ResourceClass | None = None
    _snapshots: dict[tuple[str, ...], InputSnapshot] = field(default_factory=dict)

    def snapshot(self, globs: tuple[str, ...]) -> InputSnapshot:
        if globs not in self._snapshots:
            self._snapshots[globs] = working_tree_snapshot(self.config.project, globs)
        return self._snapshots[globs]

    def take_before(self, rollouts: Sequence[tuple[str, str | None]]) -> None:
        """Fingerprint the inputs of every (environment, agent) before any rollout starts:
        a record must name the inputs a run started from, not those found once it ended."""
        for environment, agent in dict.fromkeys(rollouts):
            globs = inputs_for_agent(self.config, environment=environment, agent=agent)
            if globs:
                self.snapshot(globs)
            shown = normalize_agent(agent)
            if shown is not None:
                self.snapshot((shown,))

    def changed_since(self, globs: tuple[str, ...]) -> tuple[str, ...]:
        """The inputs whose content differs now from the snapshot taken before."""
        before = self.snapshot(globs)
        after = working_tree_snapshot(self.config.project, globs)
        if after.fingerprint == before.fingerprint:
            return ()
        then, now = before.digests(), after.digests()
        return tuple(sorted(p for p in set(then) | set(now) if then.get(p) != now.get(p)))

    def record_for(
        self,
        *,
        environment: str,
        task_id: str,
        agent: str | None,
        silo_command: Sequence[str],
        recheck: bool = False,
        rollout: str | None = None,
    ) -> Provenance:
        """The record of one rollout of ``environment/task_id`` made by ``agent``.

        The inputs are those snapshotted first (see :meth:`take_before`); with
        ``recheck`` (the rollout has ended) they are read again, and any that
        changed meanwhile are named in the record, which then vouches for nothing."""
        globs = inputs_for_agent(self.config, environment=environment, agent=agent)
        snapshot = self.snapshot(globs) if globs else None
        agent_sha = None
        shown = normalize_agent(agent)
        if shown is not None:
            agent_sha = self.snapshot((shown,)).digest_of(shown)
        moved = self.changed_since(globs) if recheck and globs else ()
        if recheck and shown is not None and not moved:
            moved = self.changed_since((shown,))
        return Provenance(
            environment=environment,
            task_id=task_id,
            fingerprint=snapshot.fingerprint if snapshot is not None else None,
            inputs=snapshot.files if snapshot is not None else (),
            agent=shown,
            agent_sha256=agent_sha,
            silo_command=tuple(silo_command),
            commit=self.commit,
            dirty=self.dirty,
            created_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
            changed_while_running=moved,
            rollout=rollout,
            resource=self.resource,
        )


def inputs_for_agent(config: Config, *, environment: str, agent: str | None) -> tuple[str, ...]:
    """The input globs of a rollout: ``inputs``, else the agent files with this one's own.

    ``run --agent X`` is made by X: when the inputs default to the agent files, X
    stands in for the environment's configured agent, so a later check against
    the configured agent finds the run stale.
    """
    if config.inputs:
        return config.inputs
    configured = normalize_agent(config.settings_for(environment).agent)
    used = normalize_agent(agent)
    globs = [normalize_agent(g) or g for g in config.input_globs]
    if configured is not None and used is not None and used != configured:
        globs = [used if g == configured else g for g in globs]
    elif used is not None and used not in globs:
        globs.append(used)
    return tuple(dict.fromkeys(globs))


def start_batch(config: Config) -> ProvenanceContext:
    """Take the git state once for a batch of rollouts; outside git, commit is unknown."""
    from silo_regress.errors import ConfigError, GitError
    from silo_regress.vcs import gitio

    try:
        state = gitio.head_state(gitio.find_repository(config.project))
        commit, dirty = state.commit, state.dirty
    except GitError:
        commit, dirty = None, None
    try:
        resource: ResourceClass | None = current_resource_class(os.environ)
    except ConfigError:  # a bad name is refused where the class is judged, not mid-batch
        resource = None
    return ProvenanceContext(config=config, commit=commit, dirty=dirty, resource=resource)
