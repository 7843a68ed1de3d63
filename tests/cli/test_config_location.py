"""Every message that names a config key names the file the project really uses.

A silo-regress.toml holds its keys at the top level; telling its user to edit
``[tool.silo-regress]`` sends them to a table that file must not have.
"""

from __future__ import annotations

from pathlib import Path

from support.silofixture import SiloProject, make_result

from silo_regress.project.config import ConfigLocation, ConfigStyle, load_config, task_table


def _standalone(root: Path, config: str = "") -> SiloProject:
    root.mkdir(parents=True)
    (root / "silo-regress.toml").write_text(config)
    return SiloProject(root=root, runs_dir=root / ".silo" / "runs")


def test_the_location_knows_each_style() -> None:
    plain = ConfigLocation("silo-regress.toml", ConfigStyle.STANDALONE)
    assert plain.header() is None
    assert plain.place() == "silo-regress.toml"
    assert plain.header(*task_table("TASK-001", "crm-demo")) == '[tasks."crm-demo/TASK-001"]'
    assert plain.key("ignore", "tasks", "crm-demo/TASK-001") == (
        "'ignore' in silo-regress.toml [tasks.\"crm-demo/TASK-001\"]"
    )
    pyproject = ConfigLocation("pyproject.toml", ConfigStyle.PYPROJECT)
    assert pyproject.place() == "pyproject.toml [tool.silo-regress]"
    assert pyproject.header("tasks", "crm-demo/TASK-001") == (
        '[tool.silo-regress.tasks."crm-demo/TASK-001"]'
    )


def test_defaults_name_the_file_a_setting_would_go_in(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert str(load_config(tmp_path / "a").location) == "silo-regress.toml"
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "pyproject.toml").write_text('[project]\nname = "b"\n')
    assert str(load_config(tmp_path / "b").location) == "pyproject.toml [tool.silo-regress]"


def test_messages_of_a_standalone_project_name_silo_regress_toml(tmp_path: Path) -> None:
    project = _standalone(tmp_path / "p")
    messages = []
    # No runs directory: record says which key moves it.
    done = project.cli("record", "TASK-001")
    assert done.exit_code == 3
    messages.append(done.stderr)
    assert "set 'runs-dir' in silo-regress.toml" in done.stderr
    # A task in two environments: which key picks one.
    project.add_run("TASK-001", env="crm-west")
    project.add_run("TASK-001", env="crm-east")
    done = project.cli("record", "TASK-001")
    assert done.exit_code == 3
    messages.append(done.stderr)
    assert "or set 'environment' in silo-regress.toml" in done.stderr
    # A task nobody ran and no environment configured.
    done = project.cli("run", "TASK-009")
    assert done.exit_code == 3
    messages.append(done.stderr)
    assert "set 'environment' in silo-regress.toml" in done.stderr
    # Volatile content: the task's own table of this file.
    project.add_run("TASK-002", result=make_result(error="2026-03-16T10:00:01.000Z"))
    done = project.cli("record", "TASK-002")
    assert done.exit_code == 3
    messages.append(done.stderr)
    assert "ignore it with ignore in silo-regress.toml" in done.stderr
    assert not any("[tool.silo-regress]" in m for m in messages), messages


def test_a_volatile_verdict_points_at_the_tasks_table(tmp_path: Path) -> None:
    project = _standalone(tmp_path / "p")
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    baseline = project.baselines / "crm-west" / "TASK-001.result.json"
    if not baseline.exists():
        baseline = project.baselines / "TASK-001.result.json"
    run = sorted(project.runs_dir.iterdir())[-1]
    text = baseline.read_text().replace('"error": null', '"error": "2026-03-16T10:00:01.000Z"')
    baseline.write_text(text)
    (run / "result.json").write_text(text)
    done = project.cli("check")
    assert done.exit_code == 1, done.output
    assert 'exempt or ignore these paths in silo-regress.toml [tasks."crm-west/TASK-001"]' in (
        done.stdout
    )
