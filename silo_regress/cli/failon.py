"""``--fail-on``: which outcomes make check and merge exit 1.

No typer here (check starts without it); the typer option is in cli/options.py.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from silo_regress.judging.outcome import Report


class FailOn(enum.StrEnum):
    REGRESSION = "regression"
    CHANGE = "change"
    UNCOVERED = "uncovered"  # any change, and anything the check did not cover


def exit_code(report: Report, fail_on: FailOn) -> int:
    """1 when the report holds a failure by the chosen rule, else 0."""
    from silo_regress.judging.outcome import Direction, Verdict

    if fail_on is FailOn.UNCOVERED and report.uncovered:
        return 1
    if report.stats is not None and (report.stats.failed or report.stats.not_decided):
        # A stats regression (task or suite) is a regression by either rule, and a check
        # whose stats tasks no test could judge never passes: it decided nothing.
        return 1
    passing = {Direction.IMPROVEMENT, Direction.DRIFT} if fail_on is FailOn.REGRESSION else set()
    for outcome in report.outcomes:
        if outcome.ok:
            continue
        if outcome.verdict is Verdict.CHANGED and outcome.direction in passing:
            continue
        return 1
    return 0
