"""``--fail-on``: which outcomes make check and merge exit 1."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from silo_regress.outcome import Report


class FailOn(enum.StrEnum):
    REGRESSION = "regression"
    CHANGE = "change"


FailOnOption = Annotated[
    FailOn,
    typer.Option(
        "--fail-on",
        help="What exits 1: any change (default), or only regressions (and mixed "
        "changes); improvements and drift are then reported and pass. Broken runs "
        "and baselines fail either way.",
    ),
]


def exit_code(report: Report, fail_on: FailOn) -> int:
    """1 when the report holds a failure by the chosen rule, else 0."""
    from silo_regress.outcome import Direction, Verdict

    passing = {Direction.IMPROVEMENT, Direction.DRIFT} if fail_on is FailOn.REGRESSION else set()
    for outcome in report.outcomes:
        if outcome.ok:
            continue
        if outcome.verdict is Verdict.CHANGED and outcome.direction in passing:
            continue
        return 1
    return 0
