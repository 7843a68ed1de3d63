"""status: one meaning per word, counts in one unit, variants spelled out, the run's
agent, and ``status --format json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.gitrepo import agent_project


@pytest.fixture(autouse=True)
def _quiet_silo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAKE_SILO_CONTROL", raising=False)
    monkeypatch.setenv("FAKE_SILO_MODE", "ok")


def test_status_names_agents_variants_and_counts_tasks(tmp_path: Path) -> None:
    project = agent_project(tmp_path / "p", files={"flaky.agent.ts": "export default 2;\n"})
    assert project.cli("run", "TASK-001", "TASK-002").exit_code == 0
    assert project.cli("record", "--all").exit_code == 0
    run = sorted(project.runs_dir.iterdir())[0]
    task = json.loads((run / "run.json").read_text())["taskId"]
    # A second accepted variant of one task's result.json.
    variant = project.baselines / f"{task}~2.result.json"
    variant.write_text(
        (project.baselines / f"{task}.result.json")
        .read_text()
        .replace('"reward": 1', '"reward": 0.5')
    )
    project.add_run("TASK-003")  # made by Silo alone: no agent known
    table = project.cli("status").stdout
    lines = table.splitlines()
    assert lines[0].split() == [
        "TASK",
        "ENVIRONMENT",
        "BASELINES",
        "NEWEST",
        "RUN",
        "AGE",
        "AGENT",
        "VERDICT",
        "GIT",
    ]
    row = next(line for line in lines if line.startswith(task))
    assert "result.json: 2 variants, state-diff.json" in row
    assert "silo.agent.ts" in row
    loose = next(line for line in lines if line.startswith("TASK-003"))
    assert "no baseline" in loose and "untracked" not in loose
    # Counts add up to the rows: every one in tasks.
    assert lines[-1] == "3 tasks: 2 match, 1 no baseline"

    data = json.loads(project.cli("status", "--format", "json").stdout)
    by_task = {t["task"]: t for t in data["tasks"]}
    assert by_task[task]["baselines"] == [
        {"artifact": "result.json", "variants": 2},
        {"artifact": "state-diff.json", "variants": 1},
    ]
    assert by_task[task]["agent"] == "silo.agent.ts"
    assert by_task["TASK-003"]["note"] == "no baseline" and by_task["TASK-003"]["verdict"] is None
    assert data["counts"] == {"match": 2, "no baseline": 1}
