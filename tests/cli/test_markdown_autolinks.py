"""Agent text never becomes a link in the Markdown report (docs/security.md): GitHub links
bare URLs, ``www.`` names and emails by itself (GFM autolinks), so the renderer shows them
as code. Checked with markdown-it's linkify, which links what GFM does."""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from support.silofixture import make_project, make_result

from silo_regress.render.markdown import cell

BARE = [
    "see http://evil.com/steal?x=1 now",
    "go to https://evil.com",
    "visit www.evil.com/path",
    "WWW.Evil.Com",
    "mail root@evil.com please",
    "ftp://evil.com/file",
    "(https://evil.com)",
]


def _linked(markdown: str) -> bool:
    html = MarkdownIt("gfm-like", {"linkify": True}).render(markdown)
    return "<a " in html


@pytest.mark.parametrize("text", BARE)
def test_a_bare_url_in_a_cell_renders_as_text(text: str) -> None:
    assert _linked(text)  # the oracle links it when left raw
    shown = cell(text)
    assert not _linked(shown)
    assert not _linked(f"| a | b |\n| --- | --- |\n| {shown} | x |\n")
    assert "evil.com" in MarkdownIt("gfm-like", {"linkify": True}).render(shown).lower()


def test_the_markdown_report_links_no_url_the_agent_wrote(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    project.add_run("TASK-001")
    assert project.cli("record", "--all").exit_code == 0
    output = "Refund done, see https://evil.com/pay and www.evil.com or a@evil.com"
    project.add_run("TASK-001", result=make_result(passed=False, agent_output=output))
    done = project.cli("check", "--format", "markdown")
    assert done.exit_code == 1
    assert "evil.com/pay" in done.stdout
    html = MarkdownIt("gfm-like", {"linkify": True}).render(done.stdout)
    assert "<a " not in html
