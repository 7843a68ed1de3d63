"""Colour golden files: check, diff and review on a real terminal, with and without NO_COLOR.

A fixed project (run names, start times, contents) with a regression, an
improvement and a drift, run through a pseudo-terminal so that ``--color auto``
sees a tty. With NO_COLOR set the output holds no escape at all; without it,
changed words are marked within the line and each result takes its direction's
colour. After an intended change, regenerate and review the escapes:

    UPDATE_GOLDEN=1 python -m pytest tests/test_golden_color.py
    git diff tests/golden/color/ | cat -v
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from support.silofixture import SiloProject, make_result, make_state_diff

pexpect = pytest.importorskip("pexpect")

GOLDEN = Path(__file__).parent.parent / "golden" / "color"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
OUTPUT = "Qualified LEAD-014 (Müller Logistik): next step is a demo on Friday."
CHECKS = [
    {"label": "Lead qualified", "passed": True, "detail": "stage: qualified", "required": True},
    {"label": "Note logged", "passed": True, "detail": "AUD-0001", "required": False},
]
WORSE = [{**CHECKS[0], "passed": False, "detail": "stage: lead"}, CHECKS[1]]


@pytest.fixture
def colour_project(project: SiloProject) -> SiloProject:
    """TASK-002 regresses, TASK-003 improves, TASK-004 drifts."""
    first = {
        "TASK-002": make_result(checks=CHECKS, agent_output=OUTPUT),
        "TASK-003": make_result(passed=False, reward=0.5, checks=WORSE),
        "TASK-004": make_result(checks=CHECKS),
    }
    for n, (task, result) in enumerate(first.items(), start=2):
        project.add_run(
            task,
            name=f"run_2026031609000{n}_a0{n}",
            started=f"2026-03-16T09:00:0{n}.000Z",
            result=result,
        )
    assert project.cli("record", "--all").exit_code == 0
    second = {
        "TASK-002": (
            make_result(
                passed=False,
                reward=0.33,
                checks=WORSE,
                agent_output=OUTPUT.replace("a demo on Friday", "a pricing call on Monday"),
            ),
            None,
        ),
        "TASK-003": (make_result(checks=CHECKS), None),
        "TASK-004": (make_result(checks=CHECKS), make_state_diff(added=("AUD-0001", "AUD-0007"))),
    }
    for n, (task, (result, state)) in enumerate(second.items(), start=2):
        project.add_run(
            task,
            name=f"run_2026031610000{n}_b0{n}",
            started=f"2026-03-16T10:00:0{n}.000Z",
            result=result,
            state_diff=state,
        )
    return project


def _on_a_terminal(
    project: SiloProject, args: tuple[str, ...], *, no_color: bool
) -> tuple[str, int]:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update({"TERM": "xterm", "COLUMNS": "200"})
    if no_color:
        env["NO_COLOR"] = "1"
    child = pexpect.spawn(
        sys.executable,
        ["-m", "silo_regress", "--project", str(project.root), *args],
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(50, 200),
        cwd=str(project.root),  # where a user runs it: advice then needs no -C
    )
    child.expect(pexpect.EOF)
    child.close()
    text = (child.before or "").replace("\r\n", "\n").replace(str(project.root), "<project>")
    return text, int(child.exitstatus)


def _compare(name: str, actual: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(actual.encode("utf-8"))
        return
    assert path.exists(), f"{path} is missing; create it with UPDATE_GOLDEN=1"
    assert actual == path.read_bytes().decode("utf-8"), f"{name} differs; see the docstring"


CASES = {"check": (("check",), 1), "diff-TASK-002": (("diff", "TASK-002"), 0)}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("no_color", [False, True], ids=["color", "no-color"])
def test_on_a_terminal(colour_project: SiloProject, name: str, no_color: bool) -> None:
    args, code = CASES[name]
    text, exit_code = _on_a_terminal(colour_project, args, no_color=no_color)
    assert exit_code == code
    if no_color:
        assert "\x1b[" not in text
    else:
        assert "\x1b[7m" in text  # changed words marked within the line
    _compare(f"{name}.{'no-color' if no_color else 'color'}.txt", text)


def test_regression_red_improvement_green_drift_neutral(colour_project: SiloProject) -> None:
    text, _ = _on_a_terminal(colour_project, ("check",), no_color=False)
    assert "\x1b[1m\x1b[31mCHANGED  TASK-002" in text
    assert "\x1b[1m\x1b[32mCHANGED  TASK-003" in text
    assert "\x1b[1m\x1b[36mCHANGED  TASK-004" in text
    assert "\x1b[31m\x1b[7mpricing call\x1b[0m" in text
    assert "\x1b[32m\x1b[7mtrue\x1b[0m" in text


@pytest.mark.parametrize("no_color", [False, True], ids=["color", "no-color"])
def test_review_on_a_terminal(colour_project: SiloProject, no_color: bool) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update({"TERM": "xterm", "COLUMNS": "200", **({"NO_COLOR": "1"} if no_color else {})})
    child = pexpect.spawn(
        sys.executable,
        ["-m", "silo_regress", "--project", str(colour_project.root), "review", "TASK-002"],
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(50, 200),
    )
    child.expect(r"\[q\]uit > ")
    shown = (
        (child.before or "").replace("\r\n", "\n").replace(str(colour_project.root), "<project>")
    )
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert ("\x1b[" in shown) is not no_color
    _compare(f"review-TASK-002.{'no-color' if no_color else 'color'}.txt", shown)
