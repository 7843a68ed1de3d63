"""Find Silo run directories, tell which task each belongs to, and pick the newest.

A run's directory name is opaque (SILO_FORMAT.md): runs are ordered by the
``startedAt`` of their ``run.json``, then by name. A directory whose ``run.json``
is missing or unreadable cannot be tied to a task; it is kept aside as
*unidentified* so commands can warn about it instead of guessing.

A run's ``startedAt`` is written by someone else's clock. A run dated past this
machine's clock (by more than :data:`CLOCK_SKEW`) would stay "newest" for ever
and hide every later run, a failing one too; so such a run is never a task's
newest or listed among its runs, and :meth:`RunIndex.future_runs` names it for
the warning ``check`` prints. It counts again once the clock passes its date.
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from silo_regress.errors import InputError, TaskRefError
from silo_regress.project.config import DEFAULT_TRACE_EVENTS, ConfigLocation
from silo_regress.project.taskref import TaskRef, unsafe_reason
from silo_regress.runs.derived import is_derived
from silo_regress.system.fsio import FileError, StatKey, read_keyed, read_regular

RUN_FILE = "run.json"
RESULT_FILE = "result.json"


@dataclass(frozen=True)
class Run:
    """One rollout directory whose ``run.json`` names its task."""

    name: str
    path: Path
    environment: str
    task_id: str
    started_at: str
    started: datetime = field(compare=False, repr=False)

    @property
    def key(self) -> tuple[str, str]:
        return (self.environment, self.task_id)

    @property
    def order(self) -> tuple[datetime, str]:
        return (self.started, self.name)

    def age_seconds(self, now: datetime | None = None) -> float:
        return ((now or datetime.now(UTC)) - self.started).total_seconds()


@dataclass(frozen=True)
class Unidentified:
    """A directory under the runs directory that is not a usable run."""

    path: Path
    reason: str


Key = tuple[str, str]
# A run as the index keeps it until asked for: its start in exact microseconds since
# the epoch (the order of Run.order as an int), its directory name, and startedAt as
# written. Tuples compare by start, then name: max() of a task's rows is its newest.
Row = tuple[int, str, str]

# Where `discard` moves runs: inside the runs directory, hidden, so no scan lists it. Here,
# not in discards.py, so a check pays one stat for "nothing discarded", not an import.
DISCARD_DIR = ".silo-regress-discarded"
CLOCK_SKEW = timedelta(minutes=5)  # clocks of one CI fleet drift by seconds, not minutes
NO_RUN_FILE = f"no {RUN_FILE} (crashed before writing it, or still running)"
RUN_FILE_LIMIT = 1 << 20  # a run.json is a few hundred bytes; refuse a runaway one
ARTIFACT_LIMIT = 1 << 31


@dataclass(frozen=True)
class RunIndex:
    """Every run under a runs directory, grouped by (environment, task id).

    Runs are kept as :data:`Row` tuples and made into :class:`Run` values only
    when a task's runs are asked for: a check of 1,000 tasks needs each task's
    newest run, not 100,000 ``Run`` values and paths it never looks at.
    """

    runs_dir: Path
    rows: Mapping[Key, Sequence[Row]]
    unidentified: tuple[Unidentified, ...] = ()
    # Each task's newest row, when the scan already knows it (the run-index cache
    # stores it): ``newest`` then looks at no other row.
    newest_rows: Mapping[Key, Row] | None = None
    _built: dict[Key, tuple[Run, ...]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    # The clock, read once (one index is one moment), and the tasks with a run dated
    # past it: a check asks per task, and almost always the answer is "none".
    _clock: dict[str, Any] = field(default_factory=dict, init=False, compare=False, repr=False)

    def _limit(self) -> int:
        limit: int | None = self._clock.get("limit")
        if limit is None:
            limit = self._clock["limit"] = future_limit()
        return limit

    def has_future(self, environment: str, task_id: str) -> bool:
        """Whether the task has a run dated past this machine's clock (+ the skew)."""
        keys: frozenset[Key] | None = self._clock.get("future")
        if keys is None:
            limit = self._limit()
            if self.newest_rows is not None:  # a task's newest is its latest start
                keys = frozenset(k for k, row in self.newest_rows.items() if row[0] > limit)
            else:
                keys = frozenset(
                    k for k, rows in self.rows.items() if any(r[0] > limit for r in rows)
                )
            self._clock["future"] = keys
        return (environment, task_id) in keys

    @property
    def exists(self) -> bool:
        return self.runs_dir.is_dir()

    @property
    def by_task(self) -> Mapping[Key, tuple[Run, ...]]:
        """Each task's runs, newest first (built per task on first use)."""
        return _RunsByTask(self)

    def runs_of(self, environment: str, task_id: str) -> tuple[Run, ...]:
        """The task's runs, newest first; none dated past this machine's clock."""
        key = (environment, task_id)
        built = self._built.get(key)
        if built is None:
            limit = self._limit()
            rows = sorted((r for r in self.rows.get(key, ()) if r[0] <= limit), reverse=True)
            built = self._built[key] = tuple(self._run(key, row) for row in rows)
        return built

    def newest(self, environment: str, task_id: str) -> Run | None:
        """The task's newest run, building only that one; never one dated in the future."""
        key = (environment, task_id)
        built = self._built.get(key)
        if built is not None:
            return built[0] if built else None
        limit = self._limit()
        if self.newest_rows is not None:
            row = self.newest_rows.get(key)
            if row is None:
                return None
            if row[0] <= limit:
                return self._run(key, row)
        rows = [r for r in self.rows.get(key, ()) if r[0] <= limit]
        return self._run(key, max(rows)) if rows else None

    def future_runs(self, environment: str, task_id: str) -> tuple[Run, ...]:
        """The task's runs dated past this machine's clock (+ :data:`CLOCK_SKEW`)."""
        key = (environment, task_id)
        if not self.has_future(environment, task_id):
            return ()
        limit = self._limit()
        rows = sorted((r for r in self.rows.get(key, ()) if r[0] > limit), reverse=True)
        return tuple(self._run(key, row) for row in rows)

    def _run(self, key: Key, row: Row) -> Run:
        at, name, started_at = row
        # A row is made from a parsed startedAt; only a hand-edited cache disagrees.
        started = parse_started(started_at) or _EPOCH + at * _MICROSECOND
        return Run(
            name=name,
            path=self.runs_dir / name,
            environment=key[0],
            task_id=key[1],
            started_at=started_at,
            started=started,
        )

    @functools.cached_property
    def _environments(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for env, task in self.rows:
            found.setdefault(task, []).append(env)
        return {task: sorted(envs) for task, envs in found.items()}

    def environments_of(self, task_id: str) -> list[str]:
        return list(self._environments.get(task_id, ()))

    def task_keys(self) -> list[Key]:
        return sorted(self.rows)

    def find(self, name: str) -> Run | None:
        for key, rows in self.rows.items():
            for row in rows:
                if row[1] == name:
                    return self._run(key, row)
        return None

    def resolve(
        self,
        ref: TaskRef,
        *,
        default_environment: str | None,
        config: ConfigLocation | None = None,
    ) -> Key | None:
        """The (environment, task id) a ref means, or None when no run names it.

        Raises :class:`TaskRefError` when an unqualified ref matches runs of
        several environments and none is configured; ``config`` is where the
        message says to configure one.
        """
        if ref.environment is not None:
            return (ref.environment, ref.task_id)
        if default_environment is not None:
            return (default_environment, ref.task_id)
        environments = self.environments_of(ref.task_id)
        if len(environments) > 1:
            raise TaskRefError(
                f"task {ref.task_id} has runs in several environments "
                f"({', '.join(environments)}); name one, e.g. {environments[0]}/{ref.task_id}, "
                f"or set {config.key('environment') if config else 'environment in the config'}"
            )
        return (environments[0], ref.task_id) if environments else None


class _RunsByTask(Mapping[Key, tuple[Run, ...]]):
    def __init__(self, index: RunIndex) -> None:
        self._index = index

    def __getitem__(self, key: Key) -> tuple[Run, ...]:
        if key not in self._index.rows:
            raise KeyError(key)
        return self._index.runs_of(*key)

    def __iter__(self) -> Iterator[Key]:
        return iter(self._index.rows)

    def __len__(self) -> int:
        return len(self._index.rows)

    def __contains__(self, key: object) -> bool:
        return key in self._index.rows


# --- reading run.json ----------------------------------------------------------

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
# A key whose safety is not known yet (None means it is safe).
_UNCHECKED = "unchecked"


def microseconds(moment: datetime) -> int:
    """Exact microseconds since the epoch (a datetime holds no finer time)."""
    return (moment - _EPOCH) // _MICROSECOND


def future_limit() -> int:
    """The latest start a run may have, as a :data:`Row` holds it: now + the skew."""
    return microseconds(datetime.now(UTC) + CLOCK_SKEW)


def parse_started(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment


def _stats_as_non_directory(path: str) -> bool:
    """True for a name that is there and is no directory; False for one that cannot be
    stat'ed (a loop of symbolic links), which is worth a warning."""
    try:
        return not stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return False


class RunReader:
    """Turn run directory names into rows, reading each ``run.json`` once.

    Task keys repeat across runs (100,000 runs of 1,000 tasks), so the safety check
    of each environment and task id is made once per distinct key.
    """

    def __init__(self, runs_dir: Path) -> None:
        self.runs_dir = runs_dir
        self._root = str(runs_dir)
        self._checked: dict[Key, str | None] = {}

    def read(
        self, name: str, *, dir_fd: int | None = None
    ) -> tuple[Key, Row, StatKey] | Unidentified | None:
        """The run in directory ``name``; Unidentified when it is not usable; None
        when ``name`` is not a directory (a foreign file beside the runs). ``dir_fd``
        is the runs directory held open, when the caller holds it."""
        path = f"{name}/{RUN_FILE}" if dir_fd is not None else f"{self._root}/{name}/{RUN_FILE}"
        try:
            data, key = read_keyed(path, shown=RUN_FILE, limit=RUN_FILE_LIMIT, dir_fd=dir_fd)
        except FileNotFoundError:
            if not os.path.isdir(os.path.join(self._root, name)):
                return None  # a dangling link beside the runs
            return self._unidentified(
                name, f"no {RUN_FILE} (crashed before writing it, or still running)"
            )
        except FileError as exc:
            if exc.kind is not None:
                return self._unidentified(name, f"{RUN_FILE} {exc.reason}")
            if _stats_as_non_directory(os.path.join(self._root, name)):
                return None  # a file beside the runs: "name/run.json" is not a directory
            return self._unidentified(name, f"cannot read {RUN_FILE}: {exc.reason}")
        try:
            meta = orjson.loads(data)
        except orjson.JSONDecodeError:
            return self._unidentified(name, f"{RUN_FILE} is not valid JSON (truncated?)")
        found = self.identify(name, meta)
        if isinstance(found, str):
            return self._unidentified(name, found)
        return found[0], found[1], key

    def identify(self, name: str, meta: Any) -> tuple[Key, Row] | str:
        """The task key and row ``meta`` (a parsed run.json) gives, or why it cannot."""
        if not isinstance(meta, dict):
            return f"{RUN_FILE} is not a JSON object"
        get = meta.get
        environment, task_id, started_at = get("environment"), get("taskId"), get("startedAt")
        # One test for the usual run.json; the loop below only words what is wrong.
        if not (
            isinstance(environment, str)
            and isinstance(task_id, str)
            and isinstance(started_at, str)
        ):
            return _missing_field(environment, task_id, started_at)
        key: Key = (environment, task_id)
        problem = self._checked.get(key, _UNCHECKED)
        if problem is _UNCHECKED:
            problem = self._checked[key] = _key_problem(key)
        if problem is not None:
            return problem
        try:
            started = datetime.fromisoformat(started_at)
        except ValueError:
            return f"{RUN_FILE} startedAt {started_at!r} is not ISO 8601"
        if started.tzinfo is None:
            started = started.replace(tzinfo=UTC)
        return key, ((started - _EPOCH) // _MICROSECOND, name, started_at)

    def _unidentified(self, name: str, reason: str) -> Unidentified:
        return Unidentified(self.runs_dir / name, reason)


def _missing_field(environment: object, task_id: object, started_at: object) -> str:
    for label, value in (
        ("environment", environment),
        ("taskId", task_id),
        ("startedAt", started_at),
    ):
        if not isinstance(value, str):
            return f"{RUN_FILE} has no string {label!r}"
    raise AssertionError("every field is a string")


def _key_problem(key: Key) -> str | None:
    for label, value in zip(("environment", "taskId"), key, strict=True):
        reason = unsafe_reason(value)
        if reason is not None:
            return f"{RUN_FILE} {label} {value!r} is refused: {reason}"
    return None


def read_run(path: Path) -> Run | Unidentified:
    """Identify one run directory from its ``run.json``."""
    reader = RunReader(path.parent)
    found = reader.read(path.name)
    if found is None:
        gone = not os.path.lexists(path)
        return Unidentified(path, NO_RUN_FILE if gone else f"{path.name} is not a directory")
    if isinstance(found, Unidentified):
        return found
    key, row, _ = found
    return RunIndex(path.parent, {key: [row]}).runs_of(*key)[0]


@contextlib.contextmanager
def _listing(runs_dir: Path) -> Iterator[None]:
    """Turn a runs directory that cannot be listed into one sentence naming it."""
    try:
        yield
    except FileNotFoundError:
        raise InputError(f"{runs_dir}: runs directory disappeared while being listed") from None
    except NotADirectoryError:
        raise InputError(f"{runs_dir}: runs directory is a file, not a directory") from None
    except PermissionError:
        raise InputError(f"{runs_dir}: runs directory cannot be read (permission denied)") from None
    except OSError as exc:  # a runs directory that is a symlink loop, an I/O error
        raise InputError(f"{runs_dir}: runs directory cannot be listed: {exc.strerror}") from None


def _may_be_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:  # a symlink loop: let reading its run.json say what it is
        return True


def list_run_dirs(runs_dir: Path) -> list[os.DirEntry[str]]:
    """Run directories: every non-hidden subdirectory (foreign files are skipped)."""
    if not os.path.lexists(runs_dir):
        return []
    with _listing(runs_dir), os.scandir(runs_dir) as entries:
        return [e for e in entries if not e.name.startswith(".") and _may_be_dir(e)]


def list_run_names(runs_dir: Path) -> list[str]:
    """Names under the runs directory that may be runs (hidden names skipped).

    Unlike :func:`list_run_dirs` this does not tell directories from files, which
    costs a stat per entry on some file systems; reading ``NAME/run.json`` fails
    with NotADirectoryError for a foreign file anyway.
    """
    if not os.path.lexists(runs_dir):
        return []
    with _listing(runs_dir):
        return [name for name in os.listdir(runs_dir) if not name.startswith(".")]


def index_runs(runs_dir: Path) -> RunIndex:
    """Read every run's identity under ``runs_dir`` (runcache.index_runs caches it)."""
    reader = RunReader(runs_dir)
    return build_index(runs_dir, (reader.read(name) for name in list_run_names(runs_dir)))


def build_index(
    runs_dir: Path, found: Iterable[tuple[Key, Row, StatKey] | Unidentified | None]
) -> RunIndex:
    rows: dict[Key, list[Row]] = {}
    unidentified: list[Unidentified] = []
    for item in found:
        if item is None:
            continue
        if isinstance(item, Unidentified):
            unidentified.append(item)
            continue
        key, row, _ = item
        group = rows.get(key)
        if group is None:
            rows[key] = [row]
        else:
            group.append(row)
    unidentified.sort(key=lambda u: u.path.name)
    return RunIndex(runs_dir=runs_dir, rows=rows, unidentified=tuple(unidentified))


class UnreadableArtifactError(InputError):
    """A run's artifact exists but is not a readable regular file (a directory, FIFO, device).

    ``reason`` follows the file's name: ``x/result.json is a FIFO, not a regular file``.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path} {reason}")
        self.reason = reason


def read_artifact(
    run: Run, artifact: str, *, trace_events: Iterable[str] = DEFAULT_TRACE_EVENTS
) -> bytes | None:
    """The artifact's bytes, or None when the run did not write it.

    Raises :class:`UnreadableArtifactError` when it is there but is not a readable
    regular file: never blocks on a FIFO, never reads a device. A derived artifact
    (``tool-events.json``) is computed from the run's other files;
    :class:`~silo_regress.runs.toolpath.IncompleteTraceError` says why a run has none.
    """
    if is_derived(artifact):
        from silo_regress.runs.toolpath import read_tool_path  # only a tool path needs the reader

        return read_tool_path(run.path, events=trace_events)
    path = f"{run.path}{os.sep}{artifact}"  # os.path.join costs more, per artifact
    try:
        return read_regular(path, shown=path, limit=ARTIFACT_LIMIT)
    except FileNotFoundError:
        return None
    except FileError as exc:
        why = exc.reason if exc.kind is not None else f"cannot be read: {exc.reason}"
        raise UnreadableArtifactError(path, why) from None


def result_is_complete(run: Run) -> bool:
    """True when the run has a complete, parseable ``result.json`` object."""
    try:
        data = read_artifact(run, RESULT_FILE)
    except UnreadableArtifactError:
        return False
    if data is None:
        return False
    try:
        return isinstance(orjson.loads(data), dict)
    except orjson.JSONDecodeError:
        from silo_regress.canon.canonical import parse

        try:
            return isinstance(parse(data, source=str(run.path / RESULT_FILE)), dict)
        except InputError:
            return False


def newest_complete(index: RunIndex, environment: str, task_id: str) -> Run | None:
    for run in index.runs_of(environment, task_id):
        if result_is_complete(run):
            return run
    return None


def discard_dir(runs_dir: Path) -> Path:
    return runs_dir / DISCARD_DIR
