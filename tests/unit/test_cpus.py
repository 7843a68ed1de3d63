"""CPUs really available (affinity, cgroup v2 quota) and the forked child a split runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from support.silofixture import SiloProject, make_result

from silo_regress.cli.common import ColorWhen, Globals, baseline_source, project_config
from silo_regress.judging.judge import check
from silo_regress.judging.outcome import Verdict
from silo_regress.runs.cache import SPLIT_RUNS, index_runs_cached, workers_for
from silo_regress.system.cpus import (
    Forked,
    available_cpus,
    cgroup_cpu_limit,
    in_halves,
    parse_cpu_max,
    split_workers,
)


@pytest.mark.parametrize(
    ("text", "cpus"),
    [
        ("max 100000\n", None),
        ("max\n", None),
        ("50000 100000\n", 0.5),
        ("150000 100000\n", 1.5),
        ("200000 100000", 2.0),
        ("100000\n", 1.0),  # no period: the kernel's default of 100000
        ("", None),
        ("lots of cpus\n", None),
        ("0 100000\n", None),
        ("-5 100000\n", None),
        ("50000 0\n", None),
        ("50000 100000 7\n", None),
    ],
)
def test_cpu_max_is_parsed_and_bad_contents_limit_nothing(text: str, cpus: float | None) -> None:
    assert parse_cpu_max(text) == cpus


def _cgroup(tmp_path: Path, files: dict[str, str], *, membership: str = "0::/a/b\n") -> Path:
    root = tmp_path / "cgroup"
    (root / "a" / "b").mkdir(parents=True)
    for relpath, text in files.items():
        (root / relpath).write_text(text)
    proc = tmp_path / "proc-self-cgroup"
    proc.write_text(membership)
    return proc


def test_the_tightest_quota_from_the_cgroup_up_to_the_root_counts(tmp_path: Path) -> None:
    proc = _cgroup(tmp_path, {"a/b/cpu.max": "max 100000\n", "a/cpu.max": "150000 100000\n"})
    root = tmp_path / "cgroup"
    assert cgroup_cpu_limit(cgroup_root=root, proc_cgroup=proc) == 1.5
    assert available_cpus(cgroup_root=root, proc_cgroup=proc) == 1


def test_no_quota_bad_quota_or_cgroup_v1_leave_the_affinity(tmp_path: Path) -> None:
    affinity = len(os.sched_getaffinity(0))
    root = tmp_path / "cgroup"
    for files, membership in (
        ({"a/b/cpu.max": "max 100000\n"}, "0::/a/b\n"),
        ({"a/b/cpu.max": "garbage\n"}, "0::/a/b\n"),
        ({}, "0::/a/b\n"),
        ({"a/b/cpu.max": "50000 100000\n"}, "4:cpu,cpuacct:/a/b\n"),  # cgroup v1
    ):
        shutil.rmtree(root, ignore_errors=True)
        proc = _cgroup(tmp_path, files, membership=membership)
        assert cgroup_cpu_limit(cgroup_root=root, proc_cgroup=proc) is None
        assert available_cpus(cgroup_root=root, proc_cgroup=proc) == affinity
    missing = tmp_path / "no-such-file"
    assert available_cpus(cgroup_root=root, proc_cgroup=missing) == affinity


def test_a_quota_under_one_cpu_still_leaves_one(tmp_path: Path) -> None:
    proc = _cgroup(tmp_path, {"a/b/cpu.max": "20000 100000\n"})
    assert available_cpus(cgroup_root=tmp_path / "cgroup", proc_cgroup=proc) == 1


def _workers_in_subprocess(prefix: list[str]) -> str:
    code = f"from silo_regress.runs.cache import workers_for; print(workers_for({SPLIT_RUNS * 10}))"
    done = subprocess.run(
        [*prefix, sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.mark.skipif(shutil.which("taskset") is None, reason="needs taskset (util-linux)")
def test_a_process_pinned_to_one_cpu_does_not_split() -> None:
    assert _workers_in_subprocess(["taskset", "-c", "0"]) == "1"


def test_two_idle_cpus_split_a_large_scan_and_busy_or_single_ones_do_not() -> None:
    assert split_workers(SPLIT_RUNS, minimum=SPLIT_RUNS, cpus=2, load=0.3) == 2
    assert split_workers(SPLIT_RUNS - 1, minimum=SPLIT_RUNS, cpus=2, load=0.3) == 1
    assert split_workers(SPLIT_RUNS, minimum=SPLIT_RUNS, cpus=2, load=1.6) == 1  # CPU busy
    assert split_workers(SPLIT_RUNS, minimum=SPLIT_RUNS, cpus=1, load=0.0) == 1
    assert split_workers(SPLIT_RUNS, minimum=SPLIT_RUNS, cpus=8, load=3.0) == 2
    if available_cpus() >= 2 and os.getloadavg()[0] <= available_cpus() - 0.5:
        assert workers_for(SPLIT_RUNS) == 2


def test_a_forked_child_returns_its_bytes() -> None:
    big = b"x" * (3 << 20)  # more than a pipe holds: the parent reads while it writes
    assert Forked(lambda: big).result() == big


def test_in_halves_does_the_second_half_in_a_child_and_keeps_the_order() -> None:
    def work(part: Sequence[int]) -> tuple[int, list[int]]:
        return os.getpid(), [n * n for n in part]

    (here, first), (there, second) = in_halves(range(10), work, workers=2)
    assert here == os.getpid() and there != here
    assert first + second == [n * n for n in range(10)]
    assert in_halves(range(10), work, workers=1) == [(os.getpid(), first + second)]


def test_a_failing_child_gives_none_so_the_caller_does_the_work() -> None:
    def fail() -> bytes:
        raise RuntimeError("the child's trouble stays in the child")

    assert Forked(fail).result() is None


def test_a_check_split_across_two_processes_gives_the_same_report(project: SiloProject) -> None:
    for n in range(1, 9):
        project.add_run(f"TASK-00{n}", started=f"2026-03-16T09:00:0{n}.000Z")
    assert project.cli("record", "--all").exit_code == 0
    changed = make_result()
    changed["passed"], changed["reward"] = False, 0.25
    project.add_run("TASK-002", result=changed)  # changed, with a direction
    project.add_run("TASK-003", files={"result.json": None})  # incomplete
    project.add_run("TASK-004", files={"result.json": b'{"passed": tr'})  # cut off
    volatile = project.baselines / "TASK-005.state-diff.json"
    head = b'{\n  "run": "run_20260316090005_1",'
    volatile.write_bytes(volatile.read_bytes().replace(b"{", head, 1))
    for run in project.runs_dir.glob("*"):
        if b"TASK-006" in (run / "run.json").read_bytes():
            shutil.rmtree(run)  # missing run
    project.add_run("TASK-009")  # runs but no baseline: not judged
    config = project_config(Globals(project=project.root, color=ColorWhen.NEVER, explicit=True))
    index = index_runs_cached(config.runs_dir, min_runs=0, workers=1)
    source = baseline_source(config, against=None, staged=False)
    one = check(config, index, source, workers=1)
    two = check(config, index, source, workers=2)
    verdicts = {o.verdict for o in one.outcomes}
    assert {Verdict.MATCH, Verdict.CHANGED, Verdict.INCOMPLETE_RUN, Verdict.MISSING_RUN} <= verdicts
    assert Verdict.VOLATILE in verdicts or Verdict.NOT_CANONICAL in verdicts
    assert two == one
    assert [o.scores for o in two.outcomes] == [o.scores for o in one.outcomes]


def test_no_split_while_other_threads_run() -> None:
    import threading

    assert split_workers(10, minimum=1, cpus=2, load=0.0) == 2
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert split_workers(10, minimum=1, cpus=2, load=0.0) == 1
    finally:
        release.set()
        other.join()
