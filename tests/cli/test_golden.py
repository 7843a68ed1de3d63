"""Golden files of silo-regress's own output (colour off), compared byte for byte.

The project is fixed (run names, start times, contents), so every report is
deterministic. After an intended change of the output, regenerate and review:

    UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py
    git diff tests/golden/
"""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from support.silofixture import SiloProject, make_project, make_result, make_state_diff

from silo_regress.canon.canonical import serialize
from silo_regress.project.config import load_config
from silo_regress.render.text import render_status
from silo_regress.reports.overview import build_status
from silo_regress.runs.index import index_runs
from silo_regress.store.baselines import BaselineStore

GOLDEN = Path(__file__).parents[1] / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
NOW = datetime(2026, 3, 16, 12, 0, 0, tzinfo=UTC)

LONG_OUTPUT = (
    "Qualified LEAD-014 (Müller Logistik): budget confirmed, decision maker identified, "
    "next step is a demo on Friday."
)
CHECKS = [
    {"label": "Lead qualified", "passed": True, "detail": "stage: qualified", "required": True},
    {"label": "Note logged", "passed": True, "detail": "AUD-0001", "required": False},
    {"label": "No duplicate contact", "passed": True, "detail": "", "required": False},
]


def _first_runs(project: SiloProject) -> None:
    def run(task: str, name: str, env: str = "crm-west", **kwargs: Any) -> None:
        project.add_run(
            task, env=env, name=name, started=f"2026-03-16T09:{name[-2:]}:00.000Z", **kwargs
        )

    run("TASK-001", "run_20260316090000_a00", env="crm-west")
    run("TASK-001", "run_20260316090100_a01", env="crm-east")
    run(
        "TASK-002",
        "run_20260316090200_a02",
        result=make_result(checks=CHECKS, agent_output=LONG_OUTPUT),
        state_diff=make_state_diff(added=("AUD-0001", "AUD-0002"), changed=("OPP-005",)),
    )
    for n, task in enumerate(("TASK-003", "TASK-004", "TASK-005", "TASK-006"), start=3):
        run(task, f"run_20260316090{n}00_a0{n}")


def _second_runs(project: SiloProject) -> None:
    """The agent changed: what check, diff and status must report."""
    project.add_run(
        "TASK-002",
        name="run_20260316100000_b02",
        started="2026-03-16T10:00:00.000Z",
        result=make_result(
            passed=False,
            reward=0.33,
            checks=[
                {**CHECKS[2], "passed": False, "detail": "CON-017 twice"},
                {**CHECKS[1]},
                {**CHECKS[0], "passed": False, "detail": "stage: lead"},
            ],
            agent_output=LONG_OUTPUT.replace("a demo on Friday", "a pricing call on Monday"),
            tool_calls=9,
            tool_errors=1,
            termination="max_tool_calls",
        ),
        state_diff=make_state_diff(added=("AUD-0001", "AUD-0003"), changed=("OPP-005", "OPP-006")),
    )
    project.add_run(
        "TASK-003",
        name="run_20260316100100_b03",
        started="2026-03-16T10:01:00.000Z",
        files={"result.json": b'{\n  "passed": true,\n  "reward": 0.'},
    )
    project.add_run("TASK-007", name="run_20260316100200_b07", started="2026-03-16T10:02:00.000Z")
    project.add_run(
        "TASK-008",
        name="run_20260316100400_b08",
        started="2026-03-16T10:04:00.000Z",
        result=make_result(agent_output={"at": "x", "summary": "Call at 2026-03-16 14:30"}),
    )
    (project.runs_dir / "run_20260316100300_b99").mkdir()
    (project.runs_dir / "notes.txt").write_text("foreign file\n")
    # Hand edits of baselines, and a task whose runs were cleaned away.
    four = project.baselines / "TASK-004.result.json"
    four.write_bytes(four.read_bytes().replace(b"\n  ", b"\n    "))
    five = project.baselines / "TASK-005.result.json"
    # A wall-clock time (inside its run's window) and a timing value, which fmt
    # judges with no run at hand.
    timed = {"finishedAt": "2026-03-16T09:05:01.250Z", "durationMs": 1250}
    five.write_bytes(serialize({**make_result(), **timed}))
    shutil.rmtree(project.runs_dir / "run_20260316090600_a06")


@pytest.fixture
def golden_project(tmp_path: Path) -> tuple[SiloProject, dict[str, str]]:
    project = make_project(tmp_path / "project")
    _first_runs(project)
    outputs = {"record-all.txt": project.cli("record", "--all").stdout}
    _second_runs(project)
    return project, outputs


def _normalized(text: str, project: SiloProject) -> str:
    return text.replace(str(project.root), "<project>")


def _compare(name: str, actual: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(actual.encode("utf-8"))
        return
    assert path.exists(), f"{path} is missing; create it with UPDATE_GOLDEN=1"
    expected = path.read_bytes().decode("utf-8")
    assert actual == expected, f"{name} differs from its golden file; see the module docstring"


CASES: dict[str, tuple[tuple[str, ...], int, str]] = {
    # golden file: (arguments, exit code, stream)
    "check.txt": (("check",), 1, "stdout"),
    "check.stderr.txt": (("check",), 1, "stderr"),
    "check.json": (("check", "--format", "json"), 1, "stdout"),
    "check-verbose.txt": (("check", "--verbose", "TASK-001"), 0, "stdout"),
    "check-missing-baseline.txt": (("check", "TASK-007"), 1, "stdout"),
    "diff-TASK-002.txt": (("diff", "TASK-002"), 0, "stdout"),
    "fmt-check.txt": (("fmt", "--check"), 1, "stdout"),
    "record-volatile.stderr.txt": (("record", "TASK-008"), 3, "stderr"),
    "record-ambiguous.stderr.txt": (("record", "TASK-001"), 3, "stderr"),
    "record-TASK-002.txt": (("record", "TASK-002"), 0, "stdout"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_cli_output(
    golden_project: tuple[SiloProject, dict[str, str]],
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project, _ = golden_project
    # The advice gives paths from where check ran: relative within two levels, else
    # absolute. Run from a directory three levels from anywhere the project can be, so
    # every checkout (and CI's fresh clone, at another depth) prints the same bytes.
    elsewhere = tmp_path / "run" / "from" / "here"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    args, code, stream = CASES[name]
    result = project.cli(*args)
    assert result.exit_code == code, result.output
    _compare(name, _normalized(getattr(result, stream), project))


def test_record_all_output(golden_project: tuple[SiloProject, dict[str, str]]) -> None:
    _, outputs = golden_project
    _compare("record-all.txt", outputs["record-all.txt"])


def test_status_output(golden_project: tuple[SiloProject, dict[str, str]]) -> None:
    """status's AGE column depends on the clock: render it for a fixed moment."""
    project, _ = golden_project
    config = load_config(project.root)
    store = BaselineStore(config.baselines_dir, config.artifacts, "baselines")
    status = build_status(config, index_runs(config.runs_dir), store, now=NOW)
    _compare("status.txt", render_status(status))
