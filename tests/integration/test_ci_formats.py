"""check --format junit|github|markdown|html, and --output: each format parsed and checked."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from support.reportfixture import failing_project
from support.silofixture import SiloProject

from silo_regress.canon.canonical import canonicalize
from silo_regress.canon.pointer import format_pointer, walk
from silo_regress.render.excerpt import pointer_line


@pytest.fixture
def failing(tmp_path: Path) -> SiloProject:
    return failing_project(tmp_path / "project")


def test_junit_has_one_testcase_per_task_and_artifact(failing: SiloProject) -> None:
    result = failing.cli("check", "--format", "junit")
    assert result.exit_code == 1
    root = ET.fromstring(result.stdout.encode())
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1
    suite = suites[0]
    cases = suite.findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("crm-west/TASK-001", "result.json"),
        ("crm-west/TASK-001", "state-diff.json"),
        ("crm-east/TASK-002", "result.json"),
        ("crm-east/TASK-002", "state-diff.json"),
        ("crm-west/TASK-003", "result.json"),
        ("crm-west/TASK-003", "state-diff.json"),
        ("crm-west/TASK-004", "result.json"),
        ("crm-west/TASK-004", "state-diff.json"),
    ]
    for element in (root, suite):
        assert element.get("tests") == "8"
        assert element.get("failures") == "4"
        assert element.get("errors") == "0"
    assert cases[0].get("file") == "baselines/TASK-001.result.json"
    failure = cases[0].find("failure")
    assert failure is not None
    assert failure.get("type") == "changed"
    assert failure.get("message", "").startswith("changed: now FAILS (passed: true -> false)")
    text = failure.text or ""
    assert 'check "Lead qualified" passed -> failed' in text
    assert "diff (- baseline, + run):" in text
    assert '-  "passed": true,' in text and '+  "passed": false,' in text
    assert cases[1].find("failure") is None  # state-diff of TASK-001 matches
    broken = cases[6].find("failure")
    assert broken is not None and broken.get("type") == "incomplete-run"
    assert "result.json is missing" in (broken.text or "")


def test_junit_is_read_by_a_junit_library(failing: SiloProject, tmp_path: Path) -> None:
    from junitparser import Failure, JUnitXml

    report = tmp_path / "junit.xml"
    result = failing.cli("check", "--format", "junit", "--output", str(report))
    assert result.exit_code == 1
    xml = JUnitXml.fromfile(str(report))
    suites = list(xml)
    assert len(suites) == 1 and suites[0].tests == 8 and suites[0].failures == 4
    failed = {
        (case.classname, case.name)
        for case in suites[0]
        if any(isinstance(r, Failure) for r in case.result)
    }
    assert failed == {
        ("crm-west/TASK-001", "result.json"),
        ("crm-east/TASK-002", "state-diff.json"),
        ("crm-west/TASK-004", "result.json"),
        ("crm-west/TASK-004", "state-diff.json"),
    }


def test_output_writes_the_format_and_prints_text(failing: SiloProject, tmp_path: Path) -> None:
    report = tmp_path / "out" / "report.json"
    report.parent.mkdir()  # --output creates no directories
    result = failing.cli("check", "--format", "json", "--output", str(report))
    assert result.exit_code == 1
    assert "CHANGED  TASK-001 (crm-west)  result.json" in result.stdout
    document = json.loads(report.read_text(encoding="utf-8"))
    assert document["summary"] == {"changed": 2, "incomplete-run": 2, "match": 4}


# --- github -------------------------------------------------------------------

_COMMAND = re.compile(r"^::(error|group|endgroup|stop-commands)( [^:]*)?::")


def _baseline_line(project: SiloProject, relpath: str, number: int) -> str:
    return (project.baselines / relpath).read_text(encoding="utf-8").split("\n")[number - 1]


def test_github_annotations_point_at_the_first_changed_value(failing: SiloProject) -> None:
    result = failing.cli("check", "--format", "github")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    errors = [line for line in lines if line.startswith("::error ")]
    assert len(errors) == 4
    first = errors[0]
    match = re.match(r"::error file=([^,]+),line=(\d+),title=([^:]+)::(.*)$", first)
    assert match is not None, first
    assert match.group(1) == "baselines/TASK-001.result.json"
    line = int(match.group(2))
    assert (
        _baseline_line(failing, "TASK-001.result.json", line).lstrip().startswith('"agentOutput":')
    )
    assert match.group(3) == "silo-regress%3A TASK-001 (crm-west) result.json changed"
    message = match.group(4)
    assert "%0A" in message and "\n" not in message
    assert "now FAILS" in message
    state = re.match(r"::error file=baselines/TASK-002.state-diff.json,line=(\d+),", errors[1])
    assert state is not None
    assert '"added": [' in _baseline_line(failing, "TASK-002.state-diff.json", int(state.group(1)))
    # The crashed run has a baseline but no changed value: a file, no line.
    assert errors[2].startswith("::error file=baselines/TASK-004.result.json,title=")


def test_github_log_groups_fence_untrusted_text(
    failing: SiloProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(failing.root)  # advice names paths from here: no -C needed
    lines = failing.cli("check", "--format", "github").stdout.splitlines()
    groups = [n for n, line in enumerate(lines) if line.startswith("::group::")]
    assert len(groups) == 4
    for start in groups:
        stop = lines[start + 1]
        assert stop.startswith("::stop-commands::")
        token = stop.removeprefix("::stop-commands::")
        assert len(token) == 32
        end = lines.index(f"::{token}::", start)
        assert lines[end + 1] == "::endgroup::"
        assert all(token not in line for line in lines[start + 2 : end])
    # Outside the fenced groups, every line is a workflow command or the summary.
    outside = [line for line in lines if _COMMAND.match(line)]
    summary = lines.index("2 changed, 2 incomplete-run, 4 match (8 artifacts of 4 tasks)")
    after = lines[summary + 1 :]  # the next steps close the report
    assert any(line.startswith("1 task ended with an incomplete run") for line in after)
    assert after[-1] == "or one result at a time, on a terminal: silo-regress review"
    assert len(outside) >= 4 + 4 * 3


def test_github_appends_the_markdown_summary(
    failing: SiloProject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = failing.cli("check", "--format", "github")
    assert result.exit_code == 1
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n## silo-regress check: ❌ failed")
    # Task, direction, one verdict per artifact.
    assert re.search(r"\| `TASK-001 \(crm-west\)` \| [*a-z]+ \| \*\*changed\*\* \| match \|", text)


def test_pointer_line_finds_every_value_of_a_canonical_document() -> None:
    value = {
        "b": [1, {"x": [], "y": {"z": [True, None]}}, "s"],
        "a": {},
        "\ue000": 2,
        "c": [[1, 2], []],
    }
    doc = canonicalize(json.dumps(value).encode() + b"\n", source="t")
    lines = doc.text.decode().split("\n")
    parsed = json.loads(doc.text)
    for parts, member in walk(parsed):
        if not parts:
            continue
        pointer = format_pointer(parts)
        number = pointer_line(parsed, tuple(str(p) for p in parts))
        text = lines[number - 1].strip()
        if isinstance(parts[-1], str):
            assert text.startswith(json.dumps(parts[-1], ensure_ascii=False) + ":"), pointer
        else:
            expected = json.dumps(member) if not isinstance(member, dict | list) else None
            first = "[" if isinstance(member, list) else "{"
            assert text.rstrip(",") == expected if expected else text.startswith(first), pointer


# --- markdown -----------------------------------------------------------------


def test_markdown_renders_a_table_and_collapsible_diffs(
    failing: SiloProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(failing.root)  # advice names paths from here: no -C needed
    result = failing.cli("check", "--format", "markdown")
    assert result.exit_code == 1
    md = MarkdownIt("commonmark").enable("table")
    tokens = md.parse(result.stdout)
    tables = [n for n, t in enumerate(tokens) if t.type == "table_open"]
    assert len(tables) == 2  # failing tasks, then matching ones
    rows = _table_rows(tokens, tables[0])
    assert rows[0] == ["Task", "Direction", "result.json", "state-diff.json", "What changed"]
    by_task = {row[0]: row for row in rows[1:]}
    assert set(by_task) == {"TASK-001 (crm-west)", "TASK-002 (crm-east)", "TASK-004 (crm-west)"}
    assert rows[1][:2] == ["TASK-001 (crm-west)", "regression"]  # regressions first
    assert by_task["TASK-001 (crm-west)"][2:4] == ["changed", "match"]
    assert by_task["TASK-002 (crm-east)"][2:4] == ["match", "changed"]
    assert by_task["TASK-004 (crm-west)"][1:4] == ["–", "incomplete-run", "incomplete-run"]
    assert by_task["TASK-001 (crm-west)"][4].startswith("now FAILS (passed: true -> false)")
    assert all(len(row) == 5 for row in rows)  # a '|' in a detail did not split a cell
    matching = _table_rows(tokens, tables[1])
    assert matching[1] == ["TASK-003 (crm-west)", "result.json, state-diff.json"]
    fences = [t for t in tokens if t.type == "fence"]
    diffs = [t for t in fences if t.info == "diff"]
    assert len(diffs) == 2
    assert '-  "passed": true,' in diffs[0].content
    assert "```qualify```" in diffs[0].content  # a longer fence kept the agent's backticks
    assert [(f.info, f.content) for f in fences[-2:]] == [
        ("sh", "silo-regress record TASK-001 TASK-002\n"),
        ("sh", "silo-regress review\n"),
    ]
    html = md.render(result.stdout)
    assert html.count("<details>") == 5 and html.count("</details>") == 5
    assert "<script" not in html


def _table_rows(tokens: list[Any], start: int) -> list[list[str]]:
    rows: list[list[str]] = []
    for token in tokens[start:]:
        if token.type == "table_close":
            break
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows:
            rows[-1].append("".join(c.content for c in token.children or []))
    return rows


# --- html ---------------------------------------------------------------------


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.references: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.tags.append((tag, found))
        for name in ("src", "href", "action", "data", "poster"):
            if found.get(name):
                self.references.append(found[name] or "")


def test_html_is_self_contained(failing: SiloProject) -> None:
    page = failing.cli("check", "--format", "html").stdout
    parser = _Page()
    parser.feed(page)
    assert parser.references, "the summary links to the sections"
    assert all(ref.startswith("#") for ref in parser.references), parser.references
    assert not re.search(r"https?:|url\(|@import|<script|<link", page, re.IGNORECASE)
    targets = {attrs.get("id") for tag, attrs in parser.tags if tag in {"section", "article"}}
    assert {ref[1:] for ref in parser.references} <= targets
    cards = [attrs for tag, attrs in parser.tags if tag == "article"]
    assert len(cards) == 3  # TASK-001, TASK-002 and TASK-004: one card per task to review
    assert page.count('<td class="code del">') >= 1 and page.count('<td class="code add">') >= 1
    assert 'class="nt"' in page  # pygments highlighted the JSON keys
    assert "&lt;lead&gt;" in page and "<lead>" not in page


def test_html_page_renders_the_summary_table_in_chromium(
    failing: SiloProject, tmp_path: Path, chromium: Path
) -> None:
    import subprocess

    page = tmp_path / "report.html"
    result = failing.cli("check", "--format", "html", "--output", str(page))
    assert result.exit_code == 1
    flags = [
        str(chromium),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
    ]
    screenshot = tmp_path / "page.png"
    subprocess.run(
        [*flags, f"--screenshot={screenshot}", "--window-size=1280,1600", page.as_uri()],
        check=True,
        capture_output=True,
        timeout=120,
    )
    dom = subprocess.run(
        [*flags, "--dump-dom", page.as_uri()],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    parser = _Page()
    parser.feed(dom)
    tags = [tag for tag, _ in parser.tags]
    assert ("table", {"class": "summary", "id": "summary"}) in parser.tags
    assert ("details", {"class": "matches"}) in parser.tags
    assert tags.count("tr") >= 9  # changed tasks, folded matches, diff rows
    assert "crm-east" in dom and "incomplete-run" in dom
    width, height, distinct = _png_facts(screenshot.read_bytes())
    assert (width, height) == (1280, 1600)
    assert distinct > 20, "the screenshot is blank"


def _png_facts(data: bytes) -> tuple[int, int, int]:
    """Width, height and how many distinct byte values the decoded pixels hold."""
    import struct
    import zlib

    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    pos, idat = 8, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        if kind == b"IDAT":
            idat += data[pos + 8 : pos + 8 + length]
        pos += 12 + length
    pixels = zlib.decompress(idat)
    return width, height, len(set(pixels[:4_000_000]))
