"""``run``'s flow without typer: a :class:`~silo_regress.commands.running.RunRequest`
driven against the stand-in Silo, and what it decides (settled, unsettled, problems)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.runnerkit import behave, silo_project

from silo_regress.commands.rollouts import QuietWatcher, RolloutFlags
from silo_regress.commands.running import RunRequest, run_tasks
from silo_regress.project.config import load_config
from silo_regress.project.taskref import parse_ref


def test_repeats_that_differ_are_unsettled_and_a_stats_task_is_counted(
    tmp_path: Path, control: Path
) -> None:
    project = silo_project(
        tmp_path, 'jobs = 2\n[tool.silo-regress.tasks.TASK-002]\ngate = "stats"\n'
    )
    how: dict[str, dict[str, Any]] = {
        "TASK-001": {"mode": "ok"},
        "TASK-002": {"mode": "vary", "modes": ["ok", "crash"], "passed": [True]},
    }
    behave(control, **how)
    config = load_config(project.root)
    refs = (parse_ref("TASK-001"), parse_ref("TASK-002"))
    ran = run_tasks(
        config, RunRequest(refs=refs, repeat=4, flags=RolloutFlags()), watcher=QuietWatcher()
    )
    assert not ran.problems
    stable = {str(s.task.label): s.stable for s in ran.stabilities}
    assert stable == {"crm-west/TASK-001": True, "crm-west/TASK-002": False}
    assert ran.unsettled
    # The stats task's crashed rollouts count as failed: 4 rollouts, 2 passed.
    ((label, tally),) = ran.tallies
    assert label == "crm-west/TASK-002" and (tally.rollouts, tally.passed) == (4, 2)


def test_a_silo_that_cannot_start_is_a_problem_not_an_unsettled_task(
    tmp_path: Path, control: Path
) -> None:
    project = silo_project(tmp_path)
    behave(control, **{"TASK-001": {"mode": "config-error", "message": "no such env"}})
    config = load_config(project.root)
    seen: list[str] = []

    class Watcher(QuietWatcher):
        def error(self, message: str) -> None:
            seen.append(message)

    ran = run_tasks(config, RunRequest(refs=(parse_ref("TASK-001"),)), watcher=Watcher())
    assert ran.problems and ran.stabilities == () and ran.tallies == ()
    assert seen == []  # said by the caller, after its report
