"""One printed line shows at most ``LINE_CAP`` characters of agent-controlled text, then
how many more there are; the JSON report keeps every character."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from support.silofixture import make_project, make_result

from silo_regress.canon.visible import LINE_CAP

MORE = "more characters; full text in the JSON report"


def _longest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


@pytest.mark.parametrize("color", ["never", "always"])
def test_a_megabyte_output_line_is_capped_in_the_text_report(tmp_path: Path, color: str) -> None:
    project = make_project(tmp_path / "p")
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    long = "Done. " + "lead qualified and noted " * 40_000  # 1 MB on one line
    project.add_run("TASK-001", result=make_result(agent_output=long))
    started = time.perf_counter()
    text = project.cli("check", color=color).stdout
    elapsed = time.perf_counter() - started
    assert _longest(text) < LINE_CAP + 200, _longest(text)
    assert MORE in text
    assert elapsed < 20  # was ~1 s per MB of word diff; generous for a shared machine
    report = json.loads(project.cli("check", "--format", "json").stdout)
    values = [n.get("run") for r in report["results"] for n in r.get("notes", [])]
    assert long in values, "the JSON report keeps the full text"


def test_a_megabyte_check_label_is_capped(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    label = "L" * 1_000_000
    checks = [
        {"label": "Lead qualified", "passed": True, "detail": "", "required": True},
        {"label": label, "passed": False, "detail": "", "required": False},
    ]
    project.add_run("TASK-001", result=make_result(checks=checks))
    result = project.cli("check")
    assert result.exit_code == 1
    assert _longest(result.stdout) < LINE_CAP + 200
    assert MORE in result.stdout
    markdown = project.cli("check", "--format", "markdown").stdout
    assert _longest(markdown) < 3 * LINE_CAP
