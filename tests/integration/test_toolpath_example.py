"""The bundled example's tool path: its baseline is the newest run's, its traces are Silo's."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from silo_regress import behaviour
from silo_regress.canon.canonical import canonicalize
from silo_regress.project.config import load_config
from silo_regress.project.taskref import TaskRef
from silo_regress.render.wording import words
from silo_regress.runs.toolpath import ToolPath, derive_tool_path, read_tool_calls, read_tool_path

ROOT = Path(__file__).parents[2]
DEMO = ROOT / "examples" / "crm-demo"
RUNS = DEMO / ".silo" / "runs"
NEWEST = RUNS / "run_20260316140327_15kf"  # crm-west/TASK-006, newer Silo trace
OLDER = RUNS / "run_20260315151042_yqk"  # crm-west/TASK-006, older Silo trace


def test_the_committed_tool_path_baseline_is_the_newest_runs() -> None:
    baseline = (ROOT / "baselines" / "TASK-006.tool-events.json").read_bytes()
    assert read_tool_path(NEWEST) == baseline
    assert canonicalize(baseline, source="x").text == baseline
    # Simulated ERP date-times in tool outputs are part of the path.
    assert b'"invoiceDate": "2026-03-02T09:30:00.000Z"' in baseline


def test_the_config_enables_the_tool_path_for_that_task() -> None:
    """Both the root project and the example's own silo-regress.toml: TASK-006 only."""
    for project in (ROOT, DEMO):
        config = load_config(project)
        task = config.task_settings(TaskRef("TASK-006"), environment="crm-west")
        other = config.task_settings(TaskRef("TASK-002"), environment="crm-west")
        assert task.artifacts == ("result.json", "state-diff.json", "tool-events.json")
        assert other.artifacts == ("result.json", "state-diff.json")


def test_every_trace_of_the_example_gives_a_path() -> None:
    for run in sorted(p for p in RUNS.iterdir() if (p / "trace.jsonl").is_file()):
        found = derive_tool_path(run, tool_calls=read_tool_calls(run))
        assert isinstance(found, ToolPath), f"{run.name}: {found}"


def test_the_older_run_reads_in_tool_terms_against_the_baseline() -> None:
    old = canonicalize(read_tool_path(OLDER), source="old").value
    new = canonicalize(read_tool_path(NEWEST), source="new").value
    said = words(behaviour.compare("tool-events.json", old, new))
    assert said[:3] == [
        "tool calls 3 -> 4 (+1)",
        "+2 update_deal (0 -> 2 calls)",
        "+1 get_invoice (0 -> 1 call)",
    ]
    assert "baseline call 3 delete_deal dropped (it errored: tool_not_found)" in said
    assert "call 3 update_deal inserted (errors: invalid_input)" in said


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_generator_writes_the_committed_traces(tmp_path: Path) -> None:
    copy = tmp_path / "crm-demo"
    shutil.copytree(DEMO, copy)
    subprocess.run(
        ["node", str(copy / "generate-runs.mjs")], check=True, capture_output=True, timeout=60
    )
    for trace in RUNS.glob("*/trace.jsonl"):
        again = copy / ".silo" / "runs" / trace.parent.name / "trace.jsonl"
        assert again.read_bytes() == trace.read_bytes(), trace.parent.name
