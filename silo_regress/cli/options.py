"""The typer options check and merge share: one report, the same flags."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from silo_regress.cli.failon import FailOn
from silo_regress.cli.output import ReportFormat
from silo_regress.project.config import SuiteGate

FormatOption = Annotated[
    ReportFormat,
    typer.Option("--format", help="Report format: on stdout, or in --output FILE."),
]
OutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Write the --format report to FILE; the text report still goes to stdout.",
        show_default=False,
    ),
]
VerboseOption = Annotated[
    bool, typer.Option("--verbose", "-v", help="Also list matching artifacts.")
]

FailOnOption = Annotated[
    FailOn,
    typer.Option(
        "--fail-on",
        help="What exits 1: any change (default), or only regressions (and mixed "
        "changes); improvements and drift are then reported and pass. Broken runs "
        "and baselines fail either way. 'uncovered': any change, and also tasks, "
        "artifacts or environments with runs or settings but no baseline.",
    ),
]

SuiteGateOption = Annotated[
    SuiteGate | None,
    typer.Option(
        "--suite-gate",
        help='What a significant decline of the whole suite does under gate = "stats": '
        "fail (exit 1), warn (reported, passes) or off (the suite is not tested; tasks are "
        "then Holm at alpha on their own). Overrides the suite-gate config key (default "
        "fail). Per-task regressions fail either way.",
        show_default=False,
    ),
]
