"""The run-index cache: same answers as reading every run.json, never trusted over the files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from support.silofixture import SiloProject, make_project, silo_json

from silo_regress.runs.cache import CACHE_FILE, MIN_RUNS, index_runs_cached, load_cache
from silo_regress.runs.index import RunIndex, index_runs


def _fresh(runs_dir: Path) -> RunIndex:
    return index_runs(runs_dir)


WORKERS = [1]


@pytest.fixture(autouse=True, params=[1, 2], ids=["one-process", "split"])
def _workers(request: pytest.FixtureRequest) -> None:
    """Every test holds for one process and for the scan split with a forked child."""
    WORKERS[0] = request.param


def _cached(runs_dir: Path) -> RunIndex:
    return index_runs_cached(runs_dir, min_runs=0, racy_ns=0, workers=WORKERS[0])


def _same(a: RunIndex, b: RunIndex) -> None:
    assert dict(a.by_task) == dict(b.by_task)
    assert a.unidentified == b.unidentified
    for key in a.by_task:
        assert a.newest(*key) == b.newest(*key)


def _project(tmp_path: Path) -> SiloProject:
    project = make_project(tmp_path / "project")
    for task, env, count in (("TASK-000", "crm-east", 3), ("TASK-001", "crm-west", 3)):
        for _ in range(count):
            project.add_run(task, env=env)
    project.add_run("TASK-002", env="crm-east")
    project.add_run("TASK-002", env="crm-west")
    (project.runs_dir / "run_20260316090000_empty").mkdir()
    project.add_run("TASK-009", name="run_20260316200000_cut", files={"run.json": b'{"env'})
    (project.runs_dir / "notes.txt").write_text("not a run\n")
    return project


def test_the_cache_gives_the_same_index_and_is_reused(tmp_path: Path) -> None:
    project = _project(tmp_path)
    first = _cached(project.runs_dir)
    _same(first, _fresh(project.runs_dir))
    cache = project.runs_dir / CACHE_FILE
    written = cache.stat().st_mtime_ns
    assert len(load_cache(project.runs_dir)) == 8
    second = _cached(project.runs_dir)
    _same(second, first)
    assert cache.stat().st_mtime_ns == written, "nothing changed, so nothing was written"
    assert [u.path.name for u in second.unidentified] == [
        "run_20260316090000_empty",
        "run_20260316200000_cut",
    ]


def test_a_changed_run_json_is_read_again(tmp_path: Path) -> None:
    project = _project(tmp_path)
    runs = _cached(project.runs_dir)
    oldest = runs.runs_of("crm-east", "TASK-000")[-1]
    newest = runs.newest("crm-east", "TASK-000")
    assert newest is not None and oldest != newest
    # Same size, one later start: the oldest run becomes the newest.
    meta = json.loads((oldest.path / "run.json").read_text())
    meta["startedAt"] = "2026-03-16T23:59:59.000Z"
    data = silo_json(meta)
    assert len(data) == (oldest.path / "run.json").stat().st_size
    (oldest.path / "run.json").write_bytes(data)
    again = _cached(project.runs_dir)
    picked = again.newest("crm-east", "TASK-000")
    assert picked is not None and picked.name == oldest.name
    _same(again, _fresh(project.runs_dir))


def test_a_run_edited_in_place_with_its_mtime_restored_is_still_seen(tmp_path: Path) -> None:
    project = _project(tmp_path)
    runs = _cached(project.runs_dir)  # racy_ns=0: every entry is trusted from now on
    run = runs.newest("crm-west", "TASK-001")
    assert run is not None
    path = run.path / "run.json"
    before = path.stat()
    meta = json.loads(path.read_text())
    meta["taskId"] = "TASK-00X"  # same length, so the same size
    data = silo_json(meta)
    assert len(data) == before.st_size
    with open(path, "r+b") as handle:  # in place: same inode
        handle.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )
    again = _cached(project.runs_dir)
    assert again.newest("crm-west", "TASK-00X") is not None
    assert run.name not in [r.name for r in again.runs_of("crm-west", "TASK-001")]
    _same(again, _fresh(project.runs_dir))


def test_a_run_moved_to_another_task_and_new_and_removed_runs(tmp_path: Path) -> None:
    project = _project(tmp_path)
    runs = _cached(project.runs_dir)
    moved = runs.newest("crm-west", "TASK-001")
    assert moved is not None
    meta = json.loads((moved.path / "run.json").read_text())
    meta["taskId"] = "TASK-777"
    (moved.path / "run.json").write_bytes(silo_json(meta))
    project.add_run("TASK-888")
    gone = runs.newest("crm-east", "TASK-002")
    assert gone is not None
    for file in gone.path.iterdir():
        file.unlink()
    gone.path.rmdir()
    again = _cached(project.runs_dir)
    assert again.newest("crm-west", "TASK-777") is not None
    assert again.newest("crm-west", "TASK-888") is not None
    assert again.find(gone.name) is None
    _same(again, _fresh(project.runs_dir))
    assert sorted(load_cache(project.runs_dir).names) == sorted(
        r.name for runs_of in again.by_task.values() for r in runs_of
    )


def test_racy_entries_are_not_trusted(tmp_path: Path) -> None:
    project = _project(tmp_path)
    index_runs_cached(project.runs_dir, min_runs=0)  # default margin: all entries are racy
    run = _fresh(project.runs_dir).newest("crm-east", "TASK-000")
    assert run is not None
    meta = json.loads((run.path / "run.json").read_text())
    meta["taskId"] = "TASK-555"
    stat = (run.path / "run.json").stat()
    (run.path / "run.json").write_bytes(silo_json(meta))
    os.utime(run.path / "run.json", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    again = index_runs_cached(project.runs_dir, min_runs=0)
    assert again.newest("crm-east", "TASK-555") is not None


def test_a_corrupt_cache_is_rebuilt_silently(tmp_path: Path) -> None:
    project = _project(tmp_path)
    expected = _cached(project.runs_dir)
    cache = project.runs_dir / CACHE_FILE
    good = cache.read_bytes()
    flipped = good.replace(b"TASK-001", b"TASK-00l", 1)
    for damage in (
        b"",
        b"garbage",
        good[: len(good) // 2],
        good[:-3] + b"xyz",
        b"\x00" * 99,
        flipped,  # valid JSON, a task renamed: the CRC catches it
    ):
        cache.write_bytes(damage)
        _same(_cached(project.runs_dir), expected)
        assert cache.read_bytes() != damage, "rebuilt"
        assert len(load_cache(project.runs_dir)) == 8


def test_a_cache_that_cannot_be_written_is_skipped(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project.runs_dir / CACHE_FILE).mkdir()  # os.replace onto a directory fails
    _same(_cached(project.runs_dir), _fresh(project.runs_dir))
    assert not [p for p in project.runs_dir.iterdir() if p.name.endswith(".tmp")]


def test_small_runs_directories_get_no_cache(tmp_path: Path) -> None:
    project = _project(tmp_path)
    result = project.cli("status")
    assert result.exit_code == 0
    assert not (project.runs_dir / CACHE_FILE).exists()


def test_check_uses_the_cache_on_a_large_runs_directory(tmp_path: Path) -> None:
    project = make_project(tmp_path / "big")
    for n in range(MIN_RUNS + 10):
        project.add_run(f"TASK-{n % 20:02d}")
    assert project.cli("record", "--all").exit_code == 0
    first = project.cli("check", "--format", "json")
    assert first.exit_code == 0
    assert (project.runs_dir / CACHE_FILE).is_file()
    second = project.cli("check", "--format", "json")
    assert second.stdout == first.stdout
    assert json.loads(second.stdout)["summary"] == {"match": 40}


_WRITER = """
import sys
from pathlib import Path
from silo_regress.runs.cache import index_runs_cached
runs_dir = Path(sys.argv[1])
for n in range(15):
    if sys.argv[2] == "add":
        d = runs_dir / f"run_20260317000000_{sys.argv[3]}{n}"
        d.mkdir()
        (d / "run.json").write_text(
            '{"environment": "e", "taskId": "TASK-%s", "startedAt": "2026-03-17T00:00:%02d.000Z"}'
            % (sys.argv[3], n)
        )
    index = index_runs_cached(runs_dir, min_runs=0, racy_ns=0)
    assert index.newest("crm-west", "TASK-001") is not None
"""


def test_two_processes_updating_the_cache_never_corrupt_it(tmp_path: Path) -> None:
    project = _project(tmp_path)
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(project.runs_dir), "add", tag],
            stderr=subprocess.PIPE,
        )
        for tag in ("a", "b")
    ]
    writers.append(
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(project.runs_dir), "read", "c"],
            stderr=subprocess.PIPE,
        )
    )
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err.decode()
    cache = load_cache(project.runs_dir)
    assert len(cache), "a whole cache was left behind"
    final = _cached(project.runs_dir)
    _same(final, _fresh(project.runs_dir))
    assert len(final.runs_of("e", "TASK-a")) == 15 and len(final.runs_of("e", "TASK-b")) == 15
    assert not [p for p in project.runs_dir.iterdir() if p.name.endswith(".tmp")]


def test_a_run_directory_whose_name_is_not_utf8_is_cached(tmp_path: Path) -> None:
    """os.listdir gives such a name with lone surrogates, which no JSON can hold:
    the cache used to crash every command once the runs directory was large enough."""
    project = _project(tmp_path)
    raw = os.path.join(os.fsencode(project.runs_dir), b"run_20260316230000_\xff\xfe")
    os.mkdir(raw)
    meta = {
        "environment": "crm-east",
        "taskId": "TASK-000",
        "startedAt": "2026-03-16T23:00:00.000Z",
    }
    with open(os.path.join(raw, b"run.json"), "wb") as handle:
        handle.write(silo_json(meta))
    first = _cached(project.runs_dir)
    newest = first.newest("crm-east", "TASK-000")
    assert newest is not None and os.fsencode(newest.name).endswith(b"\xff\xfe")
    cache = project.runs_dir / CACHE_FILE
    written = cache.stat().st_mtime_ns
    assert len(load_cache(project.runs_dir)) == 9
    second = _cached(project.runs_dir)
    _same(second, _fresh(project.runs_dir))
    assert cache.stat().st_mtime_ns == written, "read back whole, so nothing was rewritten"


def test_a_cache_of_another_format_or_machine_is_rebuilt(tmp_path: Path) -> None:
    project = _project(tmp_path)
    expected = _cached(project.runs_dir)
    cache = project.runs_dir / CACHE_FILE
    good = cache.read_bytes()
    older = b'silo-regress run cache 2 00000000\n{"scanned":0,"tasks":[],"runs":[]}'
    head, _, body = good.partition(b"\n")
    body = body.replace(b'"byteorder":"%s"' % sys.byteorder.encode(), b'"byteorder":"middle"', 1)
    # Signed again, so only the byte order tells it from this machine's cache.
    foreign = head[: -len("00000000")] + b"%08x\n" % zlib.crc32(body) + body
    assert load_cache(project.runs_dir).names
    for damage in (older, foreign):
        cache.write_bytes(damage)
        _same(_cached(project.runs_dir), expected)
        assert cache.read_bytes() != damage, "rebuilt"
        assert cache.read_bytes().startswith(b"silo-regress run cache 3 ")
        assert len(load_cache(project.runs_dir)) == 8


def test_an_inode_past_63_bits_is_kept_by_its_low_bits() -> None:
    """Some file systems use all 64 bits of an inode; the cache's columns are signed."""
    from silo_regress.runs.cache import INODE_MASK, Cache, _rebuilt, encode_cache

    big = (1 << 64) - 5
    fresh = [
        (("crm-west", "TASK-001"), (1, "run_a", "2026-03-16T09:00:00.000Z"), (10, 11, 12, big)),
        (("crm-west", "TASK-001"), (2, "run_b", "2026-03-16T09:00:01.000Z"), (20, 21, 22, 7)),
    ]
    rows = {("crm-west", "TASK-001"): [f[1] for f in fresh]}
    numbers = {("crm-west", "TASK-001"): 0}
    cache = _rebuilt(
        Cache(), [], fresh, rows, numbers=numbers, task_of=[0, 0], scanned=10**12, racy_ns=0
    )
    assert list(cache.columns.stat) == [10, 11, 12, big & INODE_MASK, 20, 21, 22, 7]
    assert cache.newest == [1] and cache.tasks == [("crm-west", "TASK-001")]
    data = encode_cache(cache)
    from silo_regress.runs.cache import MAGIC, _decode

    assert data.startswith(MAGIC)
    again = _decode(data, data.index(b"\n") + 1)
    assert again == cache
