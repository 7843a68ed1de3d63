"""A cache of run identities, so a runs directory of 100,000 runs is not re-read every call.

What ``run.json`` says (environment, task, start) is stored per run directory in
``<runs dir>/.silo-regress-cache``, keyed by the directory name and the
``run.json`` file's mtime (ns), ctime (ns), size and inode. Every call still
stats every ``run.json``: a file changed after it was cached has another key and
is read again, so the cache is never trusted over the files it describes.

- An entry written less than :data:`RACY_NS` before its scan is not trusted
  (a file rewritten within the file system's timestamp granularity could keep
  its mtime); it is re-read until a later scan can vouch for it, as git does with
  racily clean index entries.
- A missing, unreadable, corrupt or foreign cache is ignored and rebuilt silently.
- It is written only when something changed, to a temporary file renamed over the
  old one, so readers and concurrent writers see a whole cache or the previous one
  (last writer wins). A runs directory that cannot be written is simply not cached:
  the cache only ever speeds a command up, it never fails one.
- Small runs directories (under :data:`MIN_RUNS` runs) are not cached at all:
  reading them is as fast as the cache, and nothing is added beside a few runs.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import tempfile
import time
import zlib
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from silo_regress.filestat import map_in_halves
from silo_regress.runs import (
    RUN_FILE,
    Run,
    RunIndex,
    Unidentified,
    build_index,
    list_run_dirs,
    list_run_names,
    parse_started,
    read_run,
)
from silo_regress.taskref import unsafe_reason

CACHE_FILE = ".silo-regress-cache"
CACHE_FORMAT = 1
MIN_RUNS = 200
RACY_NS = 2_000_000_000

Key = tuple[str, str]
Row = Run | int


class RunTable(Mapping[Key, tuple[Run, ...]]):
    """Runs grouped by task, built into :class:`Run` values only when a task is asked for.

    A check of 1,000 tasks needs each task's newest run; making 100,000 ``Run``
    values and paths it never looks at would cost more than the lookup itself.
    A row is a :class:`Run` (read just now) or the position of the run in the
    cache it was found in.
    """

    def __init__(self, runs_dir: Path, rows: dict[Key, list[Row]], cache: _Cache) -> None:
        self._runs_dir = runs_dir
        self._rows = rows
        self._cache = cache
        self._started: array[int] | None = None  # the started column, made on first use
        self._built: dict[Key, tuple[Run, ...]] = {}

    def __getitem__(self, key: Key) -> tuple[Run, ...]:
        built = self._built.get(key)
        if built is None:
            runs = [run for row in self._rows[key] if (run := self._run(key, row)) is not None]
            runs.sort(key=lambda r: r.order, reverse=True)
            built = self._built[key] = tuple(runs)
        return built

    def newest(self, key: Key) -> Run | None:
        """The task's newest run, building only that one."""
        if key in self._built:
            return self._built[key][0] if self._built[key] else None
        rows = self._rows.get(key)
        if not rows:
            return None
        run = self._run(key, self._newest_row(rows))
        if run is None:  # a cache entry that does not hold up: build them all
            runs = self[key]
            return runs[0] if runs else None
        return run

    def _newest_row(self, rows: list[Row]) -> Row:
        cached = [r for r in rows if not isinstance(r, Run)]
        candidates: list[Row] = [r for r in rows if isinstance(r, Run)]
        if cached:
            if self._started is None:
                self._started = self._cache.ints[_FIELDS - 1 :: _FIELDS]
            started = self._started
            top = started[max(cached, key=started.__getitem__)]
            candidates += [r for r in cached if started[r] == top]
        return max(candidates, key=self._order)

    def _order(self, row: Row) -> tuple[int, str]:
        if isinstance(row, Run):
            return (microseconds(row.started), row.name)
        return (self._cache.ints[row * _FIELDS + 5], self._cache.names[row])

    def _run(self, key: Key, row: Row) -> Run | None:
        if isinstance(row, Run):
            return row
        name, started_at = self._cache.names[row], self._cache.started_at[row]
        started = parse_started(started_at)
        if started is None or microseconds(started) != self._cache.ints[row * _FIELDS + 5]:
            # A cache edited by hand: believe the file instead.
            found = read_run(self._runs_dir / name)
            return found if isinstance(found, Run) and found.key == key else None
        return Run(
            name=name,
            path=self._runs_dir / name,
            environment=key[0],
            task_id=key[1],
            started_at=started_at,
            started=started,
        )

    def __iter__(self) -> Iterator[Key]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, key: object) -> bool:
        return key in self._rows


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def microseconds(moment: datetime) -> int:
    """Exact microseconds since the epoch: the order of ``Run.order`` as an int."""
    return (moment - _EPOCH) // _MICROSECOND


MAGIC = b"silo-regress run cache\n"
_FIELDS = 6  # mtime_ns, ctime_ns, size, inode, task number, started (microseconds)


@dataclass
class _Cache:
    """Columns of the cache: run i is ``names[i]``, ``ints[6i:6i+6]``, ``started_at[i]``."""

    scanned: int
    tasks: list[Key] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    ints: array[int] = field(default_factory=lambda: array("q"))
    started_at: list[str] = field(default_factory=list)


def load_cache(runs_dir: Path) -> _Cache:
    """The cache as last written; empty when missing, unreadable, corrupt or foreign.

    One JSON header line, then the integer columns as native 64-bit values and
    the two string columns joined by newlines, all guarded by a CRC.
    """
    empty = _Cache(0)
    try:
        data = (runs_dir / CACHE_FILE).read_bytes()
        if not data.startswith(MAGIC):
            return empty
        end = data.index(b"\n", len(MAGIC))
        header = orjson.loads(data[len(MAGIC) : end])
        body = memoryview(data)[end + 1 :]
        count, int_bytes, name_bytes = header["count"], header["ints"], header["names"]
        if (
            header["format"] != CACHE_FORMAT
            or header["byteorder"] != sys.byteorder
            or int_bytes != count * _FIELDS * 8
            or zlib.crc32(body) != header["crc"]
            or not isinstance(header["scanned"], int)
        ):
            return empty
        ints = array("q")
        ints.frombytes(body[:int_bytes])
        names_blob = bytes(body[int_bytes : int_bytes + name_bytes]).decode("utf-8")
        started_blob = bytes(body[int_bytes + name_bytes :]).decode("utf-8")
        names = names_blob.split("\n") if count else []
        started_at = started_blob.split("\n") if count else []
        tasks = [_task(pair) for pair in header["tasks"]]
    except (OSError, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        return empty
    if len(names) != count or len(started_at) != count:
        return empty
    return _Cache(header["scanned"], tasks, names, ints, started_at)


def _task(pair: Any) -> Key:
    if (
        isinstance(pair, list)
        and len(pair) == 2
        and all(isinstance(p, str) and unsafe_reason(p) is None for p in pair)
    ):
        return (pair[0], pair[1])
    raise ValueError("not a task key")


def save_cache(runs_dir: Path, cache: _Cache) -> bool:
    """Write the cache atomically; False (and nothing written) when that is not possible."""
    ints = cache.ints.tobytes()
    names = "\n".join(cache.names).encode("utf-8")
    started = "\n".join(cache.started_at).encode("utf-8")
    body = ints + names + started
    header = {
        "format": CACHE_FORMAT,
        "byteorder": sys.byteorder,
        "scanned": cache.scanned,
        "count": len(cache.names),
        "ints": len(ints),
        "names": len(names),
        "crc": zlib.crc32(body),
        "tasks": cache.tasks,
    }
    data = MAGIC + orjson.dumps(header) + b"\n" + body
    try:
        fd, tmp = tempfile.mkstemp(prefix=f"{CACHE_FILE}.", suffix=".tmp", dir=runs_dir)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        # No fsync: a cache torn by a power cut fails its CRC and is rebuilt.
        os.replace(tmp, runs_dir / CACHE_FILE)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    return True


def index_runs(runs_dir: Path) -> RunIndex:
    """Every run under ``runs_dir``: :func:`silo_regress.runs.index_runs`, cached."""
    return index_runs_cached(runs_dir)


def index_runs_cached(
    runs_dir: Path, *, min_runs: int = MIN_RUNS, racy_ns: int = RACY_NS
) -> RunIndex:
    """Every run under ``runs_dir``, identified through the cache when there are many."""
    names = list_run_names(runs_dir)
    if len(names) < min_runs:
        entries = list_run_dirs(runs_dir)
        return build_index(runs_dir, [read_run(Path(entry.path)) for entry in entries])
    return _scan(runs_dir, names, racy_ns=racy_ns)


def _scan(runs_dir: Path, names: list[str], *, racy_ns: int) -> RunIndex:
    old = load_cache(runs_dir)
    scanned = time.time_ns()
    position = {name: i for i, name in enumerate(old.names)}
    # Runs whose cached entry still holds, by the task number they were cached under.
    kept: list[list[int]] = [[] for _ in old.tasks]
    fresh: list[tuple[Run, tuple[int, int, int, int]]] = []
    unidentified: list[Unidentified] = []
    ints = old.ints
    codes = _classify(runs_dir, names, old, position, racy_ns)
    if _unchanged(codes, old):
        return RunIndex(runs_dir=runs_dir, by_task=RunTable(runs_dir, _cached_rows(old), old))
    for name, code in zip(names, codes, strict=True):
        if code >= 0:
            kept[ints[code * _FIELDS + 4]].append(code)
            continue
        if code == _FOREIGN:
            continue  # a file beside the runs (notes.txt, .DS_Store)
        if code != _READ:
            error = _ERROR_BASE - code
            unidentified.append(_unreadable(runs_dir / name, OSError(error, os.strerror(error))))
            continue
        # The key is a stat taken before the read: if the file changes in between,
        # the next scan sees another key and reads it again.
        try:
            st = os.stat(runs_dir / name / RUN_FILE)
        except OSError as exc:
            unidentified.append(_unreadable(runs_dir / name, exc))
            continue
        found = read_run(runs_dir / name)
        if isinstance(found, Unidentified):
            unidentified.append(found)
        else:
            fresh.append((found, (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)))
    rows: dict[Key, list[Row]] = {}
    for number, indices in enumerate(kept):
        if indices:
            rows.setdefault(old.tasks[number], []).extend(indices)
    for run, _ in fresh:
        rows.setdefault(run.key, []).append(run)
    if fresh or sum(map(len, kept)) != len(old.names):
        save_cache(runs_dir, _rebuilt(old, kept, fresh, scanned))
    unidentified.sort(key=lambda u: u.path.name)
    table = RunTable(runs_dir, rows, old)
    return RunIndex(runs_dir=runs_dir, by_task=table, unidentified=tuple(unidentified))


def _unchanged(codes: array[int], old: _Cache) -> bool:
    """Every cached entry still holds and nothing is new: checked at C speed."""
    foreign = codes.count(_FOREIGN)
    return (
        len(codes) - foreign == len(old.names)
        and (not codes or min(codes) >= _FOREIGN)
        and codes.count(_READ) == 0
    )


def _cached_rows(old: _Cache) -> dict[Key, list[Row]]:
    """The cache's own grouping of runs by task, without a Python pass per run."""
    rows: dict[Key, list[Row]] = {}
    start = 0
    for task, group in itertools.groupby(old.ints[4::_FIELDS]):
        count = len(list(group))
        rows.setdefault(old.tasks[task], []).extend(range(start, start + count))
        start += count
    return rows


# What _classify says of each run directory: a cache position (>= 0) whose entry
# still holds, or one of these.
_READ = -1  # not cached, changed since, or too recent to trust: read its run.json
_FOREIGN = -2  # a file beside the runs, not a directory
_ERROR_BASE = -3  # -3 - errno: run.json cannot be stat'ed


def _classify(
    runs_dir: Path, names: list[str], old: _Cache, position: dict[str, int], racy_ns: int
) -> array[int]:
    """Stat every run.json and compare it with its cache entry, in two processes."""
    root = str(runs_dir)
    ints, task_count, racy_before = old.ints, len(old.tasks), old.scanned - racy_ns

    def classify(chunk: Sequence[str]) -> array[int]:
        out = array("q")
        append, stat, get = out.append, os.stat, position.get
        for name in chunk:
            try:
                st = stat(f"{root}/{name}/{RUN_FILE}")
            except NotADirectoryError:
                append(_FOREIGN)
                continue
            except OSError as exc:
                append(_ERROR_BASE - (exc.errno or 1))
                continue
            i = get(name)
            if i is not None:
                at = i * _FIELDS
                if (
                    ints[at] == st.st_mtime_ns
                    and ints[at + 1] == st.st_ctime_ns
                    and ints[at + 2] == st.st_size
                    and ints[at + 3] == st.st_ino
                    and st.st_mtime_ns <= racy_before
                    and st.st_ctime_ns <= racy_before
                    and 0 <= ints[at + 4] < task_count
                ):
                    append(i)
                    continue
            append(_READ)
        return out

    return map_in_halves(classify, names)


def _rebuilt(
    old: _Cache,
    kept: list[list[int]],
    fresh: list[tuple[Run, tuple[int, int, int, int]]],
    scanned: int,
) -> _Cache:
    new = _Cache(scanned)
    numbers: dict[Key, int] = {}

    def number(key: Key) -> int:
        if key not in numbers:
            numbers[key] = len(new.tasks)
            new.tasks.append(key)
        return numbers[key]

    for old_number, indices in enumerate(kept):
        if not indices:
            continue
        task = number(old.tasks[old_number])
        for i in indices:
            at = i * _FIELDS
            new.names.append(old.names[i])
            new.ints.extend((*old.ints[at : at + 4], task, old.ints[at + 5]))
            new.started_at.append(old.started_at[i])
    # Sorted by task, so a task's runs sit together and _cached_rows finds few groups.
    for run, st in sorted(fresh, key=lambda item: item[0].key):
        if "\n" in run.name or "\n" in run.started_at:
            continue  # cannot be stored in a newline-joined column; read every time
        # The key is the stat taken before the read: if the file changed in
        # between, the next scan sees another key and reads it again.
        new.names.append(run.name)
        new.ints.extend((*st, number(run.key), microseconds(run.started)))
        new.started_at.append(run.started_at)
    return new


def _unreadable(path: Path, exc: OSError) -> Unidentified:
    if isinstance(exc, FileNotFoundError):
        return Unidentified(path, f"no {RUN_FILE} (crashed before writing it, or still running)")
    return Unidentified(path, f"cannot read {RUN_FILE}: {exc.strerror}")
