"""``merge``: the JSON reports of sharded check jobs as one report and exit code."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from silo_regress.cli.app import app
from silo_regress.cli.common import globals_of, handled, project_config
from silo_regress.cli.failon import FailOn, exit_code
from silo_regress.cli.options import FailOnOption, FormatOption, OutputOption, VerboseOption
from silo_regress.cli.output import ReportFormat, emit_report, start_history
from silo_regress.errors import ConfigError, InputError

if TYPE_CHECKING:
    from silo_regress.judging.outcome import Report


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
    pool_across_classes: Annotated[
        bool,
        typer.Option(
            "--pool-across-classes",
            help="Pool unit reports made on different resource classes (machine kinds); "
            "refused by default, since pass rates can differ between them.",
        ),
    ] = False,
) -> int:
    """Combine the JSON reports of `check --shard K/N` jobs, or the unit reports of
    `check --run --unit I/N` workers, into one report and exit code.

    Exit 0 when every artifact of every shard matches, 1 when any does not, 3 when
    a report is unreadable, a shard is missing or a task was checked twice.
    Unit reports are pooled into each task's tally and judged as one suite; a
    rollout missing or never started is named and makes the exit 1, and reports of
    different plans, fingerprints, policies or resource classes are refused (exit 3).
    Diffs are rebuilt from the baseline files under --project when they fit.
    """
    from silo_regress.reports.reconstruction import attach_texts

    g = globals_of(ctx)
    report, incomplete = _merged(reports, pool_across_classes=pool_across_classes)
    report = attach_texts(report, g.project)
    config = None
    if report_format is ReportFormat.HTML:
        # The chart is an extra: a merge run outside a project still writes its page.
        with contextlib.suppress(ConfigError):
            config = project_config(g)
    history = start_history(report_format, config, dict.fromkeys(o.task for o in report.outcomes))
    emit_report(report, report_format, g, output=output, verbose=verbose, history=history)
    # A merge that did not count every planned rollout never says passed (DESIGN.md).
    return max(exit_code(report, fail_on), int(incomplete))


def _merged(paths: list[Path], *, pool_across_classes: bool) -> tuple[Report, bool]:
    """The merged report, and whether planned rollouts went uncounted (units only)."""
    from silo_regress.reports.merger import merge_reports
    from silo_regress.reports.schema import load_report
    from silo_regress.reports.unitreport import (
        PlanCache,
        is_unit_report,
        load_unit_report,
        read_report_file,
    )

    files = [(str(path), *read_report_file(path)) for path in paths]
    documents = [(name, document) for name, _, document in files]
    units = [name for name, document in documents if is_unit_report(document)]
    if units and len(units) != len(documents):
        other = next(name for name, document in documents if not is_unit_report(document))
        raise InputError(
            f"{other}: a check report, but {units[0]} is a unit report; merge the unit "
            "reports of check --run --unit and the shard reports of check --shard apart"
        )
    if units:
        from silo_regress.reports.unitmerge import merge_units

        cache: PlanCache = {}
        loaded = [
            (name, load_unit_report(doc, source=name, cache=cache)) for name, doc in documents
        ]
        pooled = merge_units(loaded, pool_across_classes=pool_across_classes)
        return pooled.report, not pooled.coverage.complete
    checks = [(name, load_report(data, source=name)) for name, data, _ in files]
    return merge_reports(checks), False
