"""The allocation `plan` prints is one the check runs as set up: a top-level ``repeat``
and a task's own ``repeat`` give the tasks different counts, and both the per-task
tests and the suite's stratified test judge each task on its own count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.runnerkit import behave, control, silo_project
from test_check_repeat import restart_count

__all__ = ["control"]  # the fixture, used by name

CONFIG = 'gate = "stats"\nrepeat = 2\n\n[tool.silo-regress.tasks.TASK-001]\nrepeat = 3\n'


def _recorded_then_checked(tmp_path: Path, control: Path, config: str) -> Any:
    """Two stats tasks that always pass, their tallies recorded from 4 rollouts, then
    ``check --run`` as configured."""
    project = silo_project(tmp_path, config)
    for task in ("TASK-001", "TASK-002"):
        project.add_run(task)
    behave(control, **{t: {"mode": "vary", "modes": ["ok"]} for t in ("TASK-001", "TASK-002")})
    restart_count(control)
    recorded = project.cli("record", "--repeat", "4", "--jobs", "1", "--all")
    assert recorded.exit_code == 0, recorded.output
    restart_count(control)
    done = project.cli("check", "--run", "--jobs", "1", "--format", "json")
    return done


def test_check_run_gives_each_task_its_own_repeat_and_judges_the_suite_on_them(
    tmp_path: Path, control: Path
) -> None:
    done = _recorded_then_checked(tmp_path, control, CONFIG)
    assert done.exit_code == 0, done.output
    stats: dict[str, Any] = json.loads(done.stdout)["stats"]
    made = {t["task"]: t["candidate"]["rollouts"] for t in stats["tasks"]}
    assert made == {"TASK-001": 3, "TASK-002": 2}, made
    assert stats["suite"]["candidate"]["rollouts"] == 5, stats["suite"]


def test_the_sequential_check_runs_its_looks_whatever_a_task_s_repeat_says(
    tmp_path: Path, control: Path
) -> None:
    # The sequential policy decides each task's rollouts look by look; a task's own
    # repeat (an allocation `plan` printed for the fixed check) does not change them.
    done = _recorded_then_checked(tmp_path, control, "sequential = {looks = [2, 4]}\n" + CONFIG)
    # (exit 1: stopped for futility at 2 a task, every task is insufficient-data)
    assert "look 1 (2 rollouts a task)" in done.stderr, done.output
    stats: dict[str, Any] = json.loads(done.stdout)["stats"]
    made = {t["task"]: t["candidate"]["rollouts"] for t in stats["tasks"]}
    assert made["TASK-001"] == made["TASK-002"] in (2, 4), made
