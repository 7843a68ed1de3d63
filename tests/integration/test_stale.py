"""Stale runs, end to end: runs the runner made (with provenance) and runs Silo made alone."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from support.gitrepo import agent_project
from support.silofixture import SiloProject, git, make_project, make_result

from silo_regress.runs.provenance import PROVENANCE_FILE


@pytest.fixture(autouse=True)
def _quiet_silo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAKE_SILO_CONTROL", raising=False)
    monkeypatch.setenv("FAKE_SILO_MODE", "ok")


def _project(tmp_path: Path, extra: str = "") -> SiloProject:
    return agent_project(
        tmp_path / "project", extra=extra, files={"flaky.agent.ts": "export default 2;\n"}
    )


def _runs(project: SiloProject) -> list[Path]:
    return sorted(project.runs_dir.iterdir())


def test_a_run_after_the_agent_changed_is_stale_and_a_rerun_fixes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path)
    monkeypatch.chdir(project.root)  # advice names paths from here: no -C needed
    assert project.cli("run", "TASK-001").exit_code == 0
    (made,) = _runs(project)
    record = json.loads((made / PROVENANCE_FILE).read_text())
    assert record["agent"] == "silo.agent.ts" and record["taskId"] == "TASK-001"
    assert record["commit"] == git(project.root, "rev-parse", "HEAD").stdout.strip()
    assert record["dirty"] is False
    assert project.cli("record", "TASK-001").exit_code == 0
    assert project.cli("check").exit_code == 0

    (project.root / "silo.agent.ts").write_text("export default 3;\n")
    stale = project.cli("check", "--format", "json")
    assert stale.exit_code == 1
    results = json.loads(stale.stdout)["results"]
    assert [r["status"] for r in results] == ["stale-run", "stale-run"]
    text = project.cli("check")
    assert "STALE RUN" in text.stdout
    assert "silo.agent.ts changed since it was made, in the working tree" in text.stdout
    assert "make fresh ones: silo-regress run TASK-001\n" in text.stdout
    assert f"(made by agent silo.agent.ts at commit {record['commit'][:7]})" in text.stdout

    allowed = project.cli("check", "--allow-stale")
    assert allowed.exit_code == 0, allowed.output
    assert "is stale" in allowed.stderr and "(judged anyway: --allow-stale)" in allowed.stderr

    time.sleep(1.1)  # fake Silo names runs by the second
    assert project.cli("run", "TASK-001").exit_code == 0
    again = project.cli("check")
    assert again.exit_code == 0, again.output
    assert json.loads((_runs(project)[-1] / PROVENANCE_FILE).read_text())["dirty"] is True


def test_an_experimental_agent_run_is_stale_not_changed(tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert project.cli("run", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    time.sleep(1.1)
    assert project.cli("run", "--agent", "flaky.agent.ts", "TASK-001").exit_code == 0
    newest = _runs(project)[-1]
    assert json.loads((newest / PROVENANCE_FILE).read_text())["agent"] == "flaky.agent.ts"
    # Make the experimental run behave differently: without provenance it would be `changed`.
    result = newest / "result.json"
    result.write_text(result.read_text().replace('"passed": true', '"passed": false', 1))
    checked = project.cli("check", "--format", "json")
    assert checked.exit_code == 1
    statuses = {r["status"] for r in json.loads(checked.stdout)["results"]}
    assert statuses == {"stale-run"}
    text = project.cli("check").stdout
    assert "it was made by agent flaky.agent.ts, not the configured silo.agent.ts" in text
    assert "CHANGED" not in text


def test_runs_without_a_record_are_judged_by_time(tmp_path: Path) -> None:
    project = _project(tmp_path)
    started = (datetime.now(UTC) + timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    project.add_run("TASK-001", env="crm-west", started=started)
    assert project.cli("record", "TASK-001").exit_code == 0
    assert project.cli("check").exit_code == 0  # the agent file is older than the run
    old = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    project.add_run("TASK-002", env="crm-west", started=old)
    assert project.cli("record", "TASK-002").exit_code == 0
    checked = project.cli("check")
    assert checked.exit_code == 1
    assert "STALE RUN  TASK-002" in checked.stdout
    assert "silo.agent.ts was modified at" in checked.stdout
    assert "the run has no provenance record, so it is judged by time" in checked.stdout


def test_a_forged_record_is_named_and_not_trusted(tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert project.cli("run", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    (made,) = _runs(project)
    path = made / PROVENANCE_FILE
    path.write_text(path.read_text().replace("TASK-001", "TASK-009"))
    os.utime(project.root / "silo.agent.ts", (0, 0))  # by time the run is fresh
    checked = project.cli("check")
    assert checked.exit_code == 0, checked.output
    assert "silo-regress.json names task crm-west/TASK-009, not this run's" in checked.stderr
    assert "the run is judged by time instead" in checked.stderr


def test_no_inputs_and_no_agent_means_no_stale_detection(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    old = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    project.add_run("TASK-001", started=old, result=make_result())
    assert project.cli("record", "TASK-001").exit_code == 0
    (project.root / "anything.ts").write_text("new\n")
    assert project.cli("check").exit_code == 0


def test_an_input_that_cannot_be_fingerprinted_is_exit_3(tmp_path: Path) -> None:
    project = _project(tmp_path, 'inputs = ["big/**"]\n')
    project.add_run("TASK-001", env="crm-west")
    assert project.cli("record", "TASK-001").exit_code == 0
    (project.root / "big").mkdir()
    (project.root / "big" / "x").symlink_to(project.root / "big" / "x")  # a loop
    for number in range(3):
        (project.root / "big" / f"f{number}").write_text("x")
    checked = project.cli("check")
    # A self-link is hashed as the path it holds, never followed; the files are newer
    # than the run (it has no record), so it is stale by time.
    assert checked.exit_code == 1, checked.output
    assert "STALE RUN  TASK-001" in checked.stdout and "Traceback" not in checked.output
