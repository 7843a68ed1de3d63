"""``required-version``: one silo-regress version for laptops, hooks and CI, as ruff's key."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.actionrunner import load_action, run_action
from support.gitrepo import BIN, recorded
from support.silofixture import SiloProject, git

from silo_regress import __version__

ROOT = Path(__file__).resolve().parents[2]


def _project(tmp_path: Path, required: str, *, where: str = "silo-regress.toml") -> SiloProject:
    project = recorded(tmp_path / "agent")
    pyproject = project.root / "pyproject.toml"
    if where == "silo-regress.toml":
        pyproject.unlink()
        (project.root / "silo-regress.toml").write_text(f"required-version = {required}\n")
    else:
        text = pyproject.read_text().replace(
            "[tool.silo-regress]\n", f"[tool.silo-regress]\nrequired-version = {required}\n"
        )
        pyproject.write_text(text)
    return project


def _mismatch(config: str, required: str) -> str:
    requirement = f"silo-regress{required}"
    return (
        f"silo-regress: error: {config}: required-version '{required}' does not admit this "
        f"silo-regress, {__version__}; install the required one, e.g. pip install "
        f"'{requirement}' in the project's virtualenv, or pipx install --force '{requirement}'\n"
    )


@pytest.mark.parametrize(
    "required", [f'"=={__version__}"', f'"{__version__}"', '">=0.3,<0.4"', '"~=0.3.0"']
)
def test_a_matching_version_runs_every_command(tmp_path: Path, required: str) -> None:
    project = _project(tmp_path, required)
    assert project.cli("check").exit_code == 0
    assert project.cli("status").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0


@pytest.mark.parametrize("command", [["check"], ["record", "--all"], ["status"], ["init"]])
def test_another_version_stops_every_command_naming_both(
    tmp_path: Path, command: list[str]
) -> None:
    project = _project(tmp_path, '"==0.2.0"')
    before = project.baseline_bytes()
    result = project.cli(*command)
    assert result.exit_code == 3
    assert result.stderr == _mismatch(str(project.root / "silo-regress.toml"), "==0.2.0")
    assert result.stdout == ""
    assert project.baseline_bytes() == before


def test_another_version_stops_the_lean_check_and_the_hook(tmp_path: Path) -> None:
    """`check` and `check --staged` start without typer (cli/quick.py): same sentence."""
    project = _project(tmp_path, '">=0.4"', where="pyproject.toml")
    git(project.root, "add", "-A")
    for args in (["check"], ["check", "--staged", "--allow-no-runs"]):
        done = subprocess.run(
            [str(BIN / "silo-regress"), *args],
            cwd=project.root,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 3, done.stdout
        assert done.stderr == _mismatch(
            f"{project.root / 'pyproject.toml'} [tool.silo-regress]", ">=0.4"
        )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"latest"', "'required-version' = 'latest' is not a version specifier"),
        ('"=>0.3"', 'is not a version specifier (write e.g. ">=0.3,<0.4" or "==0.3.0")'),
        ("3", "'required-version' must be a non-empty string, not a number"),
        ('""', "'required-version' must be a non-empty string"),
    ],
)
def test_a_bad_required_version_is_one_sentence(tmp_path: Path, value: str, message: str) -> None:
    project = _project(tmp_path, value)
    result = project.cli("check")
    assert result.exit_code == 3
    assert result.stderr.startswith("silo-regress: error: ")
    assert message in result.stderr
    assert result.stderr.count("\n") == 1


def test_required_version_comes_before_unknown_keys(tmp_path: Path) -> None:
    """A config written for a newer version: the version is the answer, not the key."""
    project = _project(tmp_path, '">=9"\nnew-key-of-version-9 = true')
    result = project.cli("check")
    assert result.exit_code == 3
    assert "required-version '>=9' does not admit" in result.stderr
    assert "unknown key" not in result.stderr


def test_an_exact_pin_of_this_version_does_not_load_packaging(tmp_path: Path) -> None:
    """The hook pays nothing for the usual pin; a range loads packaging (a few ms)."""
    for required, loaded in ((f'"=={__version__}"', "False"), ('">=0.3"', "True")):
        project = _project(tmp_path / required.strip('"=<>'), required)
        code = (
            "import sys; from silo_regress.cli import main; "
            f"code = main(['--project', {str(project.root)!r}, 'check']); "
            "print(code, 'packaging' in sys.modules)"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=False
        )
        assert done.stdout.splitlines()[-1] == f"0 {loaded}", done.stdout + done.stderr


def test_the_action_fails_on_a_version_mismatch(tmp_path: Path) -> None:
    project = _project(tmp_path, '"==0.2.0"')
    done = run_action(
        load_action(ROOT / "action.yml"),
        action_path=ROOT,
        workspace=project.root,
        runner_temp=tmp_path / "runner-temp",
        inputs={"command": "check"},
        skip={"install": {"bin": str(BIN)}},
    )
    assert done.code == 3
    assert done.outputs["run"]["exit-code"] == "3"
    assert _mismatch(str(project.root / "silo-regress.toml"), "==0.2.0") in done.stderr
    assert done.summary == ""
