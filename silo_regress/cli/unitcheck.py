"""``check --run --unit I/N``: worker I's units run, its unit report written for ``merge``.

The flow is :mod:`silo_regress.commands.unitwork`'s; this module reads the options,
shows progress, writes the report and picks the exit code: 0 when every unit of this
worker was counted (passed or failed: ``merge`` judges), 3 when a rollout never started
after its retries (an infrastructure error, named), so an engine that retries failed
jobs retries this one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from silo_regress.cli.common import Globals, error, out
from silo_regress.errors import ExitCode

if TYPE_CHECKING:
    from silo_regress.cli.output import ReportFormat
    from silo_regress.commands.rollouts import Watcher
    from silo_regress.reports.unitreport import UnitReport


class CheckOptions(Protocol):
    """The options of `check` a unit worker reads (cli/checking's CheckOptions)."""

    @property
    def refs(self) -> Sequence[str]: ...
    @property
    def report_format(self) -> ReportFormat: ...
    @property
    def output(self) -> Path | None: ...
    @property
    def shard(self) -> str | None: ...
    @property
    def against(self) -> str | None: ...
    @property
    def staged(self) -> bool: ...
    @property
    def allow_no_runs(self) -> bool: ...
    @property
    def run_first(self) -> bool: ...
    @property
    def jobs(self) -> int | None: ...
    @property
    def agent(self) -> str | None: ...
    @property
    def timeout(self) -> float | None: ...
    @property
    def repeat(self) -> int | None: ...
    @property
    def until_decided(self) -> bool: ...
    @property
    def unit(self) -> str | None: ...


def wants_units(options: CheckOptions) -> bool:
    """Whether this check is a unit worker: --unit, or SILO_REGRESS_UNIT with --run."""
    from silo_regress.judging.units import UNIT_VARIABLE

    return options.unit is not None or (options.run_first and bool(os.environ.get(UNIT_VARIABLE)))


def run_unit_check(g: Globals, options: CheckOptions, *, watcher: Watcher) -> int:
    from silo_regress.cli.output import ReportFormat
    from silo_regress.commands.rollouts import RolloutFlags
    from silo_regress.commands.sources import baseline_source, load_project, parse_refs
    from silo_regress.commands.unitwork import run_unit, unit_options
    from silo_regress.judging.units import parse_worker
    from silo_regress.reports.unitreport import dump_unit_report

    worker = parse_worker(options.unit, os.environ)
    assert worker is not None  # wants_units said so
    conflicting = [
        flag
        for flag, given in (
            ("--shard", options.shard is not None),
            ("--repeat-until-decided", options.until_decided),
            ("--staged", options.staged),
            ("--allow-no-runs", options.allow_no_runs),
        )
        if given
    ]
    config = load_project(g.project, explicit=g.explicit)
    request = unit_options(
        worker,
        run_first=options.run_first,
        repeat=options.repeat or config.repeat,
        conflicting=conflicting,
        refs=parse_refs(options.refs),
        flags=RolloutFlags(jobs=options.jobs, agent=options.agent, timeout=options.timeout),
    )
    source = baseline_source(config, against=options.against)
    report = run_unit(config, source, request, watcher=watcher)
    document = dump_unit_report(report)
    if options.output is not None:
        from silo_regress.system.fsio import write_output

        write_output(options.output, document.encode("utf-8"), shown=str(options.output))
    if options.report_format is ReportFormat.JSON and options.output is None:
        out(document)
    else:
        out(summary(report, written=str(options.output) if options.output else None))
    left = [o for o in report.outcomes if not o.result.counted]
    if left:
        shown = ", ".join(str(o.unit) for o in left[:10])
        more = f" and {len(left) - 10} more" if len(left) > 10 else ""
        why = left[0].infra_errors[-1] if left[0].infra_errors else "not started"
        error(
            f"unit {worker}: {len(left)} rollouts never started after their retries "
            f"(infra-error: {shown}{more}; {why}); they are in no tally"
        )
        return int(ExitCode.BAD_INPUT)
    return 0


def summary(report: UnitReport, *, written: str | None) -> str:
    """``unit 3/64: 32 rollouts of 2000: 25 passed, 6 failed, 1 no-result``."""
    counts: dict[str, int] = {}
    for outcome in report.outcomes:
        counts[outcome.result.value] = counts.get(outcome.result.value, 0) + 1
    parts = ", ".join(f"{n} {word}" for word, n in counts.items()) or "nothing to run"
    retried = sum(1 for o in report.outcomes if o.result.counted and o.infra_errors)
    again = f"; {retried} started on a retry" if retried else ""
    where = f"; unit report written to {written}" if written else ""
    hint = "" if written else " (give --output FILE to keep the unit report for merge)"
    return (
        f"unit {report.worker}: {len(report.outcomes)} of {len(report.plan.units)} planned "
        f"rollouts: {parts}{again}{where}{hint}\n"
    )
