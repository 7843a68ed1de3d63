"""Check reports on their way out: the formats, stdout, files, job summaries.

No typer here: `check` reaches this module without the CLI framework (cli/quick.py);
the typer options of the formats are in :mod:`silo_regress.cli.options`.
"""

from __future__ import annotations

import enum
import os
from pathlib import Path
from typing import TYPE_CHECKING

from silo_regress.cli.common import Globals, out, warn

if TYPE_CHECKING:
    from silo_regress.config import Config
    from silo_regress.history import ScoreHistory
    from silo_regress.outcome import Report


class ReportFormat(enum.StrEnum):
    TEXT = "text"
    JSON = "json"
    JUNIT = "junit"
    GITHUB = "github"
    MARKDOWN = "markdown"
    HTML = "html"


def emit_report(
    report: Report,
    report_format: ReportFormat,
    g: Globals,
    *,
    output: Path | None = None,
    verbose: bool = False,
    config: Config | None = None,
) -> None:
    """Print the report; with ``output``, write ``report_format`` there and text here.

    With ``config``, an HTML report gets the chart of the baselines' git history.
    """
    from silo_regress.render import render_report

    for warning in report.warnings:
        warn(warning)
    if report_format is ReportFormat.GITHUB:
        append_step_summary(report)
    history = _history(report, config) if report_format is ReportFormat.HTML else None
    if output is not None:
        from silo_regress.fsio import write_output

        rendered = render_report(report, report_format.value, color=False, history=history).encode()
        write_output(output, rendered, shown=str(output))
        report_format = ReportFormat.TEXT
    text = render_report(
        report, report_format.value, color=g.use_color(), show_matches=verbose, history=history
    )
    out(text)


def _history(report: Report, config: Config | None) -> ScoreHistory | None:
    """Git history is read only for the HTML page: other formats draw no chart."""
    if config is None:
        return None
    from silo_regress.history import score_history

    return score_history(config, dict.fromkeys(o.task for o in report.outcomes))


def append_step_summary(report: Report) -> None:
    """Append the Markdown report to ``$GITHUB_STEP_SUMMARY`` when GitHub set it."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return
    from silo_regress.render import render_report

    text = render_report(report, "markdown", color=False)
    try:
        # Non-blocking open: a FIFO nobody reads is an error here, never a hang.
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_NOCTTY
        fd = os.open(target, flags, 0o666)
        try:
            os.set_blocking(fd, True)
            view = memoryview((text + "\n").encode("utf-8"))
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
    except OSError as exc:
        warn(f"{target}: cannot append the job summary ($GITHUB_STEP_SUMMARY): {exc.strerror}")
