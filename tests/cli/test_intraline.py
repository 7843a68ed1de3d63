"""Changed words within a changed line: text (colour on), review and the HTML page."""

from __future__ import annotations

import re
from pathlib import Path

from support.silofixture import SiloProject, make_result

from silo_regress.render.hunks import Span, intraline
from silo_regress.render.text import highlight_diff


def test_intraline_marks_the_changed_words_only() -> None:
    spans = intraline('  "reward": 1,', '  "reward": 0.33,')
    assert spans is not None
    left, right = spans
    assert [s.text for s in left if s.changed] == ["1"]
    assert [s.text for s in right if s.changed] == ["0.33"]
    assert "".join(s.text for s in left) == '  "reward": 1,'  # nothing lost or added
    assert "".join(s.text for s in right) == '  "reward": 0.33,'


def test_lines_that_share_too_little_are_marked_whole() -> None:
    assert intraline('  "a": "xxxxxxxx yyyyyy zzzz"', "    ]") is None
    assert intraline("a" * 5000, "b" + "a" * 4999) is None  # too long to be worth it


def test_no_colour_leaves_the_unified_diff_untouched() -> None:
    lines = ["--- a", "+++ b", "@@ -1 +1 @@", '-  "passed": true,', '+  "passed": false,']
    assert highlight_diff(lines, color=False) == lines


def test_colour_marks_words_and_takes_the_direction() -> None:
    lines = ["--- a", "+++ b", "@@ -1 +1 @@", '-  "passed": true,', '+  "passed": false,']
    red = highlight_diff(lines, color=True, run="red")
    assert red[3] == '\x1b[2m-  "passed": \x1b[4mtrue\x1b[0m\x1b[2m,\x1b[0m'
    assert red[4] == '\x1b[31m+  "passed": \x1b[31m\x1b[7mfalse\x1b[0m\x1b[31m,\x1b[0m'
    green = highlight_diff(lines, color=True, run="green")
    assert green[4].startswith("\x1b[32m+")
    cyan = highlight_diff(lines, color=True, run="cyan")
    assert cyan[4].startswith("\x1b[36m+")


def test_a_removed_line_starting_with_dashes_is_not_a_header() -> None:
    lines = ["--- a", "+++ b", "@@ -1 +1 @@", "---x", "+++y"]
    out = highlight_diff(lines, color=True, run="green")
    assert not out[3].startswith("\x1b[1m")  # dim or marked, never the header's bold


def _changed(project: SiloProject) -> None:
    project.add_run("TASK-002", started="2026-03-16T09:00:00.000Z", result=make_result())
    project.add_run(
        "TASK-003", started="2026-03-16T09:00:01.000Z", result=make_result(passed=False, reward=0)
    )
    assert project.cli("record", "--all").exit_code == 0
    project.add_run(
        "TASK-002", started="2026-03-16T10:00:00.000Z", result=make_result(passed=False, reward=0)
    )
    project.add_run(
        "TASK-003", started="2026-03-16T10:00:01.000Z", result=make_result(agent_output="Done!")
    )


def test_check_colours_improvements_green_and_regressions_red(project: SiloProject) -> None:
    _changed(project)
    result = project.cli("check", color="always")
    assert "\x1b[1m\x1b[31mCHANGED  TASK-002" in result.stdout  # a regression
    assert "\x1b[1m\x1b[32mCHANGED  TASK-003" in result.stdout  # an improvement
    assert '\x1b[32m+  "passed": \x1b[32m\x1b[7mtrue' in result.stdout
    assert '\x1b[31m+  "passed": \x1b[31m\x1b[7mfalse' in result.stdout
    plain = project.cli("check", color="never")
    assert "\x1b" not in plain.stdout


def test_the_html_diff_marks_changed_words_in_the_direction_colour(
    project: SiloProject, tmp_path: Path
) -> None:
    _changed(project)
    out = tmp_path / "report.html"
    assert project.cli("check", "--format", "html", "--output", str(out)).exit_code == 1
    page = out.read_text(encoding="utf-8")
    cells = re.findall(r'<td class="code (del|add)">(.*?)</td>', page)
    marked = [(side, html) for side, html in cells if '<span class="intra">' in html]
    assert ("del", '  &quot;passed&quot;: <span class="intra">true</span>,') in marked
    assert ("add", '  &quot;passed&quot;: <span class="intra">false</span>,') in marked
    assert "article.card.k-regression td.add span.intra { color: var(--regression-fg);" in page
    assert "article.card.k-improvement td.add span.intra" in page
    assert "article.card.k-drift td.add span.intra" in page


def test_span_is_a_value() -> None:
    assert Span("x", True) == Span("x", True)


def test_a_long_changed_middle_is_marked_whole_without_difflib() -> None:
    head, tail = "h " * 150, " t" * 150
    before = f'  "out": "{head}{" ".join("a" * 3 for _ in range(40))}{tail}",'
    after = f'  "out": "{head}{" ".join("b" * 3 for _ in range(40))}{tail}",'
    spans = intraline(before, after)
    assert spans is not None
    left, right = spans
    assert [s.changed for s in left] == [False, True, False]  # head, whole middle, tail
    assert left[1].text == " ".join("a" * 3 for _ in range(40))
    assert "".join(s.text for s in right) == after
    assert intraline("x " * 20 + "y", "z " * 20 + "y") is None  # mostly different: whole
