"""``merge-driver``: git's merge driver for baselines (configured by ``init``'s line),
and what ``fmt --resolve`` says about the files it merged."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from silo_regress.cli.app import app
from silo_regress.cli.common import handled, out

if TYPE_CHECKING:
    from silo_regress.project.config import Config


@app.command(name="merge-driver")
@handled
def merge_driver(
    base: Annotated[Path, typer.Argument(metavar="BASE", help="%O: the common ancestor.")],
    ours: Annotated[
        Path, typer.Argument(metavar="OURS", help="%A: our version; the merge is written here.")
    ],
    theirs: Annotated[Path, typer.Argument(metavar="THEIRS", help="%B: their version.")],
    name: Annotated[
        str, typer.Argument(metavar="PATH", help="%P: the file's path in the repository.")
    ],
) -> int:
    """Merge a baseline by JSON key, as git's merge driver: exit 0 clean, 1 conflicted.

    Objects merge key by key; collection ids, checks (by label), scalars (by field) and
    tool events (by seq) item by item; the result is canonical. A member both sides
    changed differently stays a conflict, marked in the file and named by its JSON
    Pointer. A tally (*.tally.json) is never merged. Configure it once per clone with
    the line `silo-regress init` prints: git config merge.silo-regress.driver
    "silo-regress merge-driver %O %A %B %P".
    """
    from silo_regress.cli.driverline import drive

    return drive(str(base), str(ours), str(theirs), name)


def report_resolution(config: Config, paths: Sequence[Path]) -> int:
    """``fmt --resolve``: one line per file, the exit code (1 while a conflict is left)."""
    from silo_regress.commands.resolution import resolve_conflicts

    result = resolve_conflicts(config, paths)
    for shown in result.unmarked:
        out(f"no markers      {shown}: nothing to resolve\n")
    for item in result.files:
        base = f"sides from {item.read.value}; base from {item.base.value}"
        if item.clean:
            out(f"resolved        {item.shown} ({base}); `git add` it\n")
        else:
            out(f"conflicted      {item.shown}: {', '.join(item.pointers)} ({base})\n")
    if not result.files and not result.unmarked:
        out("no baseline holds conflict markers\n")
    if not result.clean:
        left = sum(not f.clean for f in result.files)
        out(f"{left} of {len(result.files)} files still conflict: edit the marked lines\n")
        return 1
    return 0
