"""Rendering: reports, diffs and tables as text, JSON and CI formats.

The only package that imports pygments, and only inside the functions that
highlight, so rendering plain text never loads it.
"""

from __future__ import annotations

from typing import Any


def render_report(
    report: Any, report_format: str, *, color: bool, show_matches: bool = False
) -> str:
    """The check report in one of the formats of DESIGN.md."""
    if report_format == "text":
        from silo_regress.render.text import render_text

        return render_text(report, color=color, show_matches=show_matches)
    if report_format == "json":
        from silo_regress.render.machine import render_json

        return render_json(report)
    if report_format in _CI_FORMATS:
        from importlib import import_module

        module = import_module(f"silo_regress.render.{report_format}")
        rendered: str = getattr(module, f"render_{report_format}")(report)
        return rendered
    raise NotImplementedError(f"--format {report_format} is not built yet")


# Each lives in silo_regress/render/<name>.py as render_<name>(report) -> str.
_CI_FORMATS = ("junit", "github", "markdown", "html")
