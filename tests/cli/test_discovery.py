"""Project discovery, the standalone silo-regress.toml, hostile config values, per-task tables."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.gitrepo import SILO, run
from support.silofixture import SiloProject, git_init, make_project, make_result
from typer.testing import CliRunner

from silo_regress.canon.pointer import PathPattern
from silo_regress.cli import app
from silo_regress.errors import ConfigError
from silo_regress.project.config import (
    DEFAULT_TRACE_EVENTS,
    NoProjectError,
    find_project,
    load_config,
)
from silo_regress.project.taskref import TaskRef


def _invoke(cwd: Path, *args: str, monkeypatch: pytest.MonkeyPatch) -> object:
    """The real CLI with no --project, started in ``cwd``: discovery does the rest."""
    monkeypatch.chdir(cwd)
    return CliRunner().invoke(app, ["--color", "never", *args], catch_exceptions=False)


def _standalone(root: Path, text: str = "") -> SiloProject:
    root.mkdir(parents=True, exist_ok=True)
    git_init(root)
    (root / "package.json").write_text('{"name": "agent"}\n')
    (root / "silo-regress.toml").write_text(text, encoding="utf-8")
    return SiloProject(root=root, runs_dir=root / ".silo" / "runs")


# --- discovery ----------------------------------------------------------------


@pytest.mark.parametrize(
    "marker",
    ["silo-regress.toml", ".silo-regress.toml", "pyproject", "format-file", "runs-dir"],
)
def test_each_marker_makes_a_project_found_from_a_subdirectory(tmp_path: Path, marker: str) -> None:
    root = tmp_path / "repo"
    (root / "src" / "deep").mkdir(parents=True)
    git_init(root)
    if marker == "pyproject":
        (root / "pyproject.toml").write_text('[tool.silo-regress]\nruns-dir = ".silo/runs"\n')
    elif marker == "format-file":
        (root / "baselines").mkdir()
        (root / "baselines" / ".silo-regress-format").write_text("1\n")
    elif marker == "runs-dir":
        (root / ".silo").mkdir()
    else:
        (root / marker).write_text("")
    assert find_project(root / "src" / "deep") == root.resolve()


def test_a_pyproject_without_the_section_is_walked_past(tmp_path: Path) -> None:
    project = _standalone(tmp_path / "repo")
    sub = project.root / "tools"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[project]\nname = "helper"\n')
    assert find_project(sub) == project.root.resolve()


def test_the_walk_stops_at_the_git_root(tmp_path: Path) -> None:
    (tmp_path / "silo-regress.toml").write_text("")  # above the repository: never borrowed
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    git_init(root)
    with pytest.raises(NoProjectError) as caught:
        find_project(root / "src")
    message = caught.value.message
    assert message.startswith("no silo-regress project found: looked for silo-regress.toml")
    assert f"in {root / 'src'}, {root} (the top of the git repository)" in message
    assert "silo-regress init" in message and "--project DIR" in message


def test_subdirectory_gives_the_same_answer_as_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The false pass of issue 9: `cd src && silo-regress check` must not see nothing."""
    project = _standalone(tmp_path / "repo")
    project.add_run("TASK-002")
    assert project.cli("record", "TASK-002").exit_code == 0
    project.add_run("TASK-002", result=make_result(passed=False, reward=0))
    (project.root / "src").mkdir()
    monkeypatch.chdir(project.root)  # both from inside the project: advice needs no -C
    at_root = project.cli("check")
    below = _invoke(project.root / "src", "check", monkeypatch=monkeypatch)
    assert at_root.exit_code == 1
    assert below.exit_code == 1  # type: ignore[attr-defined]
    assert below.stdout == at_root.stdout  # type: ignore[attr-defined]


def test_no_project_is_exit_3_and_the_hook_passes_with_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git_init(root)
    checked = _invoke(root, "check", monkeypatch=monkeypatch)
    assert checked.exit_code == 3  # type: ignore[attr-defined]
    assert checked.stderr.startswith(  # type: ignore[attr-defined]
        "silo-regress: error: no silo-regress project found: looked for "
    )
    assert _invoke(root, "status", monkeypatch=monkeypatch).exit_code == 3  # type: ignore[attr-defined]
    hook = _invoke(root, "check", "--staged", "--allow-no-runs", monkeypatch=monkeypatch)
    assert hook.exit_code == 0  # type: ignore[attr-defined]
    assert "no silo-regress project found" in hook.stdout  # type: ignore[attr-defined]
    assert "(--allow-no-runs: nothing to compare)" in hook.stdout  # type: ignore[attr-defined]


def test_project_option_skips_the_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _standalone(tmp_path / "repo", 'baselines-dir = "expected"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = CliRunner().invoke(app, ["--project", str(project.root), "status"])
    assert result.exit_code == 0, result.output
    assert load_config(project.root).baselines_dir == project.root.resolve() / "expected"


def test_a_check_with_no_baselines_says_where_it_looked(tmp_path: Path) -> None:
    project = _standalone(tmp_path / "repo")
    project.add_run("TASK-002")
    result = project.cli("check")
    assert result.exit_code == 3
    assert result.stderr == (
        "silo-regress: error: no baselines to check: no baseline files under baselines/ "
        f"(working tree) in project {project.root.resolve()} (config: silo-regress.toml); "
        "record some with `silo-regress record --all`, or pass --project DIR\n"
    )
    hook = project.cli("check", "--allow-no-runs")
    assert hook.exit_code == 0
    assert "no baselines to check" in hook.stdout and "(--allow-no-runs)" in hook.stdout


def test_lifecycle_from_a_subdirectory_through_the_installed_command(tmp_path: Path) -> None:
    """record, check, status and diff, run as a user would: from src/, in a subprocess."""
    project = _standalone(tmp_path / "repo", 'environment = "crm-west"\n')
    project.add_run("TASK-001")
    project.add_run("TASK-002")
    src = project.root / "src" / "agents"
    src.mkdir(parents=True)
    env = {"NO_COLOR": "1"}
    recorded = run(src, SILO, "record", "--all", env=env)
    assert "baselines/TASK-001.result.json" in recorded.stdout
    assert (project.root / "baselines" / "TASK-001.result.json").is_file()
    assert not (src / "baselines").exists()
    assert run(src, SILO, "check", env=env).stdout.startswith("4 match")
    project.add_run("TASK-002", result=make_result(passed=False))
    failed = run(src, SILO, "check", env=env, check=False)
    assert failed.returncode == 1
    assert "now FAILS" in failed.stdout
    assert "TASK-002" in run(src, SILO, "status", env=env).stdout
    assert "now FAILS" in run(src, SILO, "diff", "TASK-002", env=env).stdout


# --- the standalone file and two config files -----------------------------------


def test_standalone_file_has_the_same_keys_at_top_level(tmp_path: Path) -> None:
    project = _standalone(
        tmp_path / "repo",
        'runs-dir = "out/runs"\nartifacts = ["result.json"]\nenvironment = "crm-west"\n'
        'agent = "./silo.agent.ts"\ninputs = ["silo.agent.ts", "environments/**"]\n'
        'trace-events = ["tool_call"]\n\n[environments.crm-east]\ntimeout = 30\n',
    )
    config = load_config(project.root)
    root = project.root.resolve()
    assert config.source == root / "silo-regress.toml"
    assert config.where == "silo-regress.toml"
    assert config.runs_dir == root / "out" / "runs"
    assert config.artifacts == ("result.json",)
    assert config.environment == "crm-west"
    assert config.inputs == ("silo.agent.ts", "environments/**")
    assert config.input_globs == config.inputs
    assert config.trace_events == ("tool_call",)
    assert config.settings_for("crm-east").timeout == 30.0


def test_defaults_for_the_new_keys(tmp_path: Path) -> None:
    config = load_config(make_project(tmp_path / "p", config='agent = "./silo.agent.ts"\n').root)
    assert config.trace_events == DEFAULT_TRACE_EVENTS == ("tool_call", "tool_result")
    assert config.inputs == () and config.input_globs == ("silo.agent.ts",)
    assert load_config(tmp_path).input_globs == ()


def test_a_table_header_in_the_standalone_file_is_explained(tmp_path: Path) -> None:
    project = _standalone(tmp_path / "repo", '[tool.silo-regress]\nruns-dir = "x"\n')
    result = project.cli("check")
    assert result.exit_code == 3
    assert "in silo-regress.toml the keys go at the top level" in result.stderr


@pytest.mark.parametrize(
    "second", [".silo-regress.toml", "pyproject.toml"], ids=["dotfile", "pyproject"]
)
def test_two_config_files_are_an_error_naming_both(tmp_path: Path, second: str) -> None:
    project = _standalone(tmp_path / "repo")
    text = "[tool.silo-regress]\n" if second == "pyproject.toml" else ""
    (project.root / second).write_text(text)
    result = project.cli("status")
    assert result.exit_code == 3
    root = project.root.resolve()
    assert result.stderr.startswith(
        f"silo-regress: error: {root}/silo-regress.toml and {root}/{second} both configure"
    )


def test_a_pyproject_without_the_section_beside_the_standalone_file_is_fine(
    tmp_path: Path,
) -> None:
    project = _standalone(tmp_path / "repo", 'environment = "crm-west"\n')
    (project.root / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert load_config(project.root).environment == "crm-west"


# --- values a config file can hold -------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("jobs = inf\n", "'jobs' must be a positive number up to 1024, not inf"),
        ("jobs = nan\n", "'jobs' must be a positive number up to 1024, not nan"),
        ("jobs = 1e300\n", "'jobs' must be a positive number up to 1024, not 1e+300"),
        ("jobs = 2.5\n", "'jobs' must be a whole number"),
        ('jobs = "4"\n', "'jobs' must be a positive number, not a string"),
        ("timeout = nan\n", "'timeout' must be a positive number up to 604800, not nan"),
        ("timeout = -inf\n", "'timeout' must be a positive number up to 604800"),
        ("timeout = 1979-05-27\n", "'timeout' must be a positive number, not a date or time"),
        ('baselines-dir = "a\\u0000b"\n', "'baselines-dir' must not contain control characters"),
        ('runs-dir = "a\\u0000b"\n', "'runs-dir' must not contain control characters"),
        ('baselines-dir = "../outside"\n', "'baselines-dir' = '../outside' lies outside"),
        ('baselines-dir = "/etc"\n', "'baselines-dir' = '/etc' lies outside the project"),
        ('artifacts = ["result\\u0000.json"]\n', "must not contain control characters or NUL"),
        ('artifacts = ["a~2.json"]\n', "artifact 'a~2.json' cannot be baselined"),
        ('artifacts = ["result.json", "result.json"]\n', "names one artifact twice"),
        ('environment = "../../etc"\n', "'environment' '../../etc' is refused: it contains '..'"),
        ('environment = ".hidden"\n', "is refused: it starts with a dot"),
        ('environment = "a~b"\n', "it contains '~'"),
        ('ignore = [""]\n', "'ignore': '' names the whole document"),
        ('ignore = ["result.json:"]\n', "'ignore': 'result.json:' names the whole document"),
        ('ignore = ["/a~2b"]\n', "'ignore': '/a~2b' has '~' not followed by 0 or 1"),
        ('ignore = [":/x"]\n', "names no artifact before ':'"),
        ('volatile-exempt = ["x"]\n', "'volatile-exempt': 'x' must be a JSON Pointer"),
        ('silo-command = ["npx", "a\\u0000"]\n', "'silo-command': 'npx'"[:15]),
        ('agent = "a\\nb"\n', "'agent' must not contain control characters"),
        ('inputs = ["/etc/passwd"]\n', "'inputs': '/etc/passwd' must be a glob relative"),
        ('inputs = ["../other/*.ts"]\n', "must be a glob relative to the project root"),
        ("inputs = []\n", "'inputs' must not be empty"),
        ('trace-events = [""]\n', "'trace-events' must be a list of non-empty strings"),
        ('tasks = "x"\n', "'tasks' must be a table, not a string"),
        ('[tasks."../x/TASK-1"]\n', "task ref '../x/TASK-1' is not TASK-ID or ENV/TASK-ID"),
        ('[tasks."..x/TASK-1"]\n', "is refused: it contains '..'"),
        ('[tasks."a/b/c"]\n', "is not TASK-ID or ENV/TASK-ID"),
        ('[tasks."T~2"]\n', "cannot contain '~'"),
        ('[tasks.T1]\nagent = "x"\n', "tasks.T1: unknown key 'agent'"),
        ('[tasks.T1]\nignore = [""]\n', "tasks.T1: 'ignore': '' names the whole document"),
        ('[environments."a/b"]\n', "environment name 'a/b' is refused"),
        ("[environments.x]\njobs = 2\n", "environments.x: unknown key 'jobs'"),
        ("environments = { x = 3 }\n", "environments.x: must be a table, not a number"),
    ],
)
def test_bad_values_in_the_standalone_file(tmp_path: Path, text: str, message: str) -> None:
    project = _standalone(tmp_path / "repo", text)
    with pytest.raises(ConfigError) as caught:
        load_config(project.root)
    assert caught.value.message.startswith(f"{project.root.resolve()}/silo-regress.toml")
    assert message in caught.value.message
    result = project.cli("check")
    assert result.exit_code == 3, result.output
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ignore = " + "[" * 5000 + "]" * 5000 + "\n", "values nested too deeply"),
        ("x = \n", "not valid TOML"),
    ],
    ids=["nested", "invalid"],
)
def test_toml_the_parser_cannot_take(tmp_path: Path, text: str, message: str) -> None:
    project = _standalone(tmp_path / "repo", text)
    result = project.cli("check")
    assert result.exit_code == 3
    assert message in result.stderr and "Traceback" not in result.output


def test_tool_that_is_not_a_table(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "pyproject.toml").write_text('tool = 3\n[project]\nname = "silo-regress-demo"\n')
    result = CliRunner().invoke(app, ["--project", str(root), "check"])
    assert result.exit_code == 3
    assert result.stderr == (
        f"silo-regress: error: {root.resolve()}/pyproject.toml: 'tool' must be a table, "
        "not a number\n"
    )


def test_a_config_that_is_not_a_regular_file(tmp_path: Path) -> None:
    project = _standalone(tmp_path / "repo")
    (project.root / "silo-regress.toml").unlink()
    os.mkfifo(project.root / "silo-regress.toml")  # reading it would block for ever
    result = project.cli("check")
    assert result.exit_code == 3
    assert "silo-regress.toml: is not a regular file" in result.stderr


def test_a_huge_config_file_is_refused(tmp_path: Path) -> None:
    project = _standalone(tmp_path / "repo", "# " + "x" * (2 << 20) + "\n")
    result = project.cli("check")
    assert result.exit_code == 3
    assert "a config file over 1048576 bytes is refused" in result.stderr


# --- per-task and per-environment tables ------------------------------------------


def test_task_and_environment_tables_override_for_those_tasks_only(tmp_path: Path) -> None:
    project = _standalone(
        tmp_path / "repo",
        'ignore = ["/agentOutput"]\n'
        "[environments.crm-west]\n"
        'volatile-exempt = ["/checks/*/detail"]\n'
        '[tasks."crm-west/TASK-002"]\n'
        'artifacts = ["result.json", "tool-events.json"]\n'
        'ignore = ["result.json:/reward"]\n'
        "[tasks.TASK-003]\n"
        "ignore = []\n",
    )
    config = load_config(project.root)
    plain = config.task_settings(TaskRef("TASK-001"), environment="crm-east")
    assert plain.artifacts == ("result.json", "state-diff.json")
    assert plain.ignore == (PathPattern.parse("/agentOutput"),)
    assert plain.volatile_exempt == ()
    west = config.task_settings(TaskRef("TASK-001", "crm-west"))
    assert west.volatile_exempt == (PathPattern.parse("/checks/*/detail"),)
    assert west.ignore == plain.ignore
    two = config.task_settings(TaskRef("TASK-002"), environment="crm-west")
    assert two.artifacts == ("result.json", "tool-events.json")
    assert two.ignore == (PathPattern.parse("result.json:/reward"),)
    assert two.volatile_exempt == west.volatile_exempt  # inherited from the environment
    assert two.scan_exempt == two.volatile_exempt + two.ignore
    assert config.task_settings(TaskRef("TASK-002", "crm-east")).artifacts == plain.artifacts
    assert config.task_settings(TaskRef("TASK-003", "crm-east")).ignore == ()
    assert config.known_artifacts == ("result.json", "state-diff.json", "tool-events.json")


def test_tables_under_the_pyproject_section(tmp_path: Path) -> None:
    project = make_project(
        tmp_path / "p",
        config='[tool.silo-regress.tasks."crm-west/TASK-002"]\nartifacts = ["result.json"]\n',
    )
    config = load_config(project.root)
    assert config.task_settings(TaskRef("TASK-002", "crm-west")).artifacts == ("result.json",)
    assert config.task_settings(TaskRef("TASK-001", "crm-west")).artifacts == (
        "result.json",
        "state-diff.json",
    )
