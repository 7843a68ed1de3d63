"""One escaping rule for a note: the summary line and the behaviour line show the same
characters for the same agent text (a backslash is never doubled by one and not the
other)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.silofixture import make_project, make_result

LONG = "The lead was saved under C:\\crm\\leads and the note was logged for follow-up. " * 3


def _summary_and_behaviour(stdout: str, task: str) -> tuple[str, list[str]]:
    lines = stdout.splitlines()
    summary = next(line for line in lines if line.startswith("  ") and f"{task} (" in line)
    start = next(i for i, line in enumerate(lines) if line.startswith("CHANGED") and task in line)
    behaviour = []
    for line in lines[start + 1 :]:
        if line.startswith("    - "):
            behaviour.append(line[len("    - ") :])
        elif behaviour:
            break
    return summary.split(": ", 1)[1], behaviour


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("saved to C:\\temp", "saved to C:\\tmp\\new \x1b[31mred"),  # short: old -> new
        (LONG, LONG.replace("follow-up", "follow\\up")),  # long: a word diff
    ],
    ids=["short", "word-diff"],
)
def test_the_summary_and_the_behaviour_line_escape_alike(
    tmp_path: Path, old: str, new: str
) -> None:
    project = make_project(tmp_path / "p")
    project.add_run("TASK-001", result=make_result(agent_output=old))
    assert project.cli("record", "--all").exit_code == 0
    project.add_run("TASK-001", result=make_result(agent_output=new))
    stdout = project.cli("check").stdout
    summary, behaviour = _summary_and_behaviour(stdout, "TASK-001")
    assert summary == behaviour[0], (summary, behaviour[0])
    assert "\\\\" in summary  # a backslash shown escaped: reversible
    assert "\x1b" not in stdout


def test_a_check_label_is_escaped_alike_in_both_lines(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    project.add_run("TASK-001")
    assert project.cli("record", "--all").exit_code == 0
    checks = [
        {"label": "Lead qualified", "passed": True, "detail": "", "required": True},
        {"label": "Note logged", "passed": True, "detail": "AUD-0001", "required": False},
        {"label": 'saved "C:\\x"', "passed": True, "detail": "", "required": False},
    ]
    project.add_run("TASK-001", result=make_result(checks=checks))
    summary, behaviour = _summary_and_behaviour(project.cli("check").stdout, "TASK-001")
    assert summary.split("; ")[0] == behaviour[0]
    assert behaviour[0] == 'check "saved \\"C:\\\\x\\"" added (passed)'
