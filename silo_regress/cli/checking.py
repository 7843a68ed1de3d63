"""``check`` on the command line: the options as typer and the lean start-up path
(cli/quick.py) read them, the use case (:mod:`silo_regress.commands.checking`) run, its
report printed, and the exit code picked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from silo_regress.cli.common import Globals, out
from silo_regress.cli.failon import FailOn, exit_code
from silo_regress.cli.output import ReportFormat, emit_report, start_history

if TYPE_CHECKING:
    from silo_regress.cli.output import PendingHistory
    from silo_regress.project.config import Config, SuiteGate
    from silo_regress.project.taskref import TaskRef


@dataclass(frozen=True)
class CheckOptions:
    """What `check` was asked for, as its options and arguments give it."""

    refs: tuple[str, ...] = ()
    report_format: ReportFormat = ReportFormat.TEXT
    output: Path | None = None
    shard: str | None = None
    against: str | None = None
    staged: bool = False
    allow_no_runs: bool = False
    run_first: bool = False
    jobs: int | None = None
    agent: str | None = None
    timeout: float | None = None
    verbose: bool = False
    fail_on: FailOn = FailOn.CHANGE
    allow_stale: bool = False
    repeat: int | None = None  # rollouts per task with run_first, each judged on its own
    until_decided: bool = False  # --repeat-until-decided: rounds of `repeat` rollouts
    max_repeat: int | None = None  # --max-repeat K: the cap on a task's rollouts
    require_power: bool = False  # insufficient-data fails a stats task
    suite_gate: SuiteGate | None = None  # --suite-gate: overrides the suite-gate config key
    unit: str | None = None  # --unit I/N: this worker's rollouts of the plan (cli/unitcheck)


def run_check(g: Globals, options: CheckOptions) -> int:
    """Run the check use case, print its report; the exit code."""
    from silo_regress.commands.checking import CheckRequest, check

    if options.unit is not None or options.run_first:
        from silo_regress.cli.unitcheck import run_unit_check, wants_units

        if wants_units(options):
            from silo_regress.cli.runner import ConsoleWatcher

            return run_unit_check(g, options, watcher=ConsoleWatcher(g))
    request = CheckRequest(
        project=g.project,
        explicit=g.explicit,
        refs=options.refs,
        shard=options.shard,
        against=options.against,
        staged=options.staged,
        allow_no_runs=options.allow_no_runs,
        run_first=options.run_first,
        jobs=options.jobs,
        agent=options.agent,
        timeout=options.timeout,
        allow_stale=options.allow_stale,
        repeat=options.repeat,
        until_decided=options.until_decided,
        max_repeat=options.max_repeat,
        require_power=options.require_power,
        suite_gate=options.suite_gate,
    )
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
