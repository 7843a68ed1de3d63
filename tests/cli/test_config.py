"""The [tool.silo-regress] section: defaults, every key, and clear errors for bad values."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.silofixture import make_project

from silo_regress.canon.pointer import PathPattern
from silo_regress.cli import app
from silo_regress.errors import ConfigError
from silo_regress.project.config import DEFAULT_ARTIFACTS, load_config


def test_defaults_without_pyproject(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config.project == tmp_path.resolve()
    assert config.runs_dir == tmp_path.resolve() / ".silo" / "runs"
    assert config.baselines_dir == tmp_path.resolve() / "baselines"
    assert config.artifacts == DEFAULT_ARTIFACTS == ("result.json", "state-diff.json")
    assert config.environment is None and config.source is None
    assert config.silo_command == ("npx", "--no", "silo")
    assert config.volatile_exempt == () and config.ignore == ()


def test_defaults_with_a_pyproject_without_the_section(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    config = load_config(tmp_path)
    assert config.source is None and config.artifacts == DEFAULT_ARTIFACTS


def test_every_key(tmp_path: Path) -> None:
    project = make_project(
        tmp_path / "p",
        config="""runs-dir = "../elsewhere/runs"
baselines-dir = "tests/baselines"
artifacts = ["result.json"]
environment = "crm-west"
silo-command = ["node", "silo.js"]
agent = "./silo.agent.ts"
jobs = 4
timeout = 90
volatile-exempt = ["/checks/*/detail"]
ignore = ["result.json:/agentOutput/requestId"]

[tool.silo-regress.environments.crm-east]
agent = "./east.agent.ts"
timeout = 30
""",
    )
    config = load_config(project.root)
    root = project.root.resolve()
    assert config.source == root / "pyproject.toml"
    assert config.runs_dir == root / "../elsewhere/runs"
    assert config.baselines_dir == root / "tests" / "baselines"
    assert config.artifacts == ("result.json",)
    assert config.environment == "crm-west"
    assert config.silo_command == ("node", "silo.js")
    assert (config.agent, config.jobs, config.timeout) == ("./silo.agent.ts", 4, 90.0)
    assert config.volatile_exempt == (PathPattern.parse("/checks/*/detail"),)
    (ignored,) = config.ignore
    assert (ignored.artifact, ignored.segments) == ("result.json", ("agentOutput", "requestId"))
    assert config.scan_exempt == config.volatile_exempt + config.ignore
    east = config.settings_for("crm-east")
    assert (east.agent, east.timeout, east.silo_command) == (
        "./east.agent.ts",
        30.0,
        ("node", "silo.js"),
    )
    west = config.settings_for("crm-west")
    assert (west.agent, west.timeout) == ("./silo.agent.ts", 90.0)
    assert config.relative(root / "baselines" / "x.json") == "baselines/x.json"
    assert config.relative(Path("/elsewhere/x")) == "/elsewhere/x"


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ('runs_dir = "x"\n', "unknown key 'runs_dir'"),
        ('runs-dir = ""\n', "'runs-dir' must be a non-empty string"),
        ("runs-dir = 3\n", "'runs-dir' must be a non-empty string"),
        ('artifacts = "result.json"\n', "'artifacts' must be a list of non-empty strings"),
        ("artifacts = []\n", "'artifacts' must not be empty"),
        ('artifacts = ["run.json"]\n', "artifact 'run.json' cannot be baselined"),
        ('artifacts = ["../result.json"]\n', "artifact '../result.json' cannot be baselined"),
        ("jobs = 2.5\n", "'jobs' must be a whole number"),
        ("jobs = 0\n", "'jobs' must be a positive number"),
        ("timeout = -1\n", "'timeout' must be a positive number"),
        ("timeout = true\n", "'timeout' must be a positive number"),
        ('volatile-exempt = ["agentOutput"]\n', "'agentOutput' must be a JSON Pointer"),
        ('ignore = "/x"\n', "'ignore' must be a list of JSON Pointer patterns"),
        ('environments = "crm-west"\n', "'environments' must be a table"),
        ("[tool.silo-regress.environments.crm-west]\nmodel = 1\n", "unknown key 'model'"),
    ],
)
def test_bad_values_are_errors_naming_the_file(tmp_path: Path, section: str, message: str) -> None:
    project = make_project(tmp_path / "p", config=section)
    with pytest.raises(ConfigError) as caught:
        load_config(project.root)
    assert str(project.root.resolve() / "pyproject.toml") in caught.value.message
    assert message in caught.value.message
    result = project.cli("check")
    assert result.exit_code == 3
    assert result.stderr.startswith(f"silo-regress: error: {project.root.resolve()}/pyproject.toml")
    assert result.stdout == ""


def test_invalid_toml(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", config="runs-dir = \n")
    result = project.cli("status")
    assert result.exit_code == 3
    assert result.stderr.startswith(
        f"silo-regress: error: {project.root.resolve()}/pyproject.toml: not valid TOML"
    )
    (project.root / "pyproject.toml").write_bytes(b'[tool.silo-regress]\nagent = "\xff"\n')
    assert project.cli("check").exit_code == 3


def test_section_that_is_not_a_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool]\nsilo-regress = "yes"\n')
    with pytest.raises(ConfigError, match=r"\[tool.silo-regress\] must be a table"):
        load_config(tmp_path)


def test_missing_project_directory(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    result = project.runner.invoke(app, ["--project", str(tmp_path / "nowhere"), "check"])
    assert result.exit_code == 3
    assert result.stderr == (
        f"silo-regress: error: {tmp_path / 'nowhere'}: project directory does not exist\n"
    )


def test_paths_in_config_are_used(tmp_path: Path) -> None:
    project = make_project(
        tmp_path / "p", config='runs-dir = "silo-out"\nbaselines-dir = "regress/baselines"\n'
    )
    project.runs_dir = project.root / "silo-out"
    project.add_run("TASK-002")
    result = project.cli("record", "TASK-002")
    assert result.exit_code == 0, result.output
    assert "regress/baselines/TASK-002.result.json" in result.stdout
    assert (project.root / "regress" / "baselines" / "TASK-002.result.json").is_file()
    assert not project.baselines.exists()
    assert project.cli("check").exit_code == 0
