"""CPUs really available (affinity, cgroup v2 quota) and the forked child a split runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from silo_regress.cpus import (
    Forked,
    available_cpus,
    cgroup_cpu_limit,
    parse_cpu_max,
)
from silo_regress.runcache import SPLIT_RUNS, workers_for


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
    code = f"from silo_regress.runcache import workers_for; print(workers_for({SPLIT_RUNS * 10}))"
    done = subprocess.run(
        [*prefix, sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.mark.skipif(shutil.which("taskset") is None, reason="needs taskset (util-linux)")
def test_a_process_pinned_to_one_cpu_does_not_split() -> None:
    assert _workers_in_subprocess(["taskset", "-c", "0"]) == "1"


def test_a_process_with_two_cpus_splits_a_large_scan_only() -> None:
    if available_cpus() < 2:
        pytest.skip("this machine gives the tests one CPU")
    assert _workers_in_subprocess([]) == "2"
    assert workers_for(SPLIT_RUNS - 1) == 1


def test_a_forked_child_returns_its_bytes() -> None:
    big = b"x" * (3 << 20)  # more than a pipe holds: the parent reads while it writes
    assert Forked(lambda: big).result() == big


def test_a_failing_child_gives_none_so_the_caller_does_the_work() -> None:
    def fail() -> bytes:
        raise RuntimeError("the child's trouble stays in the child")

    assert Forked(fail).result() is None
