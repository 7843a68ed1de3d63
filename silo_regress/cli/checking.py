"""``check`` on the command line: the options as typer and the lean start-up path
(cli/quick.py) read them, the use case (:mod:`silo_regress.commands.checking`) run, its
report printed, and the exit code picked."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

from silo_regress.cli.common import Globals, out
from silo_regress.cli.failon import FailOn, exit_code
from silo_regress.cli.output import ReportFormat, emit_report, start_history
from silo_regress.commands.checking import CheckRequest

if TYPE_CHECKING:
    from silo_regress.cli.output import PendingHistory
    from silo_regress.project.config import Config
    from silo_regress.project.taskref import TaskRef


@dataclass(frozen=True)
class CheckOptions(CheckRequest):
    """What `check` was asked for, as its options and arguments give it: the use case's
    request (the project comes from the global options) and how to print its report."""

    report_format: ReportFormat = ReportFormat.TEXT
    output: Path | None = None
    verbose: bool = False
    fail_on: FailOn = FailOn.CHANGE
    unit: str | None = None  # --unit I/N: this worker's rollouts of the plan (cli/unitcheck)


def run_check(g: Globals, options: CheckOptions) -> int:
    """Run the check use case, print its report; the exit code."""
    from silo_regress.commands.checking import check

    if options.unit is not None or options.run_first:
        from silo_regress.cli.unitcheck import run_unit_check, wants_units

        if wants_units(options):
            from silo_regress.cli.runner import ConsoleWatcher

            return run_unit_check(g, options, watcher=ConsoleWatcher(g))
    asked = {f.name: getattr(options, f.name) for f in fields(CheckRequest)}
    request = CheckRequest(**{**asked, "project": g.project, "explicit": g.explicit})
    history: list[PendingHistory | None] = [None]

    def read_history(config: Config, refs: list[TaskRef]) -> None:
        history[0] = start_history(options.report_format, config, refs)

    watcher = None
    if options.run_first:
        from silo_regress.cli.runner import ConsoleWatcher

        watcher = ConsoleWatcher(g)
    checked = check(request, watcher=watcher, on_targets=read_history)
    for note in checked.notes:
        out(note)
    if checked.report is None:
        return 0
    emit_report(
        checked.report,
        options.report_format,
        g,
        output=options.output,
        verbose=options.verbose,
        history=history[0],
    )
    return exit_code(checked.report, options.fail_on)
