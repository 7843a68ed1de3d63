"""What a run was made from: its provenance record, the inputs' fingerprint, stale runs.

Every rollout silo-regress starts gets ``silo-regress.json`` beside Silo's own
files: the fingerprint of the configured ``inputs`` (default: the agent file),
the agent and its SHA-256, the Silo command, the git commit and whether the tree
was dirty, and the tool's version. A check compares that fingerprint with the
inputs being checked (the git index for the hook, the working tree otherwise):
a run made from other inputs cannot judge this code, so it is ``stale-run``.
A run without a record (plain ``silo run``) is judged by time instead: it is
stale when an input file was modified after the run started.

Inputs are files in a repository anyone can clone, so hashing them is bounded:
symlinks are hashed as the path they hold (as git stores them, never followed
out of the project), huge files and huge matches are refused, FIFOs and devices
are skipped with a warning, and a file that changes while it is hashed is read
again and then refused.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import orjson

from silo_regress import __version__
from silo_regress.config import Config
from silo_regress.errors import InputError
from silo_regress.taskref import TaskRef

PROVENANCE_FILE = "silo-regress.json"
PROVENANCE_VERSION = 1
MAX_RECORD_BYTES = 1 << 20
MAX_INPUT_FILES = 5000
MAX_WALKED = 200_000  # directory entries looked at while expanding the globs
MAX_FILE_BYTES = 64 << 20
MAX_TOTAL_BYTES = 512 << 20
FUTURE_SLACK_SECONDS = 120  # mtimes further ahead than this are clock skew
_GLOB_CHARS = re.compile(r"[*?\[]")
_HEX64 = re.compile(r"[0-9a-f]{64}")
WORKING_TREE = "working tree"
GIT_INDEX = "git index"


class ProvenanceError(InputError):
    """An input that cannot be fingerprinted: unreadable, too large, changing."""


# --- the fingerprint --------------------------------------------------------------


@dataclass(frozen=True)
class InputDigest:
    """One input file: its project-relative path and the SHA-256 of its content."""

    path: str
    sha256: str
    mtime_ns: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class InputSnapshot:
    """The inputs as they are now (working tree) or about to be committed (git index)."""

    source: str  # WORKING_TREE or GIT_INDEX
    globs: tuple[str, ...]
    files: tuple[InputDigest, ...]
    warnings: tuple[str, ...] = ()

    @functools.cached_property
    def fingerprint(self) -> str:
        # Cached: the hook compares it with the record of every run.
        return fingerprint_of((f.path, f.sha256) for f in self.files)

    @functools.cached_property
    def _digests(self) -> dict[str, str]:
        return {f.path: f.sha256 for f in self.files}

    def digests(self) -> dict[str, str]:
        return dict(self._digests)


def fingerprint_of(pairs: Iterable[tuple[str, str]]) -> str:
    """SHA-256 of the sorted (path, content SHA-256) pairs, one ``path NUL digest LF`` each."""
    digest = hashlib.sha256()
    for path, sha in sorted(pairs):
        digest.update(path.encode("utf-8", "surrogateescape") + b"\0" + sha.encode() + b"\n")
    return digest.hexdigest()


@dataclass(frozen=True)
class _Glob:
    text: str
    base: str  # the literal leading directories ("" for the project root)
    pattern: re.Pattern[str]
    literal: bool


def _compile(text: str) -> _Glob:
    """A glob relative to the project: ``*`` and ``?`` within a name, ``**`` across."""
    parts = [p for p in text.split("/") if p not in ("", ".")]
    literal: list[str] = []
    for part in parts:
        if _GLOB_CHARS.search(part):
            break
        literal.append(part)
    regex = ""
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            regex += ".*" if last else "(?:[^/]+/)*"
            continue
        regex += _segment(part) + ("" if last else "/")
    is_literal = len(literal) == len(parts)
    if is_literal:  # a file, or a directory meaning everything under it
        regex = re.escape("/".join(parts)) + "(?:/.*)?"
    return _Glob(text, "/".join(literal), re.compile(regex + r"\Z", re.S), is_literal)


def _segment(part: str) -> str:
    out = ""
    i = 0
    while i < len(part):
        char = part[i]
        if char == "*":
            out += "[^/]*"
        elif char == "?":
            out += "[^/]"
        elif char == "[":
            skip = 2 if i + 1 < len(part) and part[i + 1] in "!]" else 1
            end = part.find("]", i + skip)
            if end == -1:
                out += re.escape(char)
            else:
                body = part[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out += "[" + body.replace("\\", "\\\\") + "]"
                i = end
        else:
            out += re.escape(char)
        i += 1
    return out


def _candidates(project: Path, glob: _Glob, *, budget: list[int]) -> Iterator[str]:
    """Project-relative paths under the glob's literal base: files and symlinks, no dirs."""
    base = project / glob.base if glob.base else project
    try:
        info = os.lstat(base)
    except OSError:
        return
    if not stat.S_ISDIR(info.st_mode):
        yield glob.base
        return
    for top, dirs, files in os.walk(base, followlinks=False):
        relative_top = os.path.relpath(top, project).replace(os.sep, "/")
        prefix = "" if relative_top == "." else relative_top + "/"
        budget[0] -= len(dirs) + len(files)
        if budget[0] < 0:
            raise ProvenanceError(
                f"inputs: {glob.text!r} walks more than {MAX_WALKED} entries; "
                "narrow the glob in the config's 'inputs'"
            )
        kept = []
        for name in dirs:
            if os.path.islink(os.path.join(top, name)):
                yield prefix + name  # as git sees it: a link, never descended
            elif name != ".git":
                kept.append(name)
        dirs[:] = sorted(kept)
        for name in sorted(files):
            yield prefix + name


def expand_inputs(project: Path, globs: Sequence[str]) -> tuple[list[str], list[str]]:
    """The project-relative paths ``globs`` match in the working tree, and warnings."""
    budget = [MAX_WALKED]
    found: dict[str, None] = {}
    warnings: list[str] = []
    for text in globs:
        glob = _compile(text)
        before = len(found)
        for path in _candidates(project, glob, budget=budget):
            if glob.pattern.match(path):
                found[path] = None
        if len(found) == before:
            warnings.append(f"inputs: {text!r} matches no file in the working tree")
        if len(found) > MAX_INPUT_FILES:
            raise ProvenanceError(
                f"inputs: the globs match more than {MAX_INPUT_FILES} files; "
                "narrow them in the config's 'inputs'"
            )
    return sorted(found), warnings


def working_tree_snapshot(project: Path, globs: Sequence[str]) -> InputSnapshot:
    """Hash every input as it is on disk now."""
    paths, warnings = expand_inputs(project, globs)
    files: list[InputDigest] = []
    total = 0
    for path in paths:
        digest = _digest(project, path, warnings)
        if digest is not None:
            files.append(digest[0])
            total += digest[1]
            if total > MAX_TOTAL_BYTES:
                raise ProvenanceError(
                    f"inputs: more than {MAX_TOTAL_BYTES >> 20} MiB to fingerprint; "
                    "narrow the config's 'inputs'"
                )
    return InputSnapshot(WORKING_TREE, tuple(globs), tuple(files), tuple(warnings))


def index_snapshot(project: Path, globs: Sequence[str]) -> InputSnapshot:
    """Hash every input as staged in the git index: the content a commit would hold."""
    from silo_regress import gitio

    repo = gitio.find_repository(project)
    top = repo.path_of(project)
    compiled = [_compile(g) for g in globs]
    prefixes = sorted({"/".join(p for p in (top, g.base) if p) for g in compiled})
    staged = gitio.read_staged(repo, prefixes)
    lead = top + "/" if top else ""
    files: list[InputDigest] = []
    warnings: list[str] = []
    total = 0
    for glob in compiled:
        matched = False
        for full, data in staged.items():
            if not full.startswith(lead):
                continue
            path = full[len(lead) :]
            if glob.pattern.match(path):
                matched = True
                if any(f.path == path for f in files):
                    continue
                total += len(data)
                if total > MAX_TOTAL_BYTES or len(files) >= MAX_INPUT_FILES:
                    raise ProvenanceError(
                        "inputs: too much staged content to fingerprint; "
                        "narrow the config's 'inputs'"
                    )
                files.append(
                    InputDigest(path, hashlib.sha256(data).hexdigest(), _mtime(project, path))
                )
        if not matched:
            warnings.append(f"inputs: {glob.text!r} matches no file in the git index")
    files.sort(key=lambda f: f.path)
    return InputSnapshot(GIT_INDEX, tuple(globs), tuple(files), tuple(warnings))


def _mtime(project: Path, path: str) -> int | None:
    try:
        return os.lstat(project / path).st_mtime_ns
    except OSError:
        return None


def _digest(project: Path, path: str, warnings: list[str]) -> tuple[InputDigest, int] | None:
    full = project / path
    try:
        info = os.lstat(full)
    except FileNotFoundError:
        warnings.append(f"inputs: {path} vanished while it was fingerprinted")
        return None
    except OSError as exc:
        raise ProvenanceError(f"inputs: {path}: cannot read: {exc.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        target = os.readlink(full)
        resolved = os.path.realpath(full)
        if not (resolved + os.sep).startswith(str(project.resolve()) + os.sep):
            warnings.append(
                f"inputs: {path} is a symlink out of the project; the path it holds "
                "is fingerprinted, as git stores it, not what it points at"
            )
        data = os.fsencode(target)
        return InputDigest(path, hashlib.sha256(data).hexdigest(), info.st_mtime_ns), len(data)
    if not stat.S_ISREG(info.st_mode):
        warnings.append(f"inputs: {path} is not a regular file (a FIFO or device?); skipped")
        return None
    for _attempt in range(3):
        read = _hash_regular(full, path)
        if read is not None:
            sha, size, mtime_ns = read
            return InputDigest(path, sha, mtime_ns), size
    raise ProvenanceError(
        f"inputs: {path} kept changing while it was fingerprinted; "
        "wait for whatever writes it to finish, then run again"
    )


def _hash_regular(full: Path, path: str) -> tuple[str, int, int] | None:
    """(sha256, size, mtime_ns) of a regular file, or None when it changed while read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(full, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ProvenanceError(f"inputs: {path}: cannot read: {exc.strerror}") from None
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            raise ProvenanceError(f"inputs: {path} is not a regular file")
        if before.st_size > MAX_FILE_BYTES:
            raise ProvenanceError(
                f"inputs: {path} is {before.st_size} bytes; inputs over "
                f"{MAX_FILE_BYTES >> 20} MiB are not fingerprinted; narrow the config's 'inputs'"
            )
        digest = hashlib.sha256()
        size = 0
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            if size > MAX_FILE_BYTES:
                return None  # grew while read
            digest.update(chunk)
        after = os.fstat(fd)
    except OSError as exc:
        raise ProvenanceError(f"inputs: {path}: cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)
    same = (before.st_size, before.st_mtime_ns, before.st_ctime_ns) == (
        after.st_size,
        after.st_mtime_ns,
        after.st_ctime_ns,
    )
    return (digest.hexdigest(), size, after.st_mtime_ns) if same and size == after.st_size else None


def current_inputs(config: Config, *, staged: bool) -> InputSnapshot | None:
    """The inputs being checked; None when neither ``inputs`` nor ``agent`` is configured."""
    globs = config.input_globs
    if not globs:
        return None
    if staged:
        return index_snapshot(config.project, globs)
    return working_tree_snapshot(config.project, globs)


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
        return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")

    @property
    def short_commit(self) -> str | None:
        if self.commit is None:
            return None
        return self.commit[:7] + ("+dirty" if self.dirty else "")


def normalize_agent(agent: str | None) -> str | None:
    """An agent path as the project sees it: ``./a.agent.ts`` and ``a.agent.ts`` agree."""
    if agent is None:
        return None
    text = os.path.normpath(agent).replace(os.sep, "/")
    return text


def write_provenance(run_dir: Path, record: Provenance) -> None:
    """Write ``silo-regress.json`` into ``run_dir`` atomically (temp file, fsync, rename)."""
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
    return Provenance(
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
    )


# --- making records (the runner) --------------------------------------------------


@dataclass
class ProvenanceContext:
    """What every rollout of one batch shares: the inputs and the git state, taken once."""

    config: Config
    commit: str | None
    dirty: bool | None
    _snapshots: dict[tuple[str, ...], InputSnapshot] = field(default_factory=dict)

    def snapshot(self, globs: tuple[str, ...]) -> InputSnapshot:
        if globs not in self._snapshots:
            self._snapshots[globs] = working_tree_snapshot(self.config.project, globs)
        return self._snapshots[globs]

    def record_for(
        self,
        *,
        environment: str,
        task_id: str,
        agent: str | None,
        silo_command: Sequence[str],
    ) -> Provenance:
        """The record of one rollout of ``environment/task_id`` made by ``agent``."""
        globs = inputs_for_agent(self.config, environment=environment, agent=agent)
        snapshot = self.snapshot(globs) if globs else None
        agent_sha = None
        shown = normalize_agent(agent)
        if shown is not None:
            agent_sha = self.snapshot((shown,)).digests().get(shown)
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
    from silo_regress import gitio
    from silo_regress.errors import GitError

    try:
        state = gitio.head_state(gitio.find_repository(config.project))
        commit, dirty = state.commit, state.dirty
    except GitError:
        commit, dirty = None, None
    return ProvenanceContext(config=config, commit=commit, dirty=dirty)


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
        if self.record is None:
            return ""
        parts = []
        if self.record.agent:
            parts.append(f"agent {self.record.agent}")
        if self.record.short_commit:
            parts.append(f"commit {self.record.short_commit}")
        return "made by " + " at ".join(parts) if parts else ""

    def describe(self) -> str:
        assert self.stale is not None
        by = self.made_by()
        return (
            f"run {self.run_name}{f' ({by})' if by else ''} is stale: {self.stale.reason}; "
            f"refresh it with `silo-regress run {self.ref}` (or `silo-regress check --run`)"
        )


def judge_run(
    config: Config, run: _RunLike, inputs: InputSnapshot | None, *, ref: TaskRef
) -> RunFreshness | None:
    """Read the run's record and compare it with ``inputs``; None without inputs."""
    if inputs is None:
        return None
    reading = inspect_provenance(
        run.path, environment=run.environment, task_id=run.task_id, expected=inputs.fingerprint
    )
    warnings = []
    if reading.problem is not None:
        where = config.relative(run.path)
        warnings.append(f"{where}/{reading.problem}; the run is judged by time instead")
    stale = judge_freshness(
        inputs,
        record=reading.record,
        started=run.started,
        configured_agent=config.settings_for(run.environment).agent,
    )
    return RunFreshness(ref, run.name, reading.record, stale, tuple(warnings))
