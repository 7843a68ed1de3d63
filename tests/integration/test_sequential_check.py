"""The sequential check through the real CLI and the stand-in Silo: the `sequential` key
makes `check --run` decide look by look, one line a look, never past its cap, and a
stats task whose baseline never passed runs no rollouts."""

from __future__ import annotations

import json
from pathlib import Path

from support.runnerkit import behave, control, new_runs, silo_project
from support.silofixture import SiloProject
from test_check_repeat import restart_count
from test_stats_gate_cli import STATS, check, passes, recorded

__all__ = ["control"]  # the fixture, used by name

LOOKS = "sequential = {looks = [2, 4, 6, 8]}\n"


def runs(project: SiloProject) -> list[dict[str, object]]:
    """Run directories only: the runs directory also holds the kept candidate tallies."""
    return [r for r in new_runs(project) if Path(str(r["dir"])).is_dir()]


def test_a_configured_sequential_check_stops_a_stable_task_early_and_passes(
    tmp_path: Path, control: Path
) -> None:
    project = recorded(tmp_path, control, extra=LOOKS + STATS)
    passes(control, 10, 0)  # as good as its 9/10 baseline, or better
    before = len(runs(project))
    done = check(project, "--format", "json")
    assert done.exit_code == 0, done.output
    made = len(runs(project)) - before
    assert made in (2, 4, 6)  # futility stopped it before the cap of 8
    assert "suite stable" in done.stderr and "futility level" in done.stderr
    assert done.stderr.count("silo-regress: look ") == made // 2  # one line a look
    (task,) = json.loads(done.stdout)["stats"]["tasks"]
    assert task["tier"] in ("stable", "improvement") and task["rollouts_used"] == made


def test_a_configured_sequential_check_fails_a_drop_and_never_passes_the_cap(
    tmp_path: Path, control: Path
) -> None:
    project = recorded(tmp_path, control, extra=LOOKS + STATS)
    passes(control, 0, 40)
    before = len(runs(project))
    done = check(project, "--format", "json")
    assert done.exit_code == 1, done.output
    assert 2 <= len(runs(project)) - before <= 8
    assert "suite declined by the" in done.stderr
    document = json.loads(done.stdout)["stats"]
    assert document["suite"]["verdict"] == "suite-regression"
    assert document["tasks"][0]["tier"] == "regression"


def test_an_explicit_repeat_asks_for_the_fixed_check(tmp_path: Path, control: Path) -> None:
    project = recorded(tmp_path, control, extra=LOOKS + STATS)
    passes(control, 10, 0)
    before = len(runs(project))
    done = check(project, "--repeat", "5")
    assert len(runs(project)) - before == 5
    assert "look " not in done.stderr


def test_a_stats_task_whose_baseline_never_passed_runs_no_rollouts(
    tmp_path: Path, control: Path
) -> None:
    both = LOOKS + '\n[tool.silo-regress.tasks.TASK-002]\ngate = "stats"\n' + STATS
    project = silo_project(tmp_path, both)
    behave(control, **{"TASK-002": {"mode": "fail"}})
    restart_count(control)
    done = project.cli("record", "--repeat", "4", "--jobs", "1", "TASK-002")
    assert done.exit_code == 0, done.output
    passes(control, 9, 1)
    done = project.cli("record", "--repeat", "10", "--jobs", "1", "TASK-001")
    assert done.exit_code == 0, done.output
    before = {r["dir"] for r in runs(project)}
    done = project.cli("--color", "never", "check", "--run", "--jobs", "1", "--format", "json")
    fresh = [r for r in runs(project) if r["dir"] not in before]
    assert fresh and all("TASK-002" not in json.dumps(r, default=str) for r in fresh)
    assert "1 stats task runs no rollouts" in done.stderr
    tasks = {t["task"]: t for t in json.loads(done.stdout)["stats"]["tasks"]}
    assert tasks["TASK-002"]["tier"] == "stable"
    assert tasks["TASK-002"]["reasons"] == ["cannot-decline"]


def test_a_sharded_check_cannot_be_sequential(tmp_path: Path, control: Path) -> None:
    project = recorded(tmp_path, control, extra=LOOKS + STATS)
    args = ("--shard", "1/2", "--repeat-until-decided", "--max-repeat", "8")
    before = len(runs(project))
    done = check(project, *args)
    assert done.exit_code == 2 and "run the sequential check unsharded" in done.output
    assert len(runs(project)) == before
    # the key alone: a shard runs the fixed M it is given
    fixed = check(project, "--shard", "1/1", "--repeat", "3")
    assert "look " not in fixed.stderr and len(runs(project)) == before + 3
