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
- A missing, unreadable, corrupt or foreign cache is ignored and rebuilt silently;
  so is one that is not a regular file (a FIFO there would block every command).
- It is written only when something changed, to a temporary file renamed over the
  old one, so readers and concurrent writers see a whole cache or the previous one
  (last writer wins). A runs directory that cannot be written is simply not cached:
  the cache only ever speeds a command up, it never fails one.
- Small runs directories (under :data:`MIN_RUNS` runs) are not cached at all:
  reading them is as fast as the cache, and nothing is added beside a few runs.

The file is one line ``silo-regress run cache <format> <crc32>`` and then a JSON
document: the task keys, and one row per run
``[name, mtime_ns, ctime_ns, size, inode, task number, started (us), startedAt]``.
"""

from __future__ import annotations

import contextlib
import os
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from silo_regress.cpus import Forked, split_workers
from silo_regress.fsio import FileError, StatKey, read_regular
from silo_regress.runs import (
    RUN_FILE,
    Key,
    Row,
    RunIndex,
    RunReader,
    Unidentified,
    build_index,
    list_run_names,
)
from silo_regress.taskref import unsafe_reason

CACHE_FILE = ".silo-regress-cache"
CACHE_FORMAT = 2
CACHE_LIMIT = 1 << 30
MIN_RUNS = 200
SPLIT_RUNS = 4000  # a forked child costs a few ms; below this it does not pay
RACY_NS = 2_000_000_000
MAGIC = b"silo-regress run cache %d " % CACHE_FORMAT

# One cached run, as stored: [name, mtime_ns, ctime_ns, size, inode, task, started_us, startedAt]
Entry = list[Any]


@dataclass(frozen=True)
class Cache:
    """The cache as read: when it was scanned, the task keys, and the entries by name."""

    scanned: int = 0
    tasks: list[Key] = field(default_factory=list)
    entries: dict[str, Entry] = field(default_factory=dict)


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
        doc = orjson.loads(body)
        tasks = [_task(pair) for pair in doc["tasks"]]
        scanned = doc["scanned"]
        if not isinstance(scanned, int):
            return Cache()
        entries = {row[0]: row for row in doc["runs"]}
    except (OSError, FileError, ValueError, KeyError, TypeError, IndexError):
        return Cache()
    return Cache(scanned, tasks, entries)


def _task(pair: Any) -> Key:
    if (
        isinstance(pair, list)
        and len(pair) == 2
        and all(isinstance(p, str) and unsafe_reason(p) is None for p in pair)
    ):
        return (pair[0], pair[1])
    raise ValueError("not a task key")


def save_cache(runs_dir: Path, *, scanned: int, tasks: list[Key], rows: list[Entry]) -> bool:
    """Write the cache atomically; False (and nothing written) when that is not possible."""
    body = orjson.dumps({"scanned": scanned, "tasks": tasks, "runs": rows})
    data = MAGIC + b"%08x\n" % zlib.crc32(body) + body
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
    """Every run under ``runs_dir``: :func:`silo_regress.runs.index_runs`, cached."""
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
    try:
        return _scan(runs_dir, names, old, racy_ns=racy_ns, workers=workers)
    except (TypeError, IndexError, ValueError):  # a cache whose CRC holds but whose rows do not
        return _scan(runs_dir, names, Cache(), racy_ns=racy_ns, workers=workers)


def workers_for(runs: int) -> int:
    """How many processes scan ``runs`` runs (:func:`silo_regress.cpus.split_workers`)."""
    return split_workers(runs, minimum=SPLIT_RUNS)


# Fresh: a run read just now, with the stat key its cache entry gets.
Fresh = tuple[Key, Row, StatKey]


@dataclass
class _Part:
    """What scanning some of the runs found."""

    kept: list[Entry] = field(default_factory=list)  # cache entries that still hold
    fresh: list[Fresh] = field(default_factory=list)
    unidentified: list[Unidentified] = field(default_factory=list)

    def encode(self, names: list[str]) -> bytes:
        """For the parent: which of ``names`` were kept, and the rest as read."""
        kept = {entry[0] for entry in self.kept}
        return orjson.dumps(
            {
                "kept": "".join("1" if name in kept else "0" for name in names),
                "fresh": [[*key, *row, *stat] for key, row, stat in self.fresh],
                "unidentified": [[u.path.name, u.reason] for u in self.unidentified],
            }
        )

    @classmethod
    def decode(cls, data: bytes, *, names: list[str], old: Cache, runs_dir: Path) -> _Part:
        doc = orjson.loads(data)
        mask = doc["kept"]
        if len(mask) != len(names):
            raise ValueError("a scan of other runs")
        entries = old.entries
        fresh = doc["fresh"]
        lost = doc["unidentified"]
        return cls(
            kept=[entries[name] for name, bit in zip(names, mask, strict=True) if bit == "1"],
            fresh=[((e, t), (us, n, at), (m, c, z, i)) for e, t, us, n, at, m, c, z, i in fresh],
            unidentified=[Unidentified(runs_dir / name, reason) for name, reason in lost],
        )


def _scan_part(runs_dir: Path, names: list[str], old: Cache, *, trusted_before: int) -> _Part:
    """Stat each run's ``run.json`` against its cache entry; read the ones that changed."""
    reader = RunReader(runs_dir)
    root, stat, get = str(runs_dir), os.stat, old.entries.get
    part = _Part()
    kept, fresh, unidentified = part.kept, part.fresh, part.unidentified
    for name in names:
        entry = get(name)
        if entry is not None:
            try:
                st = stat(f"{root}/{name}/{RUN_FILE}")
            except OSError:
                pass  # reading it again says why
            else:
                mtime, ctime = st.st_mtime_ns, st.st_ctime_ns
                if (
                    mtime == entry[1]
                    and ctime == entry[2]
                    and st.st_size == entry[3]
                    and st.st_ino == entry[4]
                    and mtime <= trusted_before
                    and ctime <= trusted_before
                ):
                    kept.append(entry)
                    continue
        found = reader.read(name)
        if found is None:
            continue  # a file beside the runs (notes.txt, .DS_Store)
        if isinstance(found, Unidentified):
            unidentified.append(found)
        else:
            fresh.append(found)
    return part


def _scan(runs_dir: Path, names: list[str], old: Cache, *, racy_ns: int, workers: int) -> RunIndex:
    scanned = time.time_ns()
    trusted_before = old.scanned - racy_ns
    half = len(names) // 2 if workers > 1 else len(names)
    theirs, mine = names[half:], names[:half]
    child = None
    if theirs:
        child = Forked(
            lambda: _scan_part(runs_dir, theirs, old, trusted_before=trusted_before).encode(theirs)
        )
    parts = [_scan_part(runs_dir, mine, old, trusted_before=trusted_before)]
    if theirs:
        parts.append(_child_part(child, runs_dir, theirs, old, trusted_before=trusted_before))
    # Rows of cached runs go into a list per task number: indexing a list is cheaper
    # than hashing a (environment, task) key 100,000 times.
    tasks = old.tasks
    by_number: list[list[Row]] = [[] for _ in tasks]
    rows: dict[Key, list[Row]] = {}
    unidentified: list[Unidentified] = []
    kept: list[Entry] = []
    fresh: list[Fresh] = []
    for part in parts:
        for entry in part.kept:
            by_number[entry[5]].append((entry[6], entry[0], entry[7]))
        for key, row, _ in part.fresh:
            rows.setdefault(key, []).append(row)
        kept += part.kept
        fresh += part.fresh
        unidentified += part.unidentified
    for number, group in enumerate(by_number):
        if group:
            rows.setdefault(tasks[number], []).extend(group)
    if fresh or len(kept) != len(old.entries):
        _write_back(runs_dir, old, kept, fresh, scanned)
    unidentified.sort(key=lambda u: u.path.name)
    return RunIndex(runs_dir=runs_dir, rows=rows, unidentified=tuple(unidentified))


def _child_part(
    child: Forked | None, runs_dir: Path, names: list[str], old: Cache, *, trusted_before: int
) -> _Part:
    """The child's part; when it failed (or none was started), the same scan done here."""
    data = child.result() if child is not None else None
    if data is not None:
        with contextlib.suppress(ValueError, TypeError, KeyError):
            return _Part.decode(data, names=names, old=old, runs_dir=runs_dir)
    return _scan_part(runs_dir, names, old, trusted_before=trusted_before)


def _write_back(
    runs_dir: Path,
    old: Cache,
    kept: list[Entry],
    fresh: list[Fresh],
    scanned: int,
) -> None:
    # Task numbers only grow: a kept entry keeps its number, a task no run names any
    # more costs one unused pair in the list.
    tasks = list(old.tasks)
    numbers = {key: n for n, key in enumerate(tasks)}
    out = list(kept)
    for key, (started, name, started_at), (mtime, ctime, size, inode) in fresh:
        number = numbers.get(key)
        if number is None:
            number = numbers[key] = len(tasks)
            tasks.append(key)
        out.append([name, mtime, ctime, size, inode, number, started, started_at])
    save_cache(runs_dir, scanned=scanned, tasks=tasks, rows=out)
