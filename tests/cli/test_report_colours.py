"""Reports colour a change by its direction and count what they list: drift is not
a regression, a regression's new values are not green, a stale run has no empty diff,
and the words beside the matches section count what it lists."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from support.silofixture import SiloProject, make_project, make_result


def _project(tmp_path: Path) -> SiloProject:
    project = make_project(tmp_path / "p", config='agent = "agent.ts"\n')
    (project.root / "agent.ts").write_text("v1\n")
    os.utime(project.root / "agent.ts", (1, 1))
    for task in ("TASK-001", "TASK-002", "TASK-003", "TASK-004"):
        project.add_run(task, started="2026-03-16T09:00:00.000Z")
    assert project.cli("record", "--all").exit_code == 0
    for task in ("TASK-001", "TASK-003", "TASK-004"):
        project.add_run(task, started="2026-03-16T10:00:00.000Z", result=make_result(passed=False))
    project.add_run(
        "TASK-002", started="2026-03-16T10:00:00.000Z", result=make_result(agent_output="Done!")
    )
    return project


def test_drift_is_cyan_and_a_regression_red_in_the_summary(tmp_path: Path) -> None:
    text = _project(tmp_path).cli("check", color="always").stdout
    assert "\x1b[36mdrift" in text
    assert "\x1b[31mregression" in text
    assert "\x1b[31mdrift" not in text


def test_counts_are_plural_and_shared_notes_name_their_tasks_once(tmp_path: Path) -> None:
    text = _project(tmp_path).cli("check").stdout
    assert "by task: 3 regressions, 1 drift (4 tasks)" in text
    assert text.count("same in ") == 1, text
    assert "  same in TASK-001 (crm-west), TASK-003 (crm-west), TASK-004 (crm-west) " in text
    assert "\n    - reward 1 -> 0\n" not in text or "(result.json):\n" in text


def test_html_draws_a_regressions_new_values_in_its_colour_not_green(tmp_path: Path) -> None:
    project = _project(tmp_path)
    page = tmp_path / "report.html"
    project.cli("check", "--format", "html", "-o", str(page))
    html = page.read_text()
    rule = re.search(r"article\.card\.k-regression td\.add[,\s][^{]*\{[^}]*\}", html)
    assert rule is not None and "var(--regression-bg)" in rule.group()
    assert "article.card.k-improvement td.add," not in html  # an improvement stays green
    assert '<a class="badge k-regression" href="#regressions">3 regressions</a>' in html


def test_a_stale_run_card_has_no_empty_diff_table(tmp_path: Path) -> None:
    project = _project(tmp_path)
    fresh = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - 60))
    project.add_run("TASK-001", started=fresh, result=make_result(reward=0.5))
    (project.root / "agent.ts").write_text("v2\n")  # newer than every run: all stale
    page = tmp_path / "report.html"
    project.cli("check", "TASK-001", "--format", "html", "-o", str(page))
    html = page.read_text()
    assert "stale-run" in html
    assert '<table class="diff"' not in html  # no diff table: nothing here can be accepted


def test_the_matches_section_counts_what_the_headline_counts(tmp_path: Path) -> None:
    project = _project(tmp_path)
    page = tmp_path / "report.html"
    project.cli("check", "TASK-002", "--format", "html", "-o", str(page))
    html = page.read_text()
    assert "1 match (2 artifacts of 1 task)" in html  # the state diff matches
    assert "Matches (0)" not in html
    assert "Tasks that match all their baselines (0)" in html
    assert "1 artifact matches its baseline in the tasks above" in html


def test_a_next_step_is_printed_once_for_all_the_tasks_it_serves(tmp_path: Path) -> None:
    """Two new tasks of two artifacts each: one 'record' line, not one per artifact."""
    project = make_project(tmp_path / "p")
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    project.add_run("TASK-008")
    project.add_run("TASK-009")
    text = project.cli("check", "TASK-008", "TASK-009").stdout
    assert text.count(" record TASK-") == 1, text
    assert "Record the missing baselines: silo-regress -C " in text
    assert "record TASK-008 TASK-009" in text
    markdown = project.cli("check", "TASK-008", "TASK-009", "--format", "markdown").stdout
    assert markdown.count(" record TASK-") == 1, markdown
