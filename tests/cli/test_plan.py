"""`silo-regress plan` on a real git repository with tallies: what a check needs to
detect a drop, per task and for the suite, and what the configured M detects."""

from __future__ import annotations

from pathlib import Path

from support.gitrepo import commit_all, repo_project
from support.silofixture import SiloProject

from silo_regress.stats.planning import (
    SuiteTask,
    rollouts_to_detect,
    suite_allocation,
    task_power,
)
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
    # the promise holds exactly at the tally's rate, and one rollout fewer would not keep it
    power = task_power(19, 20, need, rate=0.65, alpha=0.05)
    fewer = task_power(19, 20, need - 1, rate=0.65, alpha=0.05)
    assert power >= 0.8 > fewer
    assert (
        f"TASK-001: tally 19/20: fixed M = {need} (power {power:.2f}; {need - 1} gives "
        f"{fewer:.2f}) to catch a drop of 0.3 alone"
    ) in done.stdout
    assert "TASK-002: tally 0/8: never passed, cannot decline" in done.stdout
    # the suite: the fewest rollouts, their power and the next-smaller choice's, from
    # the check's own suite test; the task that cannot decline gets the least a check runs
    suite = [
        SuiteTask(19, 20, 0.95 - 0.3),
        SuiteTask(0, 8, 0.0),
        SuiteTask(15, 20, 0.75 - 0.3),
    ]
    found = suite_allocation(suite, alpha=0.05, power=0.8)
    assert found is not None and found.smaller is not None
    assert found.chosen.power >= 0.8 > found.smaller.power
    assert (
        f"suite (2 tasks that can decline, every one down 0.3): {found.chosen.total} "
        f"rollouts in all, power {found.chosen.power:.2f}; {found.smaller.total} give "
        f"{found.smaller.power:.2f}: "
    ) in done.stdout
    assert "2 for the 1 that cannot decline" in done.stdout
    assert f"  to run it: in pyproject.toml [tool.silo-regress], repeat = {found.low}" in (
        done.stdout
    )
    assert "then `silo-regress check --run`" in done.stdout
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
    # with the sequential key, check --run would run the looks, not the allocation
    big = project.cli("plan", "--detect", "0.45").stdout
    assert "then `silo-regress check --run` without the `sequential` key" in big, big
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


def test_plan_spreads_the_suite_s_rollouts_and_says_when_the_least_overshoots(
    tmp_path: Path,
) -> None:
    project = repo_project(tmp_path, config='gate = "stats"\nrepeat = 8\n')
    tasks = [f"TASK-{i:03d}" for i in range(1, 9)]
    for task in tasks:
        project.add_run(task)
    assert project.cli("record", "--all").exit_code == 0
    for task in tasks:
        (project.baselines / f"{task}.tally.json").write_bytes(serialize_tally(Tally(20, 16)))
    commit_all(project, "tallies")
    spread = project.cli("plan", "--detect", "0.25")
    assert spread.exit_code == 0, spread.output
    found = suite_allocation([SuiteTask(16, 20, 0.8 - 0.25)] * 8, alpha=0.05, power=0.8)
    assert found is not None and found.extra > 0  # an uneven spread is the point
    extra = [tasks[i] for i in found.order[: found.extra]]
    assert f"{found.low} a task, {found.low + 1} for the {found.extra} most informative" in (
        spread.stdout
    )
    for task in tasks:  # each task that gets one more is named in the config lines
        line = f'    [tool.silo-regress.tasks."{task}"] repeat = {found.low + 1}\n'
        assert (line in spread.stdout) is (task in extra), (task, spread.stdout)
    least = project.cli("plan", "--detect", "0.6")
    assert "2 a task, the least a check runs (it refuses 1), gives power " in least.stdout
