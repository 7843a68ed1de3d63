"""check names what it did not cover, in one footer line per kind and in its JSON, and
``--fail-on uncovered`` makes those gaps fail."""

from __future__ import annotations

import json
from pathlib import Path

from support.silofixture import SiloProject, make_project


def _project(tmp_path: Path, config: str = "") -> SiloProject:
    project = make_project(tmp_path / "p", config=config)
    for task in ("TASK-001", "TASK-002"):
        project.add_run(task)
    assert project.cli("record", "--all").exit_code == 0
    return project


def test_an_artifact_added_to_the_config_is_not_silently_unchecked(tmp_path: Path) -> None:
    project = _project(tmp_path)
    pyproject = project.root / "pyproject.toml"
    before = pyproject.read_text()
    pyproject.write_text(
        before + 'artifacts = ["result.json", "state-diff.json", "tool-events.json"]\n'
    )
    done = project.cli("check")
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines()[-1] == (
        "not covered: configured artifacts with no baseline: tool-events.json for 2 tasks "
        "(crm-west/TASK-001, crm-west/TASK-002) (record them with `silo-regress record TASK`)"
    )
    report = json.loads(project.cli("check", "--format", "json").stdout)
    assert report["uncovered"]["artifacts"] == [
        {"task": "crm-west/TASK-001", "artifact": "tool-events.json"},
        {"task": "crm-west/TASK-002", "artifact": "tool-events.json"},
    ]
    failed = project.cli("check", "--fail-on", "uncovered")
    assert failed.exit_code == 1
    pyproject.write_text(before)
    assert project.cli("check", "--fail-on", "uncovered").exit_code == 0


def test_tasks_and_environments_without_baselines_are_named_and_can_fail(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path, config='environment = "crm-west"\n')
    project.add_run("TASK-003")
    project.add_run("TASK-001", env="crm-east")
    done = project.cli("check")
    assert done.exit_code == 0
    tail = done.stdout.splitlines()[-2:]
    assert tail == [
        "not covered: 1 task with runs but no baseline: crm-west/TASK-003 "
        "(record it with `silo-regress record TASK`)",
        "not covered: 1 environment with runs that no baseline names: crm-east "
        "(record ENV/TASK, or set 'environment')",
    ]
    report = json.loads(project.cli("check", "--format", "json").stdout)["uncovered"]
    assert report == {
        "tasks": ["crm-west/TASK-003"],
        "artifacts": [],
        "environments": ["crm-east"],
    }
    assert project.cli("check", "--fail-on", "uncovered").exit_code == 1
    markdown = project.cli("check", "--format", "markdown").stdout
    assert "- not covered: 1 task with runs but no baseline" in markdown
    github = project.cli("check", "--format", "github").stdout
    assert "::notice title=silo-regress::not covered: 1 environment" in github


def test_a_fully_covered_check_has_no_footer(tmp_path: Path) -> None:
    project = _project(tmp_path)
    done = project.cli("check", "--fail-on", "uncovered")
    assert done.exit_code == 0
    assert "not covered" not in done.stdout
    assert json.loads(project.cli("check", "--format", "json").stdout)["uncovered"] == {
        "tasks": [],
        "artifacts": [],
        "environments": [],
    }
