"""The typer app: its global options and the console entry point.

The commands register themselves on :data:`app` from their own modules
(core, gitcmds, reports, runner); what they share is :mod:`silo_regress.cli.common`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from silo_regress import __version__
from silo_regress.cli.common import (
    ColorWhen,
    Globals,
    error,
    guard_standard_streams,
    terminate_as_interrupt,
)
from silo_regress.errors import ExitCode

# Global options a user may also give after the command (`check --color always`):
# moved in front of it before parsing. The value follows unless written with "=".
_GLOBAL_OPTIONS = ("--color", "--project", "-C")
# Readable placeholders in --help instead of click's "<str>" and "<int range>".
_METAVARS = {
    "run": "RUN_ID",
    "repeat": "N",
    "jobs": "N",
    "timeout": "SECONDS",
    "output": "FILE",
}


def hoist_global_options(args: list[str], commands: Iterable[str]) -> list[str]:
    """``check --color always`` -> ``--color always check``; stops at ``--``."""
    names = set(commands)
    at = next((n for n, a in enumerate(args) if a in names), None)
    if at is None:
        return args
    head, rest = list(args[: at + 1]), args[at + 1 :]
    moved: list[str] = []
    kept: list[str] = []
    n = 0
    while n < len(rest):
        arg = rest[n]
        if arg == "--":
            kept += rest[n:]
            break
        if arg in _GLOBAL_OPTIONS and n + 1 < len(rest):
            moved += rest[n : n + 2]
            n += 2
            continue
        if arg.split("=", 1)[0] in _GLOBAL_OPTIONS[:2] and "=" in arg:
            moved.append(arg)
        else:
            kept.append(arg)
        n += 1
    return [*head[:at], *moved, head[at], *kept]


def _metavar(param: Any) -> str:
    """A choice lists its values (``[text|json]``); anything else gets a word."""
    choices = getattr(param.type, "choices", None)
    if choices:
        return "[" + "|".join(str(getattr(c, "value", c)) for c in choices) + "]"
    name = param.name or "value"
    return _METAVARS.get(name, name.upper().replace("_", "-"))


class _Group(TyperGroup):
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        for command in self.commands.values():
            for param in command.params:
                option = param.param_type_name == "option"
                if option and not getattr(param, "is_flag", True) and not param.metavar:
                    param.metavar = _metavar(param)
        return super().parse_args(ctx, hoist_global_options(args, self.commands))


app = typer.Typer(
    cls=_Group,
    context_settings={"help_option_names": ["-h", "--help"]},
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
            metavar="DIR",
            help="Project directory (default: found by walking up from the current directory).",
            show_default=False,
        ),
    ] = None,
    color: Annotated[
        ColorWhen,
        typer.Option(
            "--color",
            metavar="WHEN",
            help="Colour output: auto (tty, honours NO_COLOR), always, never.",
        ),
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
