"""map_in_halves: the same answer whether the second half runs in a forked child or here."""

from __future__ import annotations

import os
import threading
from array import array
from collections.abc import Sequence
from pathlib import Path

import pytest
from silofixture import make_project

from silo_regress import filestat, runcache

needs_fork = pytest.mark.skipif(
    not hasattr(os, "fork") or (os.cpu_count() or 1) < 2, reason="needs fork and two cores"
)


def _lengths_and_pids(chunk: Sequence[str]) -> array[int]:
    out = array("q")
    for item in chunk:
        out.extend((len(item), os.getpid()))
    return out


@needs_fork
def test_the_second_half_runs_in_a_child_and_the_answer_is_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert threading.active_count() == 1
    monkeypatch.setattr(filestat, "PARALLEL_MIN", 10)
    items = [f"item-{'x' * (i % 7)}" for i in range(101)]
    result = filestat.map_in_halves(_lengths_and_pids, items)
    assert list(result[0::2]) == [len(i) for i in items]
    pids = list(result[1::2])
    assert set(pids[:50]) == {os.getpid()}
    assert len(set(pids[50:])) == 1 and pids[50] != os.getpid()


@needs_fork
def test_a_failing_child_is_redone_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(filestat, "PARALLEL_MIN", 10)
    parent = os.getpid()

    def work(chunk: Sequence[str]) -> array[int]:
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        return _lengths_and_pids(chunk)

    result = filestat.map_in_halves(work, [str(i) for i in range(40)])
    assert list(result[0::2]) == [len(str(i)) for i in range(40)]
    assert set(result[1::2]) == {parent}


def test_small_inputs_stay_in_this_process() -> None:
    result = filestat.map_in_halves(_lengths_and_pids, ["a", "bb"])
    assert list(result) == [1, os.getpid(), 2, os.getpid()]


@needs_fork
def test_the_run_cache_gives_the_same_index_with_a_forked_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path / "p")
    for n in range(30):
        project.add_run(f"TASK-{n % 4:03d}", env="crm-west" if n % 3 else "crm-east")
    (project.runs_dir / "notes.txt").write_text("not a run\n")
    (project.runs_dir / "run_crashed").mkdir()

    def snapshot() -> tuple[object, ...]:
        index = runcache.index_runs_cached(project.runs_dir, min_runs=5, racy_ns=0)
        return (
            {key: [r.name for r in index.runs_of(*key)] for key in index.task_keys()},
            [u.path.name for u in index.unidentified],
        )

    serial = snapshot()  # writes the cache
    monkeypatch.setattr(filestat, "PARALLEL_MIN", 4)
    assert snapshot() == serial  # warm, forked, nothing changed
    (project.runs_dir / "run_crashed" / "run.json").write_text("{")
    warm = snapshot()
    assert warm[0] == serial[0] and "run_crashed" in warm[1]
