"""Shared by the review tests: a project with changed results, and review on a pty."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from support.silofixture import SiloProject, make_result, make_state_diff

pexpect: Any = pytest.importorskip("pexpect")

CHECKS = [
    {"label": "Lead qualified", "passed": True, "detail": "", "required": True},
    {"label": "Note logged", "passed": True, "detail": "AUD-0001", "required": False},
]
WORSE = [dict(CHECKS[0]), {**CHECKS[1], "passed": False}]
PROMPT = r"\[q\]uit > "


def changes(project: SiloProject) -> dict[str, Path]:
    """TASK-003 regresses (result and state diff), TASK-004 drifts; the new runs by task."""
    for n, task in enumerate(("TASK-003", "TASK-004")):
        project.add_run(task, started=f"2026-03-16T09:00:0{n}.000Z", result=make_result())
    assert project.cli("record", "--all").exit_code == 0
    return {
        "TASK-003": project.add_run(
            "TASK-003",
            started="2026-03-16T10:00:01.000Z",
            result=make_result(passed=False, reward=0, checks=WORSE, tool_calls=8),
            state_diff=make_state_diff(added=("AUD-0001", "AUD-0009")),
        ),
        "TASK-004": project.add_run(
            "TASK-004",
            started="2026-03-16T10:00:02.000Z",
            result=make_result(agent_output="Done, and more."),
        ),
    }


def spawn(project: SiloProject, *args: str, driver: str | None = None, **env: str) -> Any:
    environment = {**os.environ, "TERM": "dumb", "NO_COLOR": "1", "COLUMNS": "200", **env}
    program = ["-c", driver] if driver else ["-m", "silo_regress"]
    return pexpect.spawn(
        sys.executable,
        [*program, "--project", str(project.root), "review", *args],
        env=environment,
        encoding="utf-8",
        timeout=30,
        dimensions=(50, 200),
    )


def finish(child: Any, code: int = 0) -> None:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == code


def text(project: SiloProject, name: str) -> bytes:
    return (project.baselines / name).read_bytes()
