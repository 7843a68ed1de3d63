"""The lean start-up path: the command lines it reads mean what typer says they mean,
everything else goes to typer, and `check` on it imports no typer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.silofixture import SiloProject, make_project
from typer.testing import CliRunner

from silo_regress.cli import checking, load_app
from silo_regress.cli.checking import CheckOptions
from silo_regress.cli.common import Globals
from silo_regress.cli.quick import parse_check

TAKEN = [
    ["check"],
    ["check", "--staged", "--allow-no-runs"],  # the pre-commit hook
    ["check", "--format", "junit", "--output", "report.xml"],  # CI
    ["check", "--format=github", "-o", "out.md", "--verbose"],
    ["-C", "proj", "check", "TASK-001", "crm/TASK-002"],
    ["--project=proj dir", "--color", "never", "check", "-v"],
    ["--color=always", "check", "--shard", "2/3", "--against", "origin/main"],
    ["check", "TASK-1", "--staged", "TASK-2", "--format", "json"],
    ["-C", "check", "check"],  # a project directory named check
]
LEFT_TO_TYPER = [
    [],
    ["--help"],
    ["check", "--help"],
    ["--version"],
    ["status"],
    ["record", "check"],
    ["check", "--run"],
    ["check", "--jobs", "2"],
    ["check", "--format", "yaml"],  # typer refuses it, with its own message
    ["check", "--format"],
    ["check", "--format", "json", "--format", "text"],
    ["check", "--staged", "--staged"],
    ["check", "--output", "-"],
    ["check", "--output="],
    ["check", "-ofile"],
    ["check", "-o=file"],
    ["-Cproj", "check"],
    ["--color", "sometimes", "check"],
    ["check", "--", "TASK-1"],
    ["check", "--staged=yes"],
    ["check", "-x"],
    ["--project", "p"],
]


def _typer_parse(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[Globals, CheckOptions]:
    seen: list[tuple[Globals, CheckOptions]] = []

    def capture(g: Globals, options: CheckOptions) -> int:
        seen.append((g, options))
        return 0

    monkeypatch.setattr(checking, "run_check", capture)
    result = CliRunner().invoke(load_app(), argv, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert len(seen) == 1
    return seen[0]


@pytest.mark.parametrize("argv", TAKEN, ids=" ".join)
def test_a_command_line_read_here_means_what_typer_reads(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ours = parse_check(argv)
    assert ours is not None, "the lean path takes this command line"
    assert ours == _typer_parse(argv, monkeypatch)


@pytest.mark.parametrize("argv", LEFT_TO_TYPER, ids=lambda a: " ".join(a) or "(none)")
def test_anything_else_is_left_to_typer(argv: list[str]) -> None:
    assert parse_check(argv) is None


def _project(tmp_path: Path) -> SiloProject:
    project = make_project(tmp_path / "p")
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    return project


_PROBE = """
import sys
from silo_regress.cli import main
code = main(sys.argv[1:])
loaded = sorted(m for m in ("typer", "click", "git", "pygments") if m in sys.modules)
sys.stderr.write(f"exit {code} loaded {loaded}\\n")
"""


def test_check_and_the_hook_start_without_typer(tmp_path: Path) -> None:
    project = _project(tmp_path)
    for args in (["check"], ["check", "--staged", "--allow-no-runs"]):
        if args[1:2] == ["--staged"]:
            subprocess.run(["git", "init", "-q"], cwd=project.root, check=True)
            subprocess.run(["git", "add", "-A"], cwd=project.root, check=True)
        done = subprocess.run(
            [sys.executable, "-c", _PROBE, "-C", str(project.root), *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert "exit 0 loaded []" in done.stderr, done.stderr
        assert "2 match" in done.stdout


def test_errors_on_the_lean_path_are_one_sentence_and_the_documented_code(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, "-C", str(project.root), "check", "NO-SUCH-TASK"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in done.stderr
    assert "silo-regress: error: task NO-SUCH-TASK:" in done.stderr
    assert "exit 3 loaded []" in done.stderr
    changed = project.add_run("TASK-001", result={"passed": False})
    assert changed.is_dir()
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, "-C", str(project.root), "check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "exit 1 loaded []" in done.stderr, done.stderr
