"""`silo-regress discard` and `restore`: take experiment runs out of judging, and back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from silo_regress.cli.app import app
from silo_regress.cli.common import handled, out, setup

if TYPE_CHECKING:
    from silo_regress.recording.discarding import Moved

RunsOrTasks = Annotated[
    list[str],
    typer.Argument(
        metavar="RUN_ID|TASK...",
        help="Run directory names, or task refs (TASK-002, ENV/TASK-002).",
        show_default=False,
    ),
]


@app.command()
@handled
def discard(ctx: typer.Context, targets: RunsOrTasks) -> int:
    """Take runs out of judging without deleting them (`restore` puts them back).

    A RUN_ID is moved as is; a TASK discards the run `check` judges now (its newest).
    Each run directory is moved, in one rename, into RUNS_DIR/.silo-regress-discarded/;
    `check` then judges the newest run that is not discarded, and `status` lists it.
    """
    from silo_regress.recording.discarding import discard_runs
    from silo_regress.runs.cache import index_runs

    _, config = setup(ctx)
    moved = discard_runs(config, index_runs(config.runs_dir), targets)
    out(_moved_lines(moved, hint="restore"))
    return 0


@app.command()
@handled
def restore(ctx: typer.Context, targets: RunsOrTasks) -> int:
    """Put discarded runs back into judging: a RUN_ID, or every discarded run of a TASK."""
    from silo_regress.recording.discarding import restore_runs

    _, config = setup(ctx)
    out(_moved_lines(restore_runs(config, targets), hint="discard"))
    return 0


def _moved_lines(moved: list[Moved], *, hint: str) -> str:
    lines = []
    for item in moved:
        task = f" ({item.task})" if item.task else ""
        lines.append(f"{item.move.value} {item.name}{task}: now {item.path}")
    if moved:  # an empty hint would undo nothing
        names = " ".join(item.name for item in moved)
        lines.append(f"undo with: silo-regress {hint} {names}")
    return "\n".join(lines) + "\n"
