"""The repository itself: its own check passes, the docs cover every command, and the
pre-commit path starts without the heavy imports (the layers: test_layers.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
from silofixture import SiloProject, make_result
from typer.testing import CliRunner

from silo_regress.cli import app

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "silo_regress"


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "PYTHONPATH")}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def test_the_repository_check_passes() -> None:
    result = _run(["-m", "silo_regress", "check"], ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " match (" in result.stdout
    assert "changed" not in result.stdout


# --- documentation --------------------------------------------------------------


def _commands() -> dict[str, object]:
    return dict(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def test_every_command_is_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = _commands()
    assert {"record", "check", "fmt", "status", "diff"} <= set(commands)
    missing = [name for name in commands if f"silo-regress {name}" not in readme]
    assert not missing, f"README.md never shows `silo-regress <cmd>` for: {', '.join(missing)}"


def test_every_command_has_help_text() -> None:
    for name, command in _commands().items():
        text = (getattr(command, "help", None) or "").strip()
        assert text, f"command {name!r} has no help text (give its function a docstring)"
        helped = CliRunner().invoke(app, [name, "--help"])
        assert helped.exit_code == 0, (name, helped.output)
        assert text.splitlines()[0][:40] in " ".join(helped.stdout.split()), name


# --- start-up -------------------------------------------------------------------

HEAVY = ("git", "pygments", "pydantic", "rich")
# Off the path of a matching check in a project without `inputs` or `agent`: each one
# costs the hook a few milliseconds (dataclasses to build, regexes to compile) for
# work that check does not do there (status rows, recording, stale runs, diffs, an
# internal error's traceback, writes of a cache that is up to date, asking which
# thread installs the SIGTERM handler).
DEFERRED = (
    "silo_regress.reports.overview",
    "silo_regress.recording.recorder",
    "silo_regress.runs.freshness",
    "silo_regress.runs.provenance",
    "silo_regress.project.fingerprint",
    "silo_regress.canon.jsondiff",
    "silo_regress.canon.volatile",  # the scan: only once the prefilter sees a hint
    "silo_regress.runs.clock",
    "silo_regress.store.gitsource",  # a working-tree check reads no baseline from git
    "silo_regress.runs.toolpath",  # derives tool-events.json: only a project that baselines it
    "silo_regress.render.advice",  # nothing to accept
    "silo_regress.stats",  # the statistical gate: only for tasks with gate = "stats"
    "shlex",
    "traceback",
    "tempfile",
    "threading",
    "secrets",
    "hashlib",
)


def _modules(stderr: str) -> set[str]:
    """Full module names from ``python -X importtime`` output."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.add(name)
    return names


def _imported(stderr: str) -> set[str]:
    """Top-level module names from ``python -X importtime`` output."""
    return {name.split(".")[0] for name in _modules(stderr)}


@pytest.fixture
def matching_project(project: SiloProject) -> SiloProject:
    project.add_run("TASK-002", started="2026-03-16T09:00:00.000Z")
    project.add_run("TASK-003", started="2026-03-16T09:00:00.000Z")
    assert project.cli("record", "--all").exit_code == 0
    return project


def test_check_on_a_matching_project_imports_nothing_heavy(
    matching_project: SiloProject,
) -> None:
    result = _run(["-X", "importtime", "-m", "silo_regress", "check"], matching_project.root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 match" in result.stdout
    imported = _imported(result.stderr)
    assert {"silo_regress", "orjson"} <= imported  # the parser sees imports at all
    assert not imported & set(HEAVY), sorted(imported & set(HEAVY))
    modules = _modules(result.stderr)
    assert "silo_regress.judging.judge" in modules
    assert not modules & set(DEFERRED), sorted(modules & set(DEFERRED))


def test_check_loads_what_it_defers_once_it_needs_it(matching_project: SiloProject) -> None:
    """The deferred modules still load where their work is done: proof the probe sees them."""
    config = matching_project.root / "pyproject.toml"
    config.write_text(config.read_text(encoding="utf-8") + 'inputs = ["agent.ts"]\n')
    (matching_project.root / "agent.ts").write_text("export default {}\n", encoding="utf-8")
    matching_project.add_run(
        "TASK-002", started="2099-01-01T00:00:00.000Z", result=make_result(reward=0)
    )
    args = ["-X", "importtime", "-m", "silo_regress", "--color", "never", "check"]
    result = _run(args, matching_project.root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "changed" in result.stdout
    modules = _modules(result.stderr)
    stale_and_diff = {
        "silo_regress.runs.freshness",
        "silo_regress.runs.provenance",
        "silo_regress.project.fingerprint",
        "silo_regress.canon.jsondiff",
        "hashlib",
    }
    assert stale_and_diff <= modules, sorted(stale_and_diff - modules)


def test_a_failing_check_without_colour_imports_nothing_heavy(
    matching_project: SiloProject,
) -> None:
    matching_project.add_run(
        "TASK-002", started="2026-03-16T10:00:00.000Z", result=make_result(reward=0)
    )
    args = ["-X", "importtime", "-m", "silo_regress", "--color", "never", "check"]
    plain = _run(args, matching_project.root)
    assert plain.returncode == 1
    assert not _imported(plain.stderr) & set(HEAVY)
    # Colour is the one reason to load pygments: proof that the probe would notice.
    coloured = _run([*args[:-3], "--color", "always", "check"], matching_project.root)
    assert coloured.returncode == 1
    assert "pygments" in _imported(coloured.stderr)
    assert "git" not in _imported(coloured.stderr)


def test_the_readme_failing_report_is_what_check_prints(tmp_path: Path) -> None:
    """The README's captured report, reproduced from the bundled example."""
    import shutil

    demo = tmp_path / "demo"
    shutil.copytree(ROOT / "examples" / "crm-demo", demo)
    runner = CliRunner()

    def cli(*args: str) -> str:
        result = runner.invoke(app, ["--project", str(demo), "--color", "never", *args])
        return result.stdout

    cli("record", "--all")
    cli("record", "TASK-005", "--run-id", "run_20260315164458_ze7")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### What a failing check looks like", 1)[1]
    captured = section.split("```text\n", 1)[1].split("```", 1)[0]
    assert cli("check", "TASK-005") == captured
