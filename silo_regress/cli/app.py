"""The typer app: its global options and the console entry point.

The commands register themselves on :data:`app` from their own modules
(core, gitcmds, reports, runner); what they share is :mod:`silo_regress.cli.common`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from silo_regress import __version__
from silo_regress.cli.common import (
    ColorWhen,
    Globals,
    error,
    guard_standard_streams,
    terminate_as_interrupt,
)
from silo_regress.errors import ExitCode

app = typer.Typer(
    name="silo-regress",
    help="Byte-exact behaviour baselines for Silo agent runs: record, check, review.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"silo-regress {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    project: Annotated[
        Path | None,
        typer.Option(
            "--project",
            "-C",
            help="Project directory (default: found by walking up from the current directory).",
            show_default=False,
        ),
    ] = None,
    color: Annotated[
        ColorWhen,
        typer.Option("--color", help="Colour output: auto (tty, honours NO_COLOR), always, never."),
    ] = ColorWhen.AUTO,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    ctx.obj = Globals(project=project or Path(), color=color, explicit=project is not None)


def main(argv: list[str] | None = None) -> int:
    """Console entry point: run the app and return its exit code."""
    args = sys.argv[1:] if argv is None else argv
    guard_standard_streams()
    terminate_as_interrupt()
    try:
        app(args=args, prog_name="silo-regress", standalone_mode=True)
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        return code if isinstance(code, int) else 1
    except KeyboardInterrupt:
        error("interrupted")
        return int(ExitCode.INTERRUPTED)
    return 0
