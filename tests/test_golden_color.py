"""Colour golden files: check and diff on a real terminal, with and without NO_COLOR.

The golden project of tests/test_golden.py, run through a pseudo-terminal so that
``--color auto`` sees a tty. With NO_COLOR set the output must hold no escape at
all (and equal the plain golden file); without it, changed words are marked within
the line and the run's lines take the direction's colour. Regenerate with
``UPDATE_GOLDEN=1`` and review the escapes with ``cat -v``.
"""

from __future__ import annotations

import os
import sys

import pytest
from silofixture import SiloProject
from test_golden import GOLDEN, _compare, _normalized, golden_project

pexpect = pytest.importorskip("pexpect")

__all__ = ["golden_project"]  # the fixture, shared

CASES = {
    "check": (("check",), 1, "check.txt"),
    "diff-TASK-002": (("diff", "TASK-002"), 0, "diff-TASK-002.txt"),
}


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
    )
    child.expect(pexpect.EOF)
    child.close()
    text = (child.before or "").replace("\r\n", "\n")
    return _normalized(text, project), int(child.exitstatus)


@pytest.mark.parametrize("name", list(CASES))
def test_colour_on_a_terminal(
    golden_project: tuple[SiloProject, dict[str, str]], name: str
) -> None:
    project, _ = golden_project
    args, code, _ = CASES[name]
    text, exit_code = _on_a_terminal(project, args, no_color=False)
    assert exit_code == code
    assert "\x1b[7m" in text  # changed words marked within the line
    _compare(f"{name}.color.txt", text)


@pytest.mark.parametrize("name", list(CASES))
def test_no_color_on_a_terminal(
    golden_project: tuple[SiloProject, dict[str, str]], name: str
) -> None:
    project, _ = golden_project
    args, code, plain = CASES[name]
    text, exit_code = _on_a_terminal(project, args, no_color=True)
    assert exit_code == code
    assert "\x1b[" not in text
    _compare(f"{name}.no-color.txt", text)
    # stderr and stdout share the terminal here; the report part is the plain golden file.
    assert (GOLDEN / plain).read_text(encoding="utf-8") in text
