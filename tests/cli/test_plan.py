"""`silo-regress plan` on a real git repository with tallies: what a check needs to
detect a drop, per task and for the suite, and what the configured M detects."""

from __future__ import annotations

from pathlib import Path

from support.gitrepo import commit_all, repo_project
from support.silofixture import SiloProject

from silo_regress.stats.planning import rollouts_to_detect, task_power
from silo_regress.stats.tally import Tally, serialize_tally


def tallied(tmp_path: Path, *, config: str = 'gate = "stats"\n') -> SiloProject:
    project = repo_project(tmp_path, config=config)
    for task in ("TASK-001", "TASK-002", "TASK-003"):
        project.add_run(task)
    assert project.cli("record", "--all").exit_code == 0
    for task, (passed, rollouts) in {
        "TASK-001": (19, 20),
        "TASK-002": (0, 8),
        "TASK-003": (15, 20),
    }.items():
        (project.baselines / f"{task}.tally.json").write_bytes(
            serialize_tally(Tally(rollouts, passed))
        )
    commit_all(project, "tallies")
    return project


def test_plan_prints_the_fixed_m_per_task_and_for_the_suite(tmp_path: Path) -> None:
    project = tallied(tmp_path)
    done = project.cli("plan", "--detect", "0.3", "--power", "0.8")
    assert done.exit_code == 0, done.output
    need = rollouts_to_detect(19, 20, rate=0.95 - 0.3, alpha=0.05, power=0.8)
    assert need is not None and need <= 50
    assert f"TASK-001: tally 19/20: fixed M = {need} to catch a drop of 0.3 alone" in done.stdout
    # the promise holds exactly at the tally's rate, and one rollout fewer would not keep it
    assert task_power(19, 20, need, rate=0.65, alpha=0.05) >= 0.8
    assert task_power(19, 20, need - 1, rate=0.65, alpha=0.05) < 0.8
    assert "TASK-002: tally 0/8: never passed, cannot decline" in done.stdout
    assert "suite (2 tasks that can decline, every one down 0.3): fixed M = " in done.stdout
    assert "sequential check, looks [2, 4, 6, 8] (default): power " in done.stdout


def test_plan_reads_the_configured_looks_and_m_and_the_tallies_of_a_revision(
    tmp_path: Path,
) -> None:
    config = 'gate = "stats"\nrepeat = 12\nsequential = {looks = [3, 6, 12]}\n'
    project = tallied(tmp_path, config=config)
    (project.baselines / "TASK-001.tally.json").write_bytes(serialize_tally(Tally(20, 10)))
    done = project.cli("plan", "--detect", "0.15")
    assert "configured M = 12" in done.stdout
    assert "looks [3, 6, 12] (configured)" in done.stdout
    assert "TASK-001: tally 10/20" in done.stdout  # the working tree
    committed = project.cli("plan", "--detect", "0.15", "--against", "HEAD")
    assert "TASK-001: tally 19/20" in committed.stdout  # the commit
    # a drop too small for any practical M is said so, not "--repeat 219"
    assert "TASK-003: tally 15/20: more than 50 rollouts to catch a drop of 0.15" in done.stdout


def test_plan_refuses_a_drop_outside_0_and_1_and_a_bad_sequential_key(tmp_path: Path) -> None:
    project = tallied(tmp_path)
    bad = project.cli("plan", "--detect", "1.5")
    assert bad.exit_code == 2 and "--detect 1.5" in bad.output
    broken = repo_project(tmp_path / "other", config="sequential = {looks = [4, 2]}\n")
    done = broken.cli("plan")
    assert done.exit_code == 3
    assert "pyproject.toml" in done.output and "sequential.looks must increase" in done.output
