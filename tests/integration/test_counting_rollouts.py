"""Every rollout a check started is counted, and nothing it did not judge is "passed"
(issue 31): the failure matrix of rollouts against the real CLI and the stand-in Silo.

Each row is a way a rollout can go wrong or be made to lie: crashed, timed out,
truncated, rewritten after it ended, run by someone else meanwhile, or not run at all
because nobody said how many. None of them may pass a regression, be a traceback, or
hang.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

from support.runnerkit import behave, control, silo_project
from support.silofixture import SiloProject
from test_check_repeat import restart_count

__all__ = ["control"]  # the fixture, used by name

STATS = '\n[tool.silo-regress.tasks.TASK-001]\ngate = "stats"\n'


def modes(control: Path, *sequence: str, **extra: Any) -> None:
    """The stand-in's rollouts of TASK-001 walk through ``sequence`` (ok, fail, crash...)."""
    behave(control, **{"TASK-001": {"mode": "vary", "modes": list(sequence), **extra}})
    restart_count(control)


def recorded(tmp_path: Path, control: Path, *, top: str = "") -> SiloProject:
    """A stats task recorded from 10 rollouts, 9 passing (``top``: top-level config lines)."""
    project = silo_project(tmp_path, top + STATS)
    modes(control, *(["ok"] * 9 + ["fail"]))
    done = project.cli("record", "--repeat", "10", "--jobs", "1", "TASK-001")
    assert done.exit_code == 0, done.output
    return project


def check(project: SiloProject, *args: str) -> Any:
    return project.cli("--color", "never", "check", *args)


def stats_task(done: Any) -> dict[str, Any]:
    (task,) = json.loads(done.stdout)["stats"]["tasks"]
    return task  # type: ignore[no-any-return]


def test_five_crashed_rollouts_of_five_fail_the_check_run(tmp_path: Path, control: Path) -> None:
    project = recorded(tmp_path, control)
    modes(control, "crash")
    done = check(project, "--run", "--repeat", "5", "--jobs", "1", "--format", "json")
    assert done.exit_code == 1, done.output
    task = stats_task(done)
    assert (task["candidate"]["passed"], task["candidate"]["rollouts"]) == (0, 5)
    assert len(task["without_result"]) == 5
    assert "5 of 5 rollouts left no complete result.json" in done.stderr
    text = check(project, "--run", "--repeat", "5", "--jobs", "1")
    assert text.exit_code == 1 and "passed" not in text.stdout.splitlines()[0]


def test_crashed_rollouts_made_outside_the_check_fail_a_plain_check(
    tmp_path: Path, control: Path
) -> None:
    project = recorded(tmp_path, control, top="repeat = 5\n")
    modes(control, "crash")
    made = project.cli("run", "--repeat", "5", "--jobs", "1", "TASK-001")
    assert made.exit_code == 1, made.output  # crashed rollouts: runs without a result
    done = check(project, "--format", "json", "TASK-001")
    assert done.exit_code == 1, done.output
    task = stats_task(done)
    # The newest `repeat` runs on disk, every one of them counted (as failed).
    assert task["candidate"]["rollouts"] == 5 and task["candidate"]["passed"] == 0
    assert "judged on 5 fresh rollouts already on disk" in done.stderr


def test_a_plain_check_judges_the_fresh_rollouts_not_only_the_newest(
    tmp_path: Path, control: Path
) -> None:
    project = recorded(tmp_path, control, top="repeat = 8\n")
    modes(control, *(["fail"] * 7 + ["ok"]))  # the newest one passes, seven before it fail
    assert project.cli("run", "--repeat", "8", "--jobs", "1", "TASK-001").exit_code == 1
    done = check(project, "--format", "json", "TASK-001")
    task = stats_task(done)
    assert (task["candidate"]["passed"], task["candidate"]["rollouts"]) == (1, 8)
    assert done.exit_code == 1 and task["tier"] == "regression", done.output


def test_a_rollout_killed_by_its_timeout_after_it_began_counts_as_failed(
    tmp_path: Path, control: Path
) -> None:
    project = recorded(tmp_path, control)
    behave(control, **{"TASK-001": {"mode": "hang"}})
    started = time.monotonic()
    done = check(
        project, "--run", "--repeat", "3", "--jobs", "3", "--timeout", "1", "--format", "json"
    )
    assert time.monotonic() - started < 30
    # It left a run directory: the agent's rollout ran too long, which is its failure,
    # not an infrastructure error (so no exit 3, and no retry).
    assert done.exit_code == 1, done.output
    task = stats_task(done)
    assert (task["candidate"]["passed"], task["candidate"]["rollouts"]) == (0, 3)
    assert "retry" not in done.stderr


def test_a_truncated_result_counts_as_failed(tmp_path: Path, control: Path) -> None:
    project = recorded(tmp_path, control)
    modes(control, "ok", "truncate", "ok", "truncate")
    done = check(project, "--run", "--repeat", "4", "--jobs", "1", "--format", "json")
    task = stats_task(done)
    assert (task["candidate"]["passed"], task["candidate"]["rollouts"]) == (2, 4)
    assert len(task["without_result"]) == 2


def test_results_rewritten_after_their_rollout_ended_are_named_and_fail_the_task(
    tmp_path: Path, control: Path
) -> None:
    project = recorded(tmp_path, control)
    # Ten failing rollouts, each rewriting the ones before it to "passed": true.
    modes(control, "fail", rewrite_earlier=True)
    done = check(project, "--run", "--repeat", "10", "--jobs", "1", "--format", "json")
    assert done.exit_code == 1, done.output
    task = stats_task(done)
    assert task["candidate"]["passed"] == 0  # counted as each rollout ended: all failed
    assert len(task["changed"]) == 9 and "result-changed" in task["reasons"]
    assert "changed after its rollout ended" in done.stderr


def test_a_run_of_the_task_made_by_someone_else_meanwhile_is_not_counted(
    tmp_path: Path, control: Path
) -> None:
    project = recorded(tmp_path, control)
    modes(control, "ok", "ok", "ok", "ok")
    # A duplicate of a run, under a new name, appearing while the check runs: its
    # run.json names the task, but no rollout of this check made it.
    source = next(p for p in sorted(project.runs_dir.iterdir()) if p.is_dir())
    behave(control, **{"TASK-001": {"mode": "vary", "modes": ["ok"], "sleep": 0.3}})
    restart_count(control)

    import threading

    def plant() -> None:
        time.sleep(0.15)
        shutil.copytree(source, project.runs_dir / "run_29990101000000_zz")

    planter = threading.Thread(target=plant)
    planter.start()
    done = check(project, "--run", "--repeat", "2", "--jobs", "1", "--format", "json")
    planter.join()
    task = stats_task(done)
    assert task["candidate"]["rollouts"] <= 2, done.output


def test_check_run_without_a_repeat_count_refuses_one_rollout_a_stats_task(
    tmp_path: Path, control: Path
) -> None:
    project = recorded(tmp_path, control)
    done = check(project, "--run")
    assert done.exit_code == 2, done.output
    assert "one rollout each, which can never show a pass rate moving" in done.stderr
    assert "repeat = 8" in done.stderr


def test_check_run_uses_the_configured_repeat_count(tmp_path: Path, control: Path) -> None:
    project = recorded(tmp_path, control, top="repeat = 4\n")
    modes(control, "ok")
    done = check(project, "--run", "--jobs", "1", "--format", "json", "TASK-001")
    assert done.exit_code == 0, done.output
    assert stats_task(done)["candidate"]["rollouts"] == 4


def test_a_drop_from_084_to_05_fails_the_check_run_as_configured(
    tmp_path: Path, control: Path
) -> None:
    project = silo_project(tmp_path, "repeat = 25\n" + STATS)
    modes(control, *(["ok"] * 21 + ["fail"] * 4))  # 0.84
    assert project.cli("record", "--repeat", "25", "--jobs", "2", "TASK-001").exit_code == 0
    modes(control, "ok", "fail")  # 0.5
    done = check(project, "--run", "--jobs", "2")
    assert done.exit_code == 1, done.output
    assert "regression  TASK-001" in done.stdout


def test_the_hook_says_in_one_line_that_pass_rates_are_judged_in_ci(
    tmp_path: Path, control: Path
) -> None:
    from support.silofixture import git
    from support.silofixture import git_init as init_repo

    project = recorded(tmp_path, control)
    init_repo(project.root)
    git(project.root, "add", "-A")
    done = check(project, "--staged")
    assert done.exit_code == 0, done.output
    stats = [line for line in done.stdout.splitlines() if "stats gate" in line]
    assert stats == [
        "stats gate tallies present: 1 task; pass rates are judged in CI (check --run) "
        "(baselines from git index)"
    ], done.stdout
    assert "insufficient-data" not in done.stdout
    git(project.root, "rm", "-q", "--cached", "baselines/TASK-001.tally.json")
    missing = check(project, "--staged")
    assert missing.exit_code == 1 and "no baseline tally" in missing.stdout


def test_allow_no_runs_refuses_baselines_whose_project_lost_its_config(tmp_path: Path) -> None:
    from support.silofixture import git
    from support.silofixture import git_init as init_repo
    from typer.testing import CliRunner

    from silo_regress.cli import app

    root = tmp_path / "repo"
    (root / "baselines").mkdir(parents=True)
    (root / "baselines" / ".silo-regress-format").write_text("1\n")
    (root / "baselines" / "TASK-001.result.json").write_text('{\n  "passed": true\n}\n')
    init_repo(root)
    git(root, "add", "-A")
    runner = CliRunner()
    done = runner.invoke(app, ["--project", str(root), "check", "--staged", "--allow-no-runs"])
    assert done.exit_code == 3, done.output
    assert "no config file and no runs" in done.output


def test_record_repeat_counts_crashed_rollouts_as_failures(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path, STATS)
    modes(control, "ok", "ok", "crash", "ok")
    done = project.cli("record", "--repeat", "4", "--jobs", "1", "TASK-001")
    assert done.exit_code == 0, done.output
    value = json.loads((project.baselines / "TASK-001.tally.json").read_bytes())
    assert (value["rollouts"], value["passed"]) == (4, 3)
    assert "1 of them without a result (counted as failed)" in done.stdout


def test_retry_incomplete_runs_a_crashed_rollout_again_in_its_place(
    tmp_path: Path, control: Path
) -> None:
    project = recorded(tmp_path, control, top="retry-incomplete = 1\n")
    modes(control, "crash", "ok", "ok", "ok", "ok")
    done = check(project, "--run", "--repeat", "4", "--jobs", "1", "--format", "json")
    task = stats_task(done)
    assert (task["candidate"]["passed"], task["candidate"]["rollouts"]) == (4, 4), done.output
    assert task["retried"] == 1 and task["without_result"] == []
    assert "left no complete result.json (retry-incomplete): running it again" in done.stderr
