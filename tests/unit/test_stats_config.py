"""The stats gate's config keys: gate (top, environment, task), suite-gate, min-pass-hat-k."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.silofixture import make_project

from silo_regress.errors import ConfigError
from silo_regress.project.config import Gate, PassFloor, SuiteGate, load_config
from silo_regress.project.taskref import TaskRef


def test_gate_is_exact_by_default_and_nothing_statistical_loads(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config.gate is Gate.EXACT and config.suite_gate is SuiteGate.FAIL
    assert not config.gates_statistically


def test_the_most_specific_table_sets_the_gate(tmp_path: Path) -> None:
    make_project(
        tmp_path / "p",
        config='gate = "both"\nsuite-gate = "warn"\n'
        "min-pass-hat-k = {k = 3, value = 0.8}\n"
        '[tool.silo-regress.environments.crm-west]\ngate = "stats"\n'
        '[tool.silo-regress.tasks.TASK-009]\ngate = "exact"\n'
        "min-pass-hat-k = {k = 2, value = 1}\n",
    )
    config = load_config(tmp_path / "p")
    assert config.gates_statistically and config.suite_gate is SuiteGate.WARN
    assert config.task_settings(TaskRef("TASK-001")).gate is Gate.BOTH
    west = config.task_settings(TaskRef("TASK-001"), environment="crm-west")
    assert west.gate is Gate.STATS and west.min_pass_hat_k == PassFloor(3, 0.8)
    own = config.task_settings(TaskRef("TASK-009"), environment="crm-west")
    assert own.gate is Gate.EXACT and own.min_pass_hat_k == PassFloor(2, 1.0)


def test_a_task_table_alone_turns_the_stats_gate_on(tmp_path: Path) -> None:
    make_project(tmp_path / "p", config='[tool.silo-regress.tasks.TASK-001]\ngate = "stats"\n')
    assert load_config(tmp_path / "p").gates_statistically


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('gate = "fisher"', "'gate' must be one of 'exact', 'stats', 'both', not 'fisher'"),
        ("gate = 1", "'gate' must be one of 'exact', 'stats', 'both', not a number"),
        ('suite-gate = "loud"', "'suite-gate' must be one of 'fail', 'warn', 'off'"),
        ("min-pass-hat-k = 0.8", "'min-pass-hat-k' must be a table like {k = 3, value = 0.8}"),
        ("min-pass-hat-k = {k = 0, value = 0.8}", "k must be a whole number from 1 to 1000"),
        ("min-pass-hat-k = {k = 3, value = 1.5}", "value must be a number from 0 to 1"),
        ("min-pass-hat-k = {k = true, value = 0.5}", "k must be a whole number"),
        ('artifacts = ["tally.json"]', "artifact 'tally.json' cannot be baselined"),
        ('artifacts = ["x.tally.json"]', "artifact 'x.tally.json' cannot be baselined"),
        ("sequential = [2, 4]", "'sequential' must be a table like {looks = [2, 4, 6, 8]}"),
        ("sequential = {looks = [2, 4], cap = 8}", "must be a table like {looks"),
        ("sequential = {looks = []}", "sequential.looks must be a list of 1 to 10"),
        ("sequential = {looks = [2, 2.5]}", "sequential.looks must hold whole numbers"),
        ("sequential = {looks = [2, true]}", "sequential.looks must hold whole numbers"),
        ("sequential = {looks = [0, 4]}", "sequential.looks must increase from 1"),
        ("sequential = {looks = [4, 4]}", "sequential.looks must increase from 1"),
        ("sequential = {looks = [2, 4000]}", "to at most 1000"),
    ],
)
def test_bad_stats_keys_are_errors_naming_the_file(tmp_path: Path, text: str, message: str) -> None:
    make_project(tmp_path / "p", config=text + "\n")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path / "p")
    assert "pyproject.toml" in caught.value.message
    assert message in caught.value.message, caught.value.message


def test_a_task_table_with_a_bad_gate_names_the_table(tmp_path: Path) -> None:
    make_project(tmp_path / "p", config='[tool.silo-regress.tasks.TASK-001]\ngate = "x"\n')
    with pytest.raises(ConfigError, match=r"tasks\.TASK-001: 'gate' must be one of"):
        load_config(tmp_path / "p")


def test_the_sequential_key_sets_the_looks(tmp_path: Path) -> None:
    make_project(tmp_path / "p", config="sequential = {looks = [2, 4, 6, 8]}\n")
    assert load_config(tmp_path / "p").sequential_looks == (2, 4, 6, 8)
    make_project(tmp_path / "q")
    assert load_config(tmp_path / "q").sequential_looks is None
