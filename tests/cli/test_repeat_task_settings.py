"""run --repeat judges a task by its own table, as check does, and prints its fix there.

With ``ignore = ["result.json:/agentOutput"]`` in the task's table, three rollouts that
differ only in agentOutput are stable; a task whose repeats differ elsewhere gets the
``ignore`` line for its own table, holding the patterns that table already has.
"""

from __future__ import annotations

from pathlib import Path

from support.runnerkit import LONG_OUTPUTS, behave, control, silo_project  # noqa: F401


def test_a_tasks_own_ignore_makes_its_repeats_stable(
    tmp_path: Path,
    control: Path,  # noqa: F811
) -> None:
    project = silo_project(
        tmp_path,
        '\n[tool.silo-regress.tasks."crm-west/TASK-001"]\nignore = ["result.json:/agentOutput"]\n',
    )
    behave(control, **{"TASK-001": {"mode": "vary", "outputs": LONG_OUTPUTS}})
    result = project.cli("run", "--repeat", "3", "TASK-001")
    assert result.exit_code == 0, result.output
    assert "crm-west/TASK-001: stable" in result.stdout
    assert "/agentOutput" not in result.stdout


def test_the_fix_line_goes_in_the_tasks_own_table(
    tmp_path: Path,
    control: Path,  # noqa: F811
) -> None:
    project = silo_project(
        tmp_path,
        '\n[tool.silo-regress.tasks."crm-west/TASK-001"]\nignore = ["result.json:/agentOutput"]\n',
    )
    behave(
        control,
        **{"TASK-001": {"mode": "vary", "outputs": LONG_OUTPUTS, "passed": [True, False, True]}},
    )
    result = project.cli("run", "--repeat", "3", "TASK-001")
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert "  to make it stable, ignore what varies (in pyproject.toml):\n" in out
    assert '    [tool.silo-regress.tasks."crm-west/TASK-001"]\n' in out
    assert '      "result.json:/agentOutput",\n' in out  # the table's own entry, kept
    assert '      "result.json:/checks/2/passed",\n' in out
    assert "/agentOutput: 3 values" not in out
