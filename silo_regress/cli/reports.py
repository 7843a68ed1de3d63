"""``merge``: the JSON reports of sharded check jobs as one report and exit code."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer

from silo_regress.cli.app import app
from silo_regress.cli.common import globals_of, handled, project_config
from silo_regress.cli.failon import FailOn, exit_code
from silo_regress.cli.options import FailOnOption, FormatOption, OutputOption, VerboseOption
from silo_regress.cli.output import ReportFormat, emit_report, start_history
from silo_regress.errors import ConfigError


@app.command()
@handled
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
    fail_on: FailOnOption = FailOn.CHANGE,
) -> int:
    """Combine the JSON reports of `check --shard K/N` jobs into one report and exit code.

    Exit 0 when every artifact of every shard matches, 1 when any does not, 3 when
    a report is unreadable, a shard is missing or a task was checked twice.
    Diffs are rebuilt from the baseline files under --project when they fit.
    """
    from silo_regress.reports.merger import merge_reports
    from silo_regress.reports.reconstruction import attach_texts
    from silo_regress.reports.schema import read_report

    g = globals_of(ctx)
    loaded = [(str(path), read_report(path)) for path in reports]
    report = attach_texts(merge_reports(loaded), g.project)
    config = None
    if report_format is ReportFormat.HTML:
        # The chart is an extra: a merge run outside a project still writes its page.
        with contextlib.suppress(ConfigError):
            config = project_config(g)
    history = start_history(report_format, config, dict.fromkeys(o.task for o in report.outcomes))
    emit_report(report, report_format, g, output=output, verbose=verbose, history=history)
    return exit_code(report, fail_on)
