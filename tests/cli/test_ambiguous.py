"""An unqualified baseline whose task ran in several environments: one named result.

Through the real CLI on a real project layout: the other tasks are still judged,
in check, status and the pre-commit hook's check (--staged --allow-no-runs).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.silofixture import SiloProject, git, git_init, make_project, make_result

RESOLVE = "silo-regress record crm-east/TASK-002"
CONFIG_LINE = 'environment = "crm-east"'


def _json(project: SiloProject) -> dict[str, Any]:
    # The CLI runner mixes stderr (the unbaselined-tasks note) after the report.
    report, _ = json.JSONDecoder().raw_decode(project.cli("check", "--format", "json").output)
    assert isinstance(report, dict)
    return report


def _project(tmp_path: Path) -> SiloProject:
    project = make_project(tmp_path / "proj")
    project.add_run("TASK-001")
    project.add_run("TASK-002")
    project.add_run("TASK-003")
    assert project.cli("record", "--all").exit_code == 0
    assert (project.baselines / "TASK-002.result.json").is_file()
    # TASK-002 now also runs in a second environment; TASK-003 changes for real.
    project.add_run("TASK-002", env="crm-east")
    project.add_run("TASK-003", result=make_result(passed=False, reward=0))
    return project


def test_check_names_the_ambiguous_task_and_judges_the_others(tmp_path: Path) -> None:
    project = _project(tmp_path)
    result = project.cli("check")
    assert result.exit_code == 1, result.output
    assert "has runs in several environments" not in result.output
    assert "crm-east, crm-west" in result.output
    assert RESOLVE in result.output
    assert CONFIG_LINE in result.output
    assert "pyproject.toml [tool.silo-regress]" in result.output

    report = _json(project)
    by_task: dict[str, set[str]] = {}
    for outcome in report["results"]:
        by_task.setdefault(outcome["task"], set()).add(outcome["status"])
    assert by_task["TASK-001"] == {"match"}
    assert by_task["TASK-002"] == {"missing-run"}
    assert "changed" in by_task["TASK-003"]
    ambiguous = [o for o in report["results"] if o["task"] == "TASK-002"]
    assert len(ambiguous) == 2  # one per baselined artifact, each with the remedy
    assert all(o["detail"].startswith("ambiguous: ") for o in ambiguous)
    assert all(RESOLVE in o["detail"] for o in ambiguous)


def test_the_config_line_resolves_it(tmp_path: Path) -> None:
    project = _project(tmp_path)
    pyproject = project.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + 'environment = "crm-west"\n')
    report = _json(project)
    verdicts = {(o["task"], o["status"]) for o in report["results"]}
    assert ("TASK-002", "match") in verdicts
    assert not any(o["detail"] and "ambiguous" in o["detail"] for o in report["results"])


def test_status_shows_one_ambiguous_row(tmp_path: Path) -> None:
    project = _project(tmp_path)
    result = project.cli("status")
    assert result.exit_code != 3, result.output
    rows = [line for line in result.output.splitlines() if "TASK-002" in line]
    assert len(rows) == 1, result.output
    assert "missing-run" in rows[0]
    assert "TASK-001" in result.output and "TASK-003" in result.output


def test_the_hook_check_reports_it_and_still_judges_the_rest(tmp_path: Path) -> None:
    project = _project(tmp_path)
    git_init(project.root)
    git(project.root, "add", "pyproject.toml", "baselines")
    git(project.root, "commit", "-q", "-m", "baselines")
    result = project.cli("check", "--staged", "--allow-no-runs")
    assert result.exit_code == 1, result.output
    assert RESOLVE in result.output
    assert "TASK-003" in result.output
    assert "not compared" not in result.output
