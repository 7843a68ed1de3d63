"""A per-task ``artifacts`` table reaches every command, not only the judge.

The bundled example's TASK-006 baselines its tool path in ``[tool.silo-regress.tasks.TASK-006]``;
baseline discovery, record, ``--staged``, fmt and log must all see that artifact.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from support.silofixture import git, git_init
from typer.testing import CliRunner, Result

from silo_regress.cli import app

ROOT = Path(__file__).parents[2]
DEMO = ROOT / "examples" / "crm-demo"
TOOL_PATH = "baselines/TASK-006.tool-events.json"


def cli(project: Path, *args: str) -> Result:
    return CliRunner().invoke(
        app, ["--color", "never", "--project", str(project), *args], catch_exceptions=False
    )


def demo(tmp_path: Path) -> Path:
    """The example with the root's baselines, committed in a new git repository."""
    project = tmp_path / "crm-demo"
    shutil.copytree(DEMO, project)
    shutil.copytree(ROOT / "baselines", project / "baselines")
    git_init(project)
    git(project, "add", "-A")
    git(project, "commit", "-q", "--no-verify", "-m", "The example")
    return project


def test_root_check_compares_the_per_task_tool_path() -> None:
    result = cli(ROOT, "check", "--verbose")
    assert result.exit_code == 0, result.output
    assert "TASK-006 (crm-west)  tool-events.json" in result.output
    assert "15 match (15 artifacts of 7 tasks)" in result.output


def test_record_writes_the_tool_path_only_for_the_task_that_asks(tmp_path: Path) -> None:
    project = demo(tmp_path)
    (project / TOOL_PATH).unlink()
    result = cli(project, "record", "TASK-006")
    assert result.exit_code == 0, result.output
    assert (project / TOOL_PATH).read_bytes() == (ROOT / TOOL_PATH).read_bytes()
    result = cli(project, "record", "TASK-002")
    assert result.exit_code == 0, result.output
    assert not list((project / "baselines").rglob("TASK-002.tool-events.json"))


def test_staged_check_compares_the_staged_tool_path(tmp_path: Path) -> None:
    project = demo(tmp_path)
    before = cli(project, "check", "--staged")
    assert before.exit_code == 0, before.output
    assert "15 match" in before.output
    baseline = project / TOOL_PATH
    baseline.write_bytes(baseline.read_bytes().replace(b'"ACC-007"', b'"ACC-070"', 1))
    git(project, "add", TOOL_PATH)
    after = cli(project, "check", "--staged")
    assert after.exit_code == 1, after.output
    assert "TASK-006.tool-events.json" in after.output
    assert "1 changed" in after.output


def test_fmt_rewrites_a_non_canonical_tool_path(tmp_path: Path) -> None:
    project = demo(tmp_path)
    baseline = project / TOOL_PATH
    canonical = baseline.read_bytes()
    baseline.write_bytes(canonical.replace(b"\n", b"\n  "))
    result = cli(project, "fmt")
    assert result.exit_code == 0, result.output
    assert "TASK-006.tool-events.json" in result.output
    assert baseline.read_bytes() == canonical


def test_log_follows_the_tool_path(tmp_path: Path) -> None:
    project = demo(tmp_path)
    result = cli(project, "log", "TASK-006")
    assert result.exit_code == 0, result.output
    assert "tool-events.json" in result.output
