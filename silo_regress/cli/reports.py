"""Commands and outputs for CI: ``merge`` and the GitHub job summary."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from silo_regress.cli.app import _globals, _handled, _warn, app
from silo_regress.cli.core import FormatOption, OutputOption, ReportFormat, VerboseOption, _emit


def append_step_summary(report: Any) -> None:
    """Append the Markdown report to ``$GITHUB_STEP_SUMMARY`` when GitHub set it."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return
    from silo_regress.render import render_report

    text = render_report(report, "markdown", color=False)
    try:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")
    except OSError as exc:
        _warn(f"{target}: cannot append the job summary ($GITHUB_STEP_SUMMARY): {exc.strerror}")


@app.command()
@_handled
def merge(
    ctx: typer.Context,
    reports: Annotated[
        list[Path],
        typer.Argument(
            help="JSON reports of `check --shard K/N --format json --output FILE` jobs.",
            show_default=False,
        ),
    ],
    report_format: FormatOption = ReportFormat.TEXT,
    output: OutputOption = None,
    verbose: VerboseOption = False,
) -> int:
    """Combine the JSON reports of `check --shard K/N` jobs into one report and exit code.

    Exit 0 when every artifact of every shard matches, 1 when any does not, 3 when
    a report is unreadable, a shard is missing or a task was checked twice.
    Diffs are rebuilt from the baseline files under --project when they fit.
    """
    from silo_regress.merger import attach_texts, merge_reports, read_report

    g = _globals(ctx)
    loaded = [(str(path), read_report(path)) for path in reports]
    report = attach_texts(merge_reports(loaded), g.project)
    _emit(report, report_format, g, output=output, verbose=verbose)
    return 0 if report.ok else 1
