"""`silo-regress review` through a real pseudo-terminal (pexpect), and off a terminal."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import pytest
from support.silofixture import SiloProject, make_result, make_state_diff

pexpect = pytest.importorskip("pexpect")

CHECKS = [
    {"label": "Lead qualified", "passed": True, "detail": "", "required": True},
    {"label": "Note logged", "passed": True, "detail": "AUD-0001", "required": False},
]


def _changes(project: SiloProject) -> None:
    """TASK-002 improves (drift-free), TASK-003 regresses, TASK-004 drifts."""
    worse = [dict(CHECKS[0]), {**CHECKS[1], "passed": False}]
    first = {
        "TASK-002": make_result(passed=False, reward=0.5, checks=worse),
        "TASK-003": make_result(checks=CHECKS),
        "TASK-004": make_result(checks=CHECKS),
    }
    for n, (task, result) in enumerate(first.items()):
        project.add_run(task, started=f"2026-03-16T09:00:0{n}.000Z", result=result)
    assert project.cli("record", "--all").exit_code == 0
    project.add_run(
        "TASK-002", started="2026-03-16T10:00:00.000Z", result=make_result(checks=CHECKS)
    )
    project.add_run(
        "TASK-003",
        started="2026-03-16T10:00:01.000Z",
        result=make_result(passed=False, reward=0, checks=worse, tool_calls=8),
    )
    project.add_run(
        "TASK-004",
        started="2026-03-16T10:00:02.000Z",
        result=make_result(checks=CHECKS),
        state_diff=make_state_diff(added=("AUD-0001", "AUD-0007")),
    )


def _spawn(project: SiloProject, *args: str) -> Any:
    env = {**os.environ, "TERM": "dumb", "NO_COLOR": "1", "COLUMNS": "200"}
    child = pexpect.spawn(
        sys.executable,
        ["-m", "silo_regress", "--project", str(project.root), "review", *args],
        env=env,
        encoding="utf-8",
        timeout=30,
        dimensions=(50, 200),
    )
    return child


def _baseline(project: SiloProject, name: str) -> Any:
    return json.loads((project.baselines / name).read_bytes())


def test_review_goes_regressions_first_and_accepts_from_the_compared_run(
    project: SiloProject,
) -> None:
    _changes(project)
    child = _spawn(project)
    child.expect(r"\[1/3\] regression")
    child.expect("CHANGED  TASK-003")
    child.expect("now FAILS")
    child.expect(r"\[q\]uit > ")
    child.send("s")  # skip the regression
    child.expect(r"\[2/3\] improvement")
    child.expect("TASK-002")
    child.expect(r"\[q\]uit > ")
    child.send("a")
    child.expect("accepted baselines/TASK-002.result.json from run run_20260316100000_")
    child.expect(r"\[3/3\] drift")
    child.expect("TASK-004 .*state-diff.json")
    child.expect(r"\[q\]uit > ")
    child.send("d")  # the full diff, then the keys again
    child.expect("AUD-0007")
    child.expect(r"\[q\]uit > ")
    child.send("q")
    # The quit item was seen but not decided: "not reviewed", never "skipped".
    child.expect("3 to review: accepted 1, rejected 0, skipped 1, not reviewed 1")
    child.expect("stage them with: git add baselines/TASK-002.result.json")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert _baseline(project, "TASK-002.result.json")["passed"] is True
    assert _baseline(project, "TASK-003.result.json")["passed"] is True  # skipped: untouched
    assert "AUD-0007" not in json.dumps(_baseline(project, "TASK-004.state-diff.json"))


def test_review_accepts_only_chosen_paths(project: SiloProject) -> None:
    _changes(project)
    child = _spawn(project, "TASK-003")
    child.expect(r"\[1/1\] regression")
    child.expect(r"\[q\]uit > ")
    child.send("p")
    child.expect(r"/reward: 1 -> 0")
    child.expect("space-separated; empty: none\\) > ")
    child.sendline("/toolCalls")
    child.expect("accepted baselines/TASK-003.result.json \\(paths /toolCalls\\)")
    child.expect("toolCalls 3 -> 8")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    baseline = _baseline(project, "TASK-003.result.json")
    assert baseline["toolCalls"] == 8
    assert baseline["passed"] is True and baseline["reward"] == 1  # not chosen: still differs
    assert project.cli("check", "TASK-003").exit_code == 1


def test_review_off_a_terminal_refuses_with_the_non_interactive_way(
    project: SiloProject,
) -> None:
    _changes(project)
    before = project.baseline_bytes()
    result = project.cli("review")
    assert result.exit_code == 2
    assert "review needs a terminal" in result.stderr
    assert "silo-regress record baselines/TASK.ARTIFACT [--path POINTER]" in result.stderr
    assert project.baseline_bytes() == before


def test_review_with_nothing_changed_says_so(project: SiloProject) -> None:
    project.add_run("TASK-002")
    assert project.cli("record", "TASK-002").exit_code == 0
    child = _spawn(project)
    child.expect("nothing to review: every result matches its baseline")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
