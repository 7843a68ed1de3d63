"""The agent a command ran with is the agent its verdicts are judged against.

Agents are compared by content (SHA-256) and named by path: a copy of the configured
agent under another name is the same agent. Inputs are fingerprinted before the
first rollout starts and re-read after it ends, so an agent switched mid-run cannot
vouch for the run.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest
from support.gitrepo import agent_project
from support.silofixture import SiloProject

from silo_regress.runs.provenance import PROVENANCE_FILE


@pytest.fixture(autouse=True)
def _quiet_silo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAKE_SILO_CONTROL", raising=False)
    monkeypatch.setenv("FAKE_SILO_MODE", "ok")


def _project(tmp_path: Path) -> SiloProject:
    project = agent_project(
        tmp_path / "project",
        files={"flaky.agent.ts": "export default 2;\n", "same.agent.ts": "export default 1;\n"},
    )
    assert project.cli("run", "TASK-001", "TASK-002").exit_code == 0
    assert project.cli("record", "--all").exit_code == 0
    time.sleep(1.1)  # fake Silo names runs by the second
    return project


def _statuses(project: SiloProject, *args: str) -> tuple[int, list[str]]:
    done = project.cli(*args, "--format", "json")
    return done.exit_code, [r["status"] for r in json.loads(done.stdout)["results"]]


def test_a_copy_of_the_configured_agent_is_the_same_agent(tmp_path: Path) -> None:
    project = _project(tmp_path)
    done = project.cli("check", "--run", "TASK-002", "--agent", "same.agent.ts")
    assert done.exit_code == 0, done.output
    assert "STALE" not in done.stdout
    # A later plain check judges it against the configured agent: same bytes, same agent.
    assert _statuses(project, "check", "TASK-002") == (0, ["match", "match"])


def test_check_run_judges_by_the_agent_it_ran_with(tmp_path: Path) -> None:
    project = _project(tmp_path)
    done = project.cli("check", "--run", "TASK-002", "--agent", "flaky.agent.ts")
    assert done.exit_code == 0, done.output
    # The configured agent differs in content: the same run is stale for a plain check.
    code, statuses = _statuses(project, "check", "TASK-002")
    assert (code, statuses) == (1, ["stale-run", "stale-run"])
    text = project.cli("check", "TASK-002").stdout
    assert (
        "made by agent flaky.agent.ts, not the configured silo.agent.ts (their contents differ)"
        in text
    )


def test_check_run_repeat_with_an_agent_counts_every_matching_rollout(tmp_path: Path) -> None:
    project = _project(tmp_path)
    done = project.cli("check", "--run", "--repeat", "3", "TASK-002", "--agent", "flaky.agent.ts")
    assert done.exit_code == 0, done.output
    assert "0/3" not in done.stdout


def test_a_record_without_a_fingerprint_is_stale_once_inputs_are_configured(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path)
    newest = sorted(p for p in project.runs_dir.iterdir() if "TASK" not in p.name)
    for run in newest:
        record_path = run / PROVENANCE_FILE
        record = json.loads(record_path.read_text())
        record["fingerprint"] = None
        record["inputs"] = []
        record_path.write_text(json.dumps(record))
    code, statuses = _statuses(project, "check")
    assert code == 1 and set(statuses) == {"stale-run"}
    assert "its provenance record has no inputs fingerprint" in project.cli("check").stdout


def test_an_agent_switched_mid_run_does_not_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path)
    monkeypatch.setenv("FAKE_SILO_SLEEP", "1.5")
    agent = project.root / "silo.agent.ts"

    def switch() -> None:
        time.sleep(0.7)
        agent.write_text("export default 'switched';\n")

    switcher = threading.Thread(target=switch)
    switcher.start()
    try:
        assert project.cli("run", "TASK-001").exit_code == 0
    finally:
        switcher.join()
    newest = sorted(project.runs_dir.iterdir())[-1]
    record = json.loads((newest / PROVENANCE_FILE).read_text())
    assert record["inputsChangedWhileRunning"] == ["silo.agent.ts"]
    code, statuses = _statuses(project, "check", "TASK-001")
    assert code == 1 and set(statuses) == {"stale-run"}
    assert "silo.agent.ts changed while the run was being made" in project.cli("check").stdout


@pytest.mark.parametrize("kind", ["missing", "directory", "fifo", "outside"])
def test_an_agent_silo_cannot_use_is_one_sentence_and_exit_3(tmp_path: Path, kind: str) -> None:
    project = agent_project(tmp_path / "project")
    outside = tmp_path / "elsewhere.agent.ts"
    outside.write_text("export default 9;\n")
    name = {
        "missing": "nope.agent.ts",
        "directory": "agents",
        "fifo": "pipe.agent.ts",
        "outside": os.path.relpath(outside, project.root),
    }[kind]
    if kind == "directory":
        (project.root / "agents").mkdir()
    if kind == "fifo":
        os.mkfifo(project.root / "pipe.agent.ts")
    done = project.cli("run", "--agent", name, "TASK-001")
    assert done.exit_code == 3, done.output
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("silo-regress: error: ")
    expected = {
        "missing": "agent file not found (--agent 'nope.agent.ts'",
        "directory": "agents: is a directory, not an agent file (--agent 'agents')",
        "fifo": "pipe.agent.ts: is a FIFO, not an agent file",
        "outside": "lies outside the project",
    }[kind]
    assert expected in lines[0]
    assert not project.runs_dir.exists() or not any(project.runs_dir.iterdir())
