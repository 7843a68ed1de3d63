"""Check reports on their way out: the formats, stdout, files, job summaries.

No typer here: `check` reaches this module without the CLI framework (cli/quick.py);
the typer options of the formats are in :mod:`silo_regress.cli.options`.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from silo_regress.cli.common import Globals, out, warn

if TYPE_CHECKING:
    from silo_regress.judging.outcome import Report
    from silo_regress.project.config import Config
    from silo_regress.project.taskref import TaskRef
    from silo_regress.reports.history import ScoreHistory


class ReportFormat(enum.StrEnum):
    TEXT = "text"
    JSON = "json"
    JUNIT = "junit"
    GITHUB = "github"
    MARKDOWN = "markdown"
    HTML = "html"


class PendingHistory:
    """The HTML page's history chart, read from git in a thread while check judges.

    Reading 30 commits of baselines is mostly git's work in its own processes, so
    it costs the page little when it overlaps the judging. Only the HTML format
    starts one: the other formats never read history.
    """

    def __init__(self, config: Config, tasks: Iterable[TaskRef]) -> None:
        self._tasks = list(tasks)
        self._config = config
        self._value: ScoreHistory | None = None
        self._error: BaseException | None = None
        import threading  # only an HTML report reads history: the hook never pays for it

        self._thread = threading.Thread(target=self._read, name="history", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        from silo_regress.reports.history import score_history

        try:
            self._value = score_history(self._config, self._tasks)
        except BaseException as exc:  # a bug: raised where the page is rendered
            self._error = exc

    def result(self) -> ScoreHistory | None:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


def start_history(
    report_format: ReportFormat, config: Config | None, tasks: Iterable[TaskRef]
) -> PendingHistory | None:
    """The chart's reading, started now, when ``report_format`` is HTML and a project
    is known; None otherwise."""
    if report_format is not ReportFormat.HTML or config is None:
        return None
    return PendingHistory(config, tasks)


def emit_report(
    report: Report,
    report_format: ReportFormat,
    g: Globals,
    *,
    output: Path | None = None,
    verbose: bool = False,
    history: PendingHistory | None = None,
) -> None:
    """Print the report; with ``output``, write ``report_format`` there and text here.

    An HTML report gets the chart ``history`` reads (:func:`start_history`).
    """
    from silo_regress.render import render_report

    for warning in report.warnings:
        warn(warning)
    if report_format is ReportFormat.GITHUB:
        append_step_summary(report)
    chart = history.result() if history is not None else None
    if output is not None:
        from silo_regress.system.fsio import write_output

        rendered = render_report(report, report_format.value, color=False, history=chart).encode()
        write_output(output, rendered, shown=str(output))
        report_format = ReportFormat.TEXT
    text = render_report(
        report, report_format.value, color=g.use_color(), show_matches=verbose, history=chart
    )
    out(text, colour=g.use_color())


def append_step_summary(report: Report) -> None:
    """Append the Markdown report to ``$GITHUB_STEP_SUMMARY`` when GitHub set it."""
    if not os.environ.get("GITHUB_STEP_SUMMARY"):
        return
    from silo_regress.render import render_report

    append_to_step_summary(render_report(report, "markdown", color=False))


def append_to_step_summary(text: str) -> bool:
    """Append ``text`` to ``$GITHUB_STEP_SUMMARY``; False (warned) when it cannot."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return False
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
        return False
    return True
