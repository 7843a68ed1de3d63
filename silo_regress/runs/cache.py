"""A cache of run identities, so a runs directory of 100,000 runs is not re-read every call.

What ``run.json`` says (environment, task, start) is stored per run directory in
``<runs dir>/.silo-regress-cache``, keyed by the directory name and the
``run.json`` file's mtime (ns), ctime (ns), size and inode. Every call still
stats every ``run.json``: a file changed after it was cached has another key and
is read again, so the cache is never trusted over the files it describes.

- A run whose ``run.json`` changed less than :data:`RACY_NS` before the scan that
  read it is not written to the cache (a file rewritten within the file system's
  timestamp granularity could keep its mtime): it is read again until a later
  scan can vouch for it, as git does with racily clean index entries.
- A missing, unreadable, corrupt or foreign cache is ignored and rebuilt silently;
  so is one that is not a regular file (a FIFO there would block every command).
- It is written only when something changed, to a temporary file renamed over the
  old one, so readers and concurrent writers see a whole cache or the previous one
  (last writer wins). A runs directory that cannot be written is simply not cached:
  the cache only ever speeds a command up, it never fails one.
- Small runs directories (under :data:`MIN_RUNS` runs) are not cached at all:
  reading them is as fast as the cache, and nothing is added beside a few runs.

The file is a line ``silo-regress run cache <format> <crc32>``, a line of JSON (the
task keys, the position of each task's newest run, the sizes of what follows), the
run names and their startedAt texts (each NUL-separated; neither can hold a NUL),
then one column of 64-bit integers per field of :class:`Columns`. Columns, not a JSON row per run:
loading 100,000 rows as JSON lists took 150 ms, a column is one copy. When every
cached run is still there, unchanged, and none is new, the index is answered from
the stored newest runs, and a task's other runs are grouped only when asked for.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import zlib
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from silo_regress.project.taskref import unsafe_reason
from silo_regress.runs.index import (
    RUN_FILE,
    Key,
    Row,
    RunIndex,
    RunReader,
    Unidentified,
    build_index,
    list_run_names,
)
from silo_regress.system.cpus import Forked, split_workers
from silo_regress.system.fsio import FileError, StatKey, read_regular

CACHE_FILE = ".silo-regress-cache"
CACHE_FORMAT = 3
CACHE_LIMIT = 1 << 30
MIN_RUNS = 200
SPLIT_RUNS = 4000  # a forked child costs a few ms; below this it does not pay
RACY_NS = 2_000_000_000
MAGIC = b"silo-regress run cache %d " % CACHE_FORMAT
# 64-bit integers in this machine's byte order, which the JSON line names: a cache
# written on another machine is ignored.
_TYPECODE = "q"
_WIDTH = 8
_SEP = "\0"
# Directory names that are not UTF-8 come from os.listdir with lone surrogates.
_ERRORS = "surrogatepass"
# Inodes are unsigned 64-bit; the cache keeps the low 63 bits, which with the
# times in nanoseconds and the size still tell a replaced file from the old one.
INODE_MASK = (1 << 63) - 1
# The columns after the strings, by how many values each holds per run.
_PER_RUN = {"stat": 4, "task": 1, "started": 1}


class Columns(NamedTuple):
    """Values per cached run, by position: the stat key of its ``run.json`` (mtime ns,
    ctime ns, size, inode: four values from ``4 * position``), the number of its task
    (an index into :attr:`Cache.tasks`) and its start in microseconds."""

    stat: array[int]
    task: array[int]
    started: array[int]


def _empty_columns() -> Columns:
    return Columns(array(_TYPECODE), array(_TYPECODE), array(_TYPECODE))


@dataclass(frozen=True)
class Cache:
    """The cache as read: when it was scanned, the task keys with the position of each
    one's newest run (-1 for a task no cached run names any more), and the runs."""

    scanned: int = 0
    tasks: list[Key] = field(default_factory=list)
    newest: list[int] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    started_at: list[str] = field(default_factory=list)
    columns: Columns = field(default_factory=_empty_columns)

    def __len__(self) -> int:
        return len(self.names)

    def row(self, at: int) -> Row:
        return (self.columns.started[at], self.names[at], self.started_at[at])


def load_cache(runs_dir: Path) -> Cache:
    """The cache as last written; empty when missing, unreadable, corrupt or foreign."""
    try:
        path = os.path.join(runs_dir, CACHE_FILE)
        data = read_regular(path, shown=path, limit=CACHE_LIMIT)
        if not data.startswith(MAGIC):
            return Cache()
        end = data.index(b"\n", len(MAGIC))
        body = memoryview(data)[end + 1 :]
        if int(data[len(MAGIC) : end], 16) != zlib.crc32(body):
            return Cache()
        return _decode(data, end + 1)
    except (OSError, FileError, ValueError, KeyError, TypeError, IndexError, OverflowError):
        return Cache()


def _decode(data: bytes, start: int) -> Cache:
    """The cache whose JSON line starts at ``start``; raises on anything malformed
    (a CRC that holds only says the file is as some writer wrote it)."""
    cut = data.index(b"\n", start)
    head = orjson.loads(data[start:cut])
    if head["byteorder"] != sys.byteorder:
        raise ValueError("a cache written on another machine")
    count, names_size, starts_size = head["count"], head["names"], head["startedAt"]
    scanned = head["scanned"]
    if not all(isinstance(n, int) and n >= 0 for n in (count, names_size, starts_size, scanned)):
        raise ValueError("not a cache")
    at = cut + 1
    names = _strings(data[at : at + names_size], count)
    at += names_size
    started_at = _strings(data[at : at + starts_size], count)
    at += starts_size
    if len(data) - at != sum(_PER_RUN.values()) * _WIDTH * count:
        raise ValueError("columns cut short")
    view = memoryview(data)
    columns = []
    for per_run in _PER_RUN.values():
        column = array(_TYPECODE)
        column.frombytes(view[at : at + per_run * _WIDTH * count])
        columns.append(column)
        at += per_run * _WIDTH * count
    tasks = [_task(pair) for pair in head["tasks"]]
    newest = head["newest"]
    numbers = columns[1]
    if (
        len(newest) != len(tasks)
        or not all(type(at) is int and -1 <= at < count for at in newest)
        or (count and (min(numbers) < 0 or max(numbers) >= len(tasks)))
    ):
        raise ValueError("a task number or position out of range")
    return Cache(scanned, tasks, newest, names, started_at, Columns(*columns))


def _strings(data: bytes, count: int) -> list[str]:
    if not count:
        if data:
            raise ValueError("strings for no runs")
        return []
    texts = data.decode("utf-8", _ERRORS).split(_SEP)
    if len(texts) != count:
        raise ValueError("not one string per run")
    return texts


def _task(pair: Any) -> Key:
    if (
        isinstance(pair, list)
        and len(pair) == 2
        and all(isinstance(p, str) and unsafe_reason(p) is None for p in pair)
    ):
        return (pair[0], pair[1])
    raise ValueError("not a task key")


def encode_cache(cache: Cache) -> bytes:
    """The bytes :func:`load_cache` reads back as ``cache``."""
    names = _SEP.join(cache.names).encode("utf-8", _ERRORS)
    starts = _SEP.join(cache.started_at).encode("utf-8", _ERRORS)
    head = {
        "byteorder": sys.byteorder,
        "scanned": cache.scanned,
        "count": len(cache.names),
        "names": len(names),
        "startedAt": len(starts),
        "tasks": cache.tasks,
        "newest": cache.newest,
    }
    body = b"".join(
        [orjson.dumps(head), b"\n", names, starts, *(c.tobytes() for c in cache.columns)]
    )
    return MAGIC + b"%08x\n" % zlib.crc32(body) + body


def save_cache(runs_dir: Path, cache: Cache) -> bool:
    """Write the cache atomically; False (and nothing written) when that is not possible."""
    data = encode_cache(cache)
    import tempfile  # a warm check writes nothing: only a write pays for it

    try:
        fd, tmp = tempfile.mkstemp(prefix=f"{CACHE_FILE}.", suffix=".tmp", dir=runs_dir)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        # No fsync: a cache torn by a power cut fails its CRC and is rebuilt.
        os.replace(tmp, os.path.join(runs_dir, CACHE_FILE))
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    return True


def index_runs(runs_dir: Path) -> RunIndex:
    """Every run under ``runs_dir``: :func:`silo_regress.runs.index.index_runs`, cached."""
    return index_runs_cached(runs_dir)


def index_runs_cached(
    runs_dir: Path,
    *,
    min_runs: int = MIN_RUNS,
    racy_ns: int = RACY_NS,
    workers: int | None = None,
) -> RunIndex:
    """Every run under ``runs_dir``, identified through the cache when there are many.

    ``workers`` (default: :func:`workers_for` the runs found) is 1 or 2: with 2, a
    forked child scans half of the runs while this process scans the other half.
    """
    names = list_run_names(runs_dir)
    if len(names) < min_runs:
        reader = RunReader(runs_dir)
        return build_index(runs_dir, (reader.read(name) for name in names))
    old = load_cache(runs_dir)
    if workers is None:
        workers = workers_for(len(names))
    return _scan(runs_dir, names, old, racy_ns=racy_ns, workers=workers)


def workers_for(runs: int) -> int:
    """How many processes scan ``runs`` runs (:func:`silo_regress.system.cpus.split_workers`)."""
    return split_workers(runs, minimum=SPLIT_RUNS)


# A run read just now, with the stat key its cache entry gets.
Fresh = tuple[Key, Row, StatKey]
_ROW, _STAT = itemgetter(1), itemgetter(2)


class _Part:
    """What scanning some of the runs found: the names whose cache entry did not hold
    (new, changed, gone from the cache or not runs at all), and what reading them gave.

    A plain class: an accumulator, not a value (and a dataclass costs a millisecond
    of every command's start-up to build).
    """

    __slots__ = ("fresh", "missed", "unidentified")

    def __init__(self) -> None:
        self.missed: list[str] = []
        self.fresh: list[Fresh] = []
        self.unidentified: list[Unidentified] = []


def _scan_part(runs_dir: Path, names: list[str], old: Cache, positions: dict[str, int]) -> _Part:
    """Stat each run's ``run.json`` against its cache entry; read the ones that changed."""
    reader = RunReader(runs_dir)
    stat, get = os.stat, positions.get
    keys, mask = old.columns.stat, INODE_MASK
    part = _Part()
    missed, fresh, unidentified = part.missed, part.fresh, part.unidentified
    # Relative to the runs directory held open: the kernel then walks two names per
    # run, not the whole path (7% of a warm stat on a path six directories deep);
    # the same for each run.json read.
    fd = _open_directory(runs_dir)
    prefix = "" if fd is not None else f"{runs_dir}/"
    try:
        for name in names:
            at = get(name)
            if at is not None:
                try:
                    st = stat(f"{prefix}{name}/{RUN_FILE}", dir_fd=fd)
                except OSError:
                    pass  # reading it again says why
                else:
                    at *= 4
                    if (
                        st.st_mtime_ns == keys[at]
                        and st.st_ctime_ns == keys[at + 1]
                        and st.st_size == keys[at + 2]
                        and st.st_ino & mask == keys[at + 3]
                    ):
                        continue
            missed.append(name)
            found = reader.read(name, dir_fd=fd)
            if found is None:
                continue  # a file beside the runs (notes.txt, .DS_Store)
            if isinstance(found, Unidentified):
                unidentified.append(found)
            else:
                fresh.append(found)
    finally:
        if fd is not None:
            os.close(fd)
    return part


def _open_directory(path: Path) -> int | None:
    """The runs directory held open for stats relative to it; None where that cannot be."""
    if os.stat not in os.supports_dir_fd:
        return None
    try:
        return os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
    except OSError:
        return None


def _scan(runs_dir: Path, names: list[str], old: Cache, *, racy_ns: int, workers: int) -> RunIndex:
    scanned = time.time_ns()
    positions = dict(zip(old.names, range(len(old)), strict=True))
    half = len(names) // 2 if workers > 1 else len(names)
    theirs, mine = names[half:], names[:half]
    child = None
    if theirs:
        import pickle  # only a split pays for it

        child = Forked(
            lambda: pickle.dumps(
                _scan_part(runs_dir, theirs, old, positions), protocol=pickle.HIGHEST_PROTOCOL
            )
        )
    parts = [_scan_part(runs_dir, mine, old, positions)]
    if theirs:
        parts.append(_child_part(child, runs_dir, theirs, old, positions))
    missed: list[str] = []
    fresh: list[Fresh] = []
    unidentified: list[Unidentified] = []
    for part in parts:
        missed += part.missed
        fresh += part.fresh
        unidentified += part.unidentified
    unidentified.sort(key=lambda u: u.path.name)
    if not fresh and len(names) - len(missed) == len(old):
        # Every cached run is there, unchanged, and no run is new: the cache is the index.
        return RunIndex(
            runs_dir=runs_dir,
            rows=CachedRows(old),
            unidentified=tuple(unidentified),
            newest_rows={
                k: old.row(at) for k, at in zip(old.tasks, old.newest, strict=True) if at >= 0
            },
        )
    gone = set(missed)
    kept = [positions[name] for name in names if name not in gone] if len(old) else []
    rows: dict[Key, list[Row]] = {}
    tasks, numbers, row = old.tasks, old.columns.task, old.row
    for at in kept:
        key = tasks[numbers[at]]
        group = rows.get(key)
        if group is None:
            rows[key] = [row(at)]
        else:
            group.append(row(at))
    # Grouped and numbered in one pass: a key tuple's hash is computed on every lookup.
    numbered = {key: n for n, key in enumerate(old.tasks)}
    slots: dict[Key, tuple[list[Row], int]] = {}
    task_of: list[int] = []
    for key, run_row, _ in fresh:
        slot = slots.get(key)
        if slot is None:
            group = rows.get(key)
            if group is None:
                group = rows[key] = []
            slot = slots[key] = (group, numbered.setdefault(key, len(numbered)))
        slot[0].append(run_row)
        task_of.append(slot[1])
    rebuilt = _rebuilt(
        old, kept, fresh, rows, numbers=numbered, task_of=task_of, scanned=scanned, racy_ns=racy_ns
    )
    save_cache(runs_dir, rebuilt)
    return RunIndex(runs_dir=runs_dir, rows=rows, unidentified=tuple(unidentified))


def _child_part(
    child: Forked | None, runs_dir: Path, names: list[str], old: Cache, positions: dict[str, int]
) -> _Part:
    """The child's part; when it failed (or none was started), the same scan done here."""
    data = child.result() if child is not None else None
    if data is not None:
        import pickle

        with contextlib.suppress(pickle.UnpicklingError, EOFError):
            part = pickle.loads(data)
            if isinstance(part, _Part):
                return part
    return _scan_part(runs_dir, names, old, positions)


def _rebuilt(
    old: Cache,
    kept: list[int],
    fresh: list[Fresh],
    rows: dict[Key, list[Row]],
    *,
    numbers: dict[Key, int],
    task_of: list[int],
    scanned: int,
    racy_ns: int,
) -> Cache:
    """The cache of the runs ``kept`` (positions in ``old``) and ``fresh``, less the fresh
    ones changed within ``racy_ns`` of the scan, which cannot be vouched for; ``rows``
    is the index of all of them, ``numbers`` every task's number (the old ones kept:
    a task no run names any more costs one unused pair, its newest -1) and
    ``task_of`` the number of each fresh run's task."""
    trusted_before = scanned - racy_ns
    stat, task, started = old.columns
    if len(kept) == len(old):  # only new runs: the old columns are copied whole
        names, started_at = list(old.names), list(old.started_at)
        columns = Columns(stat[:], task[:], started[:])
    else:
        names = [old.names[at] for at in kept]
        started_at = [old.started_at[at] for at in kept]
        columns = Columns(
            array(_TYPECODE, chain.from_iterable(stat[4 * at : 4 * at + 4] for at in kept)),
            array(_TYPECODE, [task[at] for at in kept]),
            array(_TYPECODE, [started[at] for at in kept]),
        )
    # Column by column, each pass a C loop (map, chain, slices): a Python loop over the
    # runs cost a quarter of reading them, and a check without a cache writes this.
    stats = list(chain.from_iterable(map(_STAT, fresh)))
    if stats and (max(stats[0::4]) > trusted_before or max(stats[1::4]) > trusted_before):
        vouched = [f[2][0] <= trusted_before and f[2][1] <= trusted_before for f in fresh]
        fresh = [f for f, ok in zip(fresh, vouched, strict=True) if ok]
        task_of = [n for n, ok in zip(task_of, vouched, strict=True) if ok]
        stats = list(chain.from_iterable(map(_STAT, fresh)))
    try:
        flat = array(_TYPECODE, stats)
    except OverflowError:  # an inode past 63 bits (the sizes and times fit)
        stats[3::4] = [inode & INODE_MASK for inode in stats[3::4]]
        flat = array(_TYPECODE, stats)
    columns.stat.extend(flat)
    columns.task.extend(task_of)
    fields = list(chain.from_iterable(map(_ROW, fresh)))
    columns.started.extend(fields[0::3])
    names += fields[1::3]
    started_at += fields[2::3]
    tasks = list(numbers)
    where = dict(zip(names, range(len(names)), strict=True))
    newest = [-1] * len(tasks)
    if len(names) == sum(len(group) for group in rows.values()):  # all of them written
        for key, group in rows.items():
            newest[numbers[key]] = where[max(group)[1]]
    else:  # some runs are left out: each task's newest of those written
        best: list[Row | None] = [None] * len(tasks)
        for at, number in enumerate(columns.task):
            candidate = (columns.started[at], names[at], started_at[at])
            top = best[number]
            if top is None or candidate > top:
                best[number], newest[number] = candidate, at
    return Cache(scanned, tasks, newest, names, started_at, columns)


class CachedRows(Mapping[Key, Sequence[Row]]):
    """Each task's runs as :data:`Row` values, from a cache every run still matches.

    The runs of all tasks are grouped on the first lookup: ``check`` asks only for
    each task's newest run (the stored one), ``record`` and ``status`` for more.
    """

    def __init__(self, cache: Cache) -> None:
        self._cache = cache
        self._numbers = {key: n for n, key in enumerate(cache.tasks) if cache.newest[n] >= 0}
        self._groups: list[list[Row]] | None = None

    def __getitem__(self, key: Key) -> Sequence[Row]:
        number = self._numbers[key]
        if self._groups is None:
            cache = self._cache
            groups: list[list[Row]] = [[] for _ in cache.tasks]
            for at, task in enumerate(cache.columns.task):
                groups[task].append(cache.row(at))
            self._groups = groups
        return self._groups[number]

    def __iter__(self) -> Iterator[Key]:
        return iter(self._numbers)

    def __len__(self) -> int:
        return len(self._numbers)

    def __contains__(self, key: object) -> bool:
        return key in self._numbers
