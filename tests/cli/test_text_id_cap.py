"""The text report caps a behaviour line's ids as the HTML page does: 12 ids, then
"and N more"; a 1,000-row state diff never prints an 11,000-character line."""

from __future__ import annotations

from pathlib import Path

from support.silofixture import make_project, make_state_diff

from silo_regress.render.wording import ID_CAP


def test_a_thousand_new_ids_are_one_short_line_in_every_format(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    project.add_run("TASK-001", state_diff=make_state_diff(added=("AUD-0000",)))
    assert project.cli("record", "TASK-001").exit_code == 0
    many = tuple(f"AUD-{n:04d}" for n in range(1000))
    project.add_run("TASK-001", state_diff=make_state_diff(added=many))
    text = project.cli("check").stdout
    assert max(len(line) for line in text.splitlines()) < 400
    shown = " ".join(many[1 : ID_CAP + 1])
    assert f"now also adds {shown} and {999 - ID_CAP} more" in text
    html_path = tmp_path / "report.html"
    assert project.cli("check", "--format", "html", "-o", str(html_path)).exit_code == 1
    assert f"and {999 - ID_CAP} more" in html_path.read_text()
    markdown = project.cli("check", "--format", "markdown").stdout
    assert f"and {999 - ID_CAP} more" in markdown
