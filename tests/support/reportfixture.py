"""Projects for the report tests: one with every kind of result, one with git history."""

from __future__ import annotations

from pathlib import Path

from support.gitrepo import commit_all, repo_project, rerun
from support.silofixture import SiloProject, make_project, make_result, make_state_diff

FAILED_CHECKS = [
    {
        "label": "Lead qualified",
        "passed": False,
        "detail": "stage <lead> | not 'qualified'",
        "required": True,
    },
    {"label": "Note logged", "passed": True, "detail": "AUD-0001", "required": False},
]


def failing_project(root: Path) -> SiloProject:
    """TASK-001 result changed, TASK-002 state-diff changed, TASK-003 matches,
    TASK-004's newest run crashed (incomplete-run)."""
    project = make_project(root)
    project.add_run("TASK-001")
    project.add_run("TASK-002", env="crm-east")
    project.add_run("TASK-003")
    project.add_run("TASK-004")
    assert project.cli("record", "--all").exit_code == 0
    project.add_run(
        "TASK-001",
        result=make_result(
            passed=False,
            reward=0.5,
            checks=FAILED_CHECKS,
            agent_output="I could not ```qualify``` the lead.",
        ),
    )
    project.add_run(
        "TASK-002", env="crm-east", state_diff=make_state_diff(added=["AUD-0001", "AUD-0002"])
    )
    project.add_run("TASK-004", files={"result.json": None})
    return project


def history_project(root: Path) -> SiloProject:
    """Three commits of TASK-001..3: all pass; TASK-001 fails at 0.5; TASK-002 at 0.75.
    Then a newer run of TASK-003, not recorded, so check has something to report."""
    project = repo_project(root)
    for task in ("TASK-001", "TASK-002", "TASK-003"):
        project.add_run(task)
    assert project.cli("record", "--all").exit_code == 0
    commit_all(project, "Record the tasks", date="2026-03-01T10:00:00Z")
    rerun(project, "TASK-001", passed=False, reward=0.5)
    assert project.cli("record", "TASK-001").exit_code == 0
    commit_all(project, "Stricter <stage> check", date="2026-03-02T10:00:00Z")
    (root / "notes.txt").write_text("no baseline here\n", encoding="utf-8")
    commit_all(project, "Unrelated commit", date="2026-03-03T10:00:00Z")
    rerun(project, "TASK-002", reward=0.75)
    assert project.cli("record", "TASK-002").exit_code == 0
    commit_all(project, "Lower reward for TASK-002", date="2026-03-04T10:00:00Z")
    rerun(project, "TASK-003", passed=False, reward=0)
    return project
