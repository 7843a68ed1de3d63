"""Hostile run directories: symlink loops, FIFOs, device links and directories where a
run's files should be. Each ends in a verdict or a warning naming the file, never a
hang, a traceback or an aborted check."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.silofixture import SiloProject, make_project

from silo_regress.runs.cache import CACHE_FILE, MIN_RUNS, index_runs_cached

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
needs_dev_zero = pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")


def _recorded(project: SiloProject, runs: int = 1) -> Path:
    """A project whose TASK-001 is recorded; the newest run's path."""
    for _ in range(runs):
        newest = project.add_run("TASK-001")
    recorded = project.cli("record", "TASK-001")
    assert recorded.exit_code == 0, recorded.output
    return newest


def _cli_subprocess(project: SiloProject, *args: str) -> subprocess.CompletedProcess[str]:
    """The real command in its own process, so a hang fails the test instead of the run."""
    return subprocess.run(
        [sys.executable, "-m", "silo_regress", "--project", str(project.root), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("runs", [1, MIN_RUNS])
def test_a_symlink_loop_in_the_runs_directory_is_a_warning(tmp_path: Path, runs: int) -> None:
    project = make_project(tmp_path / "p")
    _recorded(project, runs)
    (project.runs_dir / "loop").symlink_to("loop")
    for args in (("check",), ("status",), ("diff", "TASK-001"), ("record", "TASK-001")):
        result = project.cli(*args)
        assert result.exit_code == 0, (args, result.output)
        assert "Traceback" not in result.output
        assert ".silo/runs/loop: skipped, cannot read run.json:" in result.output, args
        assert "symbolic links" in result.output


@needs_fifo
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_cache_that_is_a_fifo_or_a_device_link_is_ignored_and_replaced(
    tmp_path: Path, kind: str
) -> None:
    if kind == "dev-zero" and not os.path.exists("/dev/zero"):
        pytest.skip("needs /dev/zero")
    project = make_project(tmp_path / "p")
    _recorded(project, MIN_RUNS)
    cache = project.runs_dir / CACHE_FILE
    cache.unlink()
    if kind == "fifo":
        os.mkfifo(cache)
    else:
        cache.symlink_to("/dev/zero")
    result = _cli_subprocess(project, "check")
    assert result.returncode == 0, result.stderr
    assert "1 match" in result.stdout or "2 match" in result.stdout
    assert cache.is_file() and not cache.is_symlink(), "replaced by a real cache"
    assert Path("/dev/zero").is_char_device()


@needs_fifo
def test_a_run_json_that_is_a_fifo_is_a_skipped_run(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    _recorded(project)
    odd = project.runs_dir / "run_20260316230000_fifo"
    odd.mkdir()
    os.mkfifo(odd / "run.json")
    result = _cli_subprocess(project, "check")
    assert result.returncode == 0, result.stderr
    assert "run_20260316230000_fifo: skipped, run.json is a FIFO, not a regular file" in (
        result.stderr + result.stdout
    )


def _make_odd(path: Path, kind: str) -> None:
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        pytest.param("fifo", "is a FIFO, not a regular file", marks=needs_fifo),
        pytest.param("dev-zero", "is a character device, not a regular file", marks=needs_dev_zero),
        ("directory", "is a directory, not a regular file"),
    ],
)
def test_an_odd_result_json_is_incomplete_run_for_both_artifacts(
    tmp_path: Path, kind: str, says: str
) -> None:
    project = make_project(tmp_path / "p")
    newest = _recorded(project)
    _make_odd(newest / "result.json", kind)
    result = _cli_subprocess(project, "check", "--format", "json")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    report = json.loads(result.stdout)
    assert report["summary"] == {"incomplete-run": 2}
    for outcome in report["results"]:
        assert outcome["detail"].endswith(f"/result.json {says}"), outcome


@pytest.mark.parametrize(
    "kind",
    [pytest.param("fifo", marks=needs_fifo), pytest.param("dev-zero", marks=needs_dev_zero), "dir"],
)
def test_an_odd_state_diff_is_incomplete_run_for_that_artifact_only(
    tmp_path: Path, kind: str
) -> None:
    project = make_project(tmp_path / "p")
    newest = _recorded(project)
    _make_odd(newest / "state-diff.json", kind)
    result = _cli_subprocess(project, "check")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "1 incomplete-run" in result.stdout and "1 match" in result.stdout, result.stdout


def test_the_cached_scan_reports_a_symlink_loop_like_the_plain_one(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    for n in range(10):
        project.add_run(f"TASK-{n % 3:03d}")
    (project.runs_dir / "loop").symlink_to("loop")
    plain = index_runs_cached(project.runs_dir, min_runs=10**9)
    cached = index_runs_cached(project.runs_dir, min_runs=0, racy_ns=0)
    again = index_runs_cached(project.runs_dir, min_runs=0, racy_ns=0)
    for index in (cached, again):
        assert index.unidentified == plain.unidentified
        assert dict(index.by_task) == dict(plain.by_task)
    assert [u.path.name for u in plain.unidentified] == ["loop"]


@needs_fifo
def test_the_cached_scan_names_odd_run_files_as_a_fresh_read_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cached scan opens each run.json relative to the runs directory held open;
    its reasons for a socket, a link loop, a FIFO and a directory are a plain read's."""
    import json
    import socket

    from silo_regress.runs.index import index_runs

    runs = tmp_path / "runs"
    runs.mkdir()
    for n in range(MIN_RUNS + 10):
        run = runs / f"run_20260101000000_{n:03d}"
        run.mkdir()
        started = f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}.000Z"
        meta = {"environment": "e", "taskId": f"TASK-{n % 7}", "startedAt": started}
        (run / "run.json").write_text(json.dumps(meta))
    odd = [runs / f"run_20260101000000_{n:03d}" / "run.json" for n in range(4)]
    for path in odd:
        path.unlink()
    with socket.socket(socket.AF_UNIX) as server:
        # bound by a relative name: a socket path has a 108-byte limit, and a parallel
        # worker's tmp_path can be longer than that
        monkeypatch.chdir(odd[0].parent)
        server.bind(odd[0].name)
        odd[1].symlink_to("run.json")
        os.mkfifo(odd[2])
        odd[3].mkdir()
        plain = index_runs(runs)
        first = index_runs_cached(runs, workers=1)
        again = index_runs_cached(runs, workers=1)
    reasons = [u.reason for u in plain.unidentified]
    assert reasons == [
        "run.json is a socket, not a regular file",
        "cannot read run.json: a loop of symbolic links",
        "run.json is a FIFO, not a regular file",
        "run.json is a directory, not a regular file",
    ]
    assert first.unidentified == again.unidentified == plain.unidentified
