"""Find Silo run directories, tell which task each belongs to, and pick the newest.

A run's directory name is opaque (SILO_FORMAT.md): runs are ordered by the
``startedAt`` of their ``run.json``, then by name. A directory whose ``run.json``
is missing or unreadable cannot be tied to a task; it is kept aside as
*unidentified* so commands can warn about it instead of guessing.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from silo_regress.errors import InputError, TaskRefError
from silo_regress.taskref import TaskRef, unsafe_reason

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


@dataclass(frozen=True)
class RunIndex:
    """Every run under a runs directory, grouped by (environment, task id), newest first."""

    runs_dir: Path
    by_task: Mapping[tuple[str, str], tuple[Run, ...]]
    unidentified: tuple[Unidentified, ...] = ()

    @property
    def exists(self) -> bool:
        return self.runs_dir.is_dir()

    def runs_of(self, environment: str, task_id: str) -> tuple[Run, ...]:
        return self.by_task.get((environment, task_id), ())

    def newest(self, environment: str, task_id: str) -> Run | None:
        # runcache.RunTable picks the newest run without building all of them.
        pick = getattr(self.by_task, "newest", None)
        if pick is not None:
            found: Run | None = pick((environment, task_id))
            return found
        runs = self.runs_of(environment, task_id)
        return runs[0] if runs else None

    @functools.cached_property
    def _environments(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for env, task in self.by_task:
            found.setdefault(task, []).append(env)
        return {task: sorted(envs) for task, envs in found.items()}

    def environments_of(self, task_id: str) -> list[str]:
        return list(self._environments.get(task_id, ()))

    def task_keys(self) -> list[tuple[str, str]]:
        return sorted(self.by_task)

    def find(self, name: str) -> Run | None:
        for runs in self.by_task.values():
            for run in runs:
                if run.name == name:
                    return run
        return None

    def resolve(self, ref: TaskRef, *, default_environment: str | None) -> tuple[str, str] | None:
        """The (environment, task id) a ref means, or None when no run names it.

        Raises :class:`TaskRefError` when an unqualified ref matches runs of
        several environments and none is configured.
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
                "or set 'environment' in [tool.silo-regress]"
            )
        return (environments[0], ref.task_id) if environments else None


def read_run(path: Path) -> Run | Unidentified:
    """Identify one run directory from its ``run.json``."""
    run_file = path / RUN_FILE
    try:
        data = run_file.read_bytes()
    except FileNotFoundError:
        return Unidentified(path, f"no {RUN_FILE} (crashed before writing it, or still running)")
    except OSError as exc:
        return Unidentified(path, f"cannot read {RUN_FILE}: {exc.strerror}")
    try:
        meta = orjson.loads(data)
    except orjson.JSONDecodeError:
        return Unidentified(path, f"{RUN_FILE} is not valid JSON (truncated?)")
    return identify(path, meta)


def identify(path: Path, meta: Any) -> Run | Unidentified:
    if not isinstance(meta, dict):
        return Unidentified(path, f"{RUN_FILE} is not a JSON object")
    values = {}
    for key in ("environment", "taskId", "startedAt"):
        value = meta.get(key)
        if not isinstance(value, str):
            return Unidentified(path, f"{RUN_FILE} has no string {key!r}")
        values[key] = value
    for key in ("environment", "taskId"):
        reason = unsafe_reason(values[key])
        if reason is not None:
            return Unidentified(path, f"{RUN_FILE} {key} {values[key]!r} is refused: {reason}")
    started = parse_started(values["startedAt"])
    if started is None:
        return Unidentified(path, f"{RUN_FILE} startedAt {values['startedAt']!r} is not ISO 8601")
    return Run(
        name=path.name,
        path=path,
        environment=values["environment"],
        task_id=values["taskId"],
        started_at=values["startedAt"],
        started=started,
    )


def parse_started(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment


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


def list_run_dirs(runs_dir: Path) -> list[os.DirEntry[str]]:
    """Run directories: every non-hidden subdirectory (foreign files are skipped)."""
    if not os.path.lexists(runs_dir):
        return []
    with _listing(runs_dir), os.scandir(runs_dir) as entries:
        return [e for e in entries if not e.name.startswith(".") and e.is_dir()]


def list_run_names(runs_dir: Path) -> list[str]:
    """Names under the runs directory that may be runs (hidden names skipped).

    Unlike :func:`list_run_dirs` this does not tell directories from files, which
    costs a stat per entry on some file systems; the caller's stat of
    ``NAME/run.json`` fails with NotADirectoryError for a foreign file anyway.
    """
    if not os.path.lexists(runs_dir):
        return []
    with _listing(runs_dir):
        return [name for name in os.listdir(runs_dir) if not name.startswith(".")]


def index_runs(runs_dir: Path) -> RunIndex:
    """Read every run's identity under ``runs_dir`` (runcache.index_runs caches it)."""
    found: list[Run | Unidentified] = [
        read_run(Path(entry.path)) for entry in list_run_dirs(runs_dir)
    ]
    return build_index(runs_dir, found)


def build_index(runs_dir: Path, found: Iterable[Run | Unidentified]) -> RunIndex:
    grouped: dict[tuple[str, str], list[Run]] = {}
    unidentified: list[Unidentified] = []
    for item in found:
        if isinstance(item, Run):
            grouped.setdefault(item.key, []).append(item)
        else:
            unidentified.append(item)
    by_task = {
        key: tuple(sorted(runs, key=lambda r: r.order, reverse=True))
        for key, runs in grouped.items()
    }
    unidentified.sort(key=lambda u: u.path.name)
    return RunIndex(runs_dir=runs_dir, by_task=by_task, unidentified=tuple(unidentified))


def read_artifact(run: Run, artifact: str) -> bytes | None:
    """The artifact's bytes, or None when the run did not write it."""
    path = os.path.join(run.path, artifact)
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None


def result_is_complete(run: Run) -> bool:
    """True when the run has a complete, parseable ``result.json`` object."""
    data = read_artifact(run, RESULT_FILE)
    if data is None:
        return False
    try:
        return isinstance(orjson.loads(data), dict)
    except orjson.JSONDecodeError:
        from silo_regress.canonical import parse

        try:
            return isinstance(parse(data, source=str(run.path / RESULT_FILE)), dict)
        except InputError:
            return False


def newest_complete(index: RunIndex, environment: str, task_id: str) -> Run | None:
    for run in index.runs_of(environment, task_id):
        if result_is_complete(run):
            return run
    return None


def require_task(
    index: RunIndex, ref: TaskRef, *, default_environment: str | None
) -> tuple[str, str]:
    key = index.resolve(ref, default_environment=default_environment)
    if key is None or not index.runs_of(*key):
        where = index.runs_dir
        if not index.exists:
            raise TaskRefError(f"{where}: runs directory does not exist, so task {ref} has no runs")
        raise TaskRefError(f"{where}: no run of task {ref} (run.json files name its task)")
    return key
