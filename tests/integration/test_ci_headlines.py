"""What a CI reader sees first (issue 33): a failing stats-only check's Markdown and HTML
open with what failed, not "no baselines to check"; the pass^k chart has axes; an
improvement is a notice, not an error; a CI report says how to reproduce locally."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
from support.silofixture import make_project, make_result
from test_stats_gate_cli import check, passes, recorded

__all__ = ["control"]
from support.runnerkit import control


class _Texts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.classes: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.classes += [value or "" for name, value in attrs if name == "class"]

    def handle_data(self, data: str) -> None:
        self.texts.append(data)


def test_a_failing_stats_only_check_heads_every_format_with_what_failed(
    tmp_path: Path, control: Path
) -> None:
    project = recorded(tmp_path, control)
    passes(control, 1, 9)
    markdown = check(project, "--repeat", "10", "--format", "markdown")
    assert markdown.exit_code == 1
    head = markdown.stdout.splitlines()[:4]
    assert head[0] == "## silo-regress check: ❌ failed"
    assert head[2].startswith("**Failed: suite-regression: pass rate 90.0% -> 10.0% over 1 task")
    assert "TASK-001 9/10 -> 1/10" in head[2]
    assert "no baselines to check" not in markdown.stdout

    page_path = tmp_path / "page.html"
    done = check(project, "--repeat", "10", "--format", "html", "--output", str(page_path))
    assert done.exit_code == 1
    page = page_path.read_text(encoding="utf-8")
    assert "no baselines to check" not in page and "(0 tasks)" not in page
    assert "Matches (0)" not in page
    assert '<span class="badge k-regression">failed</span> suite-regression' in page
    parsed = _Texts()
    parsed.feed(page)
    assert "pass^k" in parsed.texts and "k (rollouts that must all pass)" in parsed.texts
    assert {"0", "0.5", "1", "10"} <= set(parsed.texts)  # tick labels on both axes
    assert "t-regression" in parsed.classes and "tier" in parsed.classes
    assert "section.stats table#stats-tasks th" in page  # the stats table is styled


def test_an_improvement_is_a_notice_and_a_regression_an_error(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    project.add_run("TASK-001", result=make_result(passed=False, reward=0.5))
    project.add_run("TASK-002")
    assert project.cli("record", "--all").exit_code == 0
    project.add_run("TASK-001")  # passes now: an improvement
    project.add_run("TASK-002", result=make_result(passed=False, reward=0.5))
    done = project.cli("check", "--format", "github")
    assert done.exit_code == 1
    annotations = [line for line in done.stdout.splitlines() if "file=baselines/" in line]
    assert len(annotations) == 2
    (notice,) = [line for line in annotations if "TASK-001" in line]
    (error,) = [line for line in annotations if "TASK-002" in line]
    assert notice.startswith("::notice file=baselines/TASK-001.result.json")
    assert error.startswith("::error file=baselines/TASK-002.result.json")


@pytest.mark.parametrize("variable", ["CI", "GITHUB_ACTIONS"])
def test_in_ci_the_next_step_reproduces_locally_before_recording(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    project = make_project(tmp_path / "project")
    project.add_run("TASK-001")
    assert project.cli("record", "--all").exit_code == 0
    project.add_run("TASK-001", result=make_result(passed=False, reward=0.5))
    monkeypatch.chdir(project.root)  # advice names no -C from here
    local = project.cli("check")
    assert "silo-regress record TASK-001" in local.stdout
    assert "only on the CI runner" not in local.stdout
    monkeypatch.setenv(variable, "true")
    done = project.cli("check")
    assert done.exit_code == 1
    text = done.stdout
    assert "These runs exist only on the CI runner; to reproduce the change locally" in text
    rerun = text.index("silo-regress check --run TASK-001")
    assert rerun < text.index("silo-regress record TASK-001")  # reproduce, then record


def test_in_ci_a_missing_baseline_is_recorded_from_a_local_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path / "project")
    project.add_run("TASK-001")
    project.add_run("TASK-002")
    assert project.cli("record", "TASK-001").exit_code == 0
    monkeypatch.chdir(project.root)
    monkeypatch.setenv("CI", "true")
    done = project.cli("check", "--fail-on", "uncovered", "TASK-001", "TASK-002")
    assert done.exit_code == 1
    assert done.stdout.splitlines()[-1] == (
        "These runs exist only on the CI runner; record the missing baselines locally: "
        "silo-regress run TASK-002 && silo-regress record TASK-002"
    )
