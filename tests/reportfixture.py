"""A project with one changed, one matching and one broken task, for the CI report tests."""

from __future__ import annotations

from pathlib import Path

from silofixture import SiloProject, make_project, make_result, make_state_diff

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
