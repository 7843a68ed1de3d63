"""Rendering: reports, diffs and tables as text, JSON and CI formats.

The only package that imports pygments, and only inside the functions that
highlight, so rendering plain text never loads it. Each format's module is
imported only when that format is asked for. :mod:`.bisection` words ``bisect`` and
``blame``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from silo_regress.judging.outcome import Report
    from silo_regress.reports.history import ScoreHistory


def render_report(
    report: Report,
    report_format: str,
    *,
    color: bool,
    show_matches: bool = False,
    history: ScoreHistory | None = None,
) -> str:
    """The check report in one of the formats of DESIGN.md; ``history`` is drawn by html.

    Whatever the format, nothing invisible or controlling that a run file carried
    is left raw in it (canon/visible.py): the text may go to a file, a job summary
    or a terminal.
    """
    from silo_regress.canon.visible import shielded

    rendered = _render(
        report, report_format, color=color, show_matches=show_matches, history=history
    )
    return shielded(rendered, colour=color and report_format == "text")


def _render(
    report: Report,
    report_format: str,
    *,
    color: bool,
    show_matches: bool,
    history: ScoreHistory | None,
) -> str:
    if report_format == "text":
        from silo_regress.render.text import render_text

        return render_text(report, color=color, show_matches=show_matches)
    if report_format == "json":
        from silo_regress.render.machine import render_json

        return render_json(report)
    if report_format == "junit":
        from silo_regress.render.junit import render_junit

        return render_junit(report)
    if report_format == "github":
        from silo_regress.render.github import render_github

        return render_github(report)
    if report_format == "markdown":
        from silo_regress.render.markdown import render_markdown

        return render_markdown(report)
    if report_format == "html":
        from silo_regress.render.html import render_html

        return render_html(report, history=history)
    raise ValueError(f"no renderer for --format {report_format}")
