"""The HTML page and the JUnit report end with the same next steps as the text, JSON,
Markdown and GitHub formats (render/advice.py): the HTML read back with html.parser,
the JUnit with junitparser, both compared with the JSON report's ``nextSteps``."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from support.gitrepo import recorded, rerun
from support.silofixture import SiloProject, git


class _Steps(HTMLParser):
    """The blocks of the page's next-steps section: (verdict, why, lines, kind)."""

    def __init__(self) -> None:
        super().__init__()
        self.steps: list[dict[str, Any]] = []
        self.sections: list[str] = []
        self._in_section = False
        self._field: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "section":
            self.sections.append(found.get("id") or "")
            self._in_section = found.get("id") == "next-steps"
        elif self._in_section and tag == "div" and "step" in (found.get("class") or ""):
            self.steps.append({"verdict": found.get("data-verdict"), "why": "", "text": ""})
        elif self._in_section and self.steps and tag == "p":
            self._field = "why"
        elif self._in_section and self.steps and tag == "pre":
            self.steps[-1]["kind"] = found.get("class")
            self._field = "text"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("p", "pre"):
            self._field = None
        elif tag == "section":
            self._in_section = False

    def handle_data(self, data: str) -> None:
        if self._field is not None:
            self.steps[-1][self._field] += data


def _failing(root: Path) -> SiloProject:
    """A committed project whose TASK-001 regressed and whose TASK-002 baseline is not
    canonical: two kinds of failure, two kinds of next step."""
    project = recorded(root)
    rerun(project, passed=False, reward=0.5)
    baseline = project.baselines / "TASK-002.result.json"
    baseline.write_bytes(baseline.read_bytes().replace(b"\n  ", b"\n    "))
    git(root, "add", "baselines")  # the hook's check reads the index
    return project


def _json_steps(project: SiloProject, *args: str) -> list[dict[str, Any]]:
    result = project.cli("check", *args, "--format", "json")
    assert result.exit_code == 1, result.output
    steps: list[dict[str, Any]] = json.loads(result.stdout)["nextSteps"]
    return steps


def _system_out(suite: Any) -> str:
    """The suite's <system-out> text, as junitparser reads it ("" for none)."""
    from junitparser import SystemOut

    return "".join(e.text or "" for e in suite.iterchildren(SystemOut))


def _lines(step: dict[str, Any]) -> list[str]:
    """A JSON step's lines as a user pastes them."""
    if step["config"]:
        return list(step["config"])
    return [" && ".join(step["commands"])] if step["chained"] else list(step["commands"])


def test_the_html_page_ends_with_the_same_next_steps(tmp_path: Path) -> None:
    project = _failing(tmp_path / "repo")
    page = tmp_path / "report.html"
    result = project.cli("check", "--format", "html", "--output", str(page))
    assert result.exit_code == 1, result.output
    parser = _Steps()
    parser.feed(page.read_text(encoding="utf-8"))
    expected = _json_steps(project)
    assert {s["verdict"] for s in expected} == {"changed", "not-canonical"}
    assert [s["verdict"] for s in parser.steps] == [s["verdict"] for s in expected]
    for shown, step in zip(parser.steps, expected, strict=True):
        assert shown["why"] == step["why"][:1].upper() + step["why"][1:] + ":"
        assert shown["text"].splitlines() == _lines(step)
        assert shown["kind"] == "commands"
    assert f"silo-regress -C {project.root} fmt" in [s["text"] for s in parser.steps]
    # After the failing sections, so the page reads as the text report does.
    assert parser.sections.index("next-steps") > parser.sections.index("other")


def test_a_passing_html_page_has_no_next_steps(tmp_path: Path) -> None:
    project = recorded(tmp_path / "repo")
    page = tmp_path / "report.html"
    assert project.cli("check", "--format", "html", "--output", str(page)).exit_code == 0
    parser = _Steps()
    parser.feed(page.read_text(encoding="utf-8"))
    assert "next-steps" not in parser.sections and parser.steps == []


def test_junit_carries_the_next_steps_in_system_out_and_each_failing_case(
    tmp_path: Path,
) -> None:
    from junitparser import Failure, JUnitXml

    project = _failing(tmp_path / "repo")
    report = tmp_path / "junit.xml"
    result = project.cli("check", "--staged", "--format", "junit", "--output", str(report))
    assert result.exit_code == 1, result.output
    (suite,) = list(JUnitXml.fromfile(str(report)))
    expected = _json_steps(project, "--staged")
    assert [s["verdict"] for s in expected] == ["not-canonical", "changed", None]

    out = _system_out(suite)
    assert out.startswith("next steps:\n")
    for step in expected:
        block = "\n".join([f"{step['why']}:", *(f"  {line}" for line in _lines(step))])
        assert block in out
    assert "SKIP=silo-regress-check git commit" in out

    failures = {
        (case.classname, case.name): next(r for r in case.result if isinstance(r, Failure))
        for case in suite
        if any(isinstance(r, Failure) for r in case.result)
    }
    assert set(failures) == {
        ("crm-west/TASK-001", "result.json"),
        ("crm-west/TASK-002", "result.json"),
    }
    for (task, _), failure in failures.items():
        verdict = failure.type
        own = [s for s in expected if s["verdict"] == verdict]
        others = [s for s in expected if s["verdict"] != verdict]
        text = failure.text or ""
        assert own and all(f"next step: {s['why']}:" in text for s in own), text
        assert all(s["why"] not in text for s in others), text
        assert verdict == ("changed" if task.endswith("TASK-001") else "not-canonical")
    changed = failures[("crm-west/TASK-001", "result.json")].text or ""
    assert f"  silo-regress -C {project.root} record TASK-001 && git add" in changed


def test_passing_junit_has_no_system_out(tmp_path: Path) -> None:
    from junitparser import JUnitXml

    project = recorded(tmp_path / "repo")
    report = tmp_path / "junit.xml"
    result = project.cli("check", "--format", "junit", "--output", str(report))
    assert result.exit_code == 0, result.output
    (suite,) = list(JUnitXml.fromfile(str(report)))
    assert _system_out(suite) == ""
