"""The command line: parse arguments, call the layers below, print, pick the exit code.

This is the only module that prints or knows exit codes. Every command body runs
inside :func:`_handled`, which turns a :class:`SiloRegressError` into one line on
stderr and its documented code, and anything else into exit 4 with a traceback.
"""

from __future__ import annotations

import enum
import functools
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from silo_regress import __version__
from silo_regress.errors import ExitCode, SiloRegressError

app = typer.Typer(
    name="silo-regress",
    help="Byte-exact behaviour baselines for Silo agent runs: record, check, review.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

F = TypeVar("F", bound=Callable[..., Any])


class ColorWhen(enum.StrEnum):
    AUTO = "auto"
    ALWAYS = "always"
    NEVER = "never"


@dataclass(frozen=True)
class Globals:
    project: Path
    color: ColorWhen
    # --project given: that directory is the project. Otherwise the project is
    # found by walking up from ``project`` (the current directory).
    explicit: bool = False

    def use_color(self, stream: Any = None) -> bool:
        if self.color is ColorWhen.ALWAYS:
            return True
        if self.color is ColorWhen.NEVER or os.environ.get("NO_COLOR"):
            return False
        stream = stream or sys.stdout
        return bool(getattr(stream, "isatty", lambda: False)())


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


def _handled(func: F) -> F:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            code = func(*args, **kwargs)
        except SiloRegressError as exc:
            _error(exc.message)
            raise typer.Exit(int(exc.exit_code)) from None
        except KeyboardInterrupt:
            _error("interrupted")
            raise typer.Exit(int(ExitCode.INTERRUPTED)) from None
        except typer.Exit:
            raise
        except Exception:
            traceback.print_exc()
            _error(
                "internal error (a bug in silo-regress); please report it with the traceback above"
            )
            raise typer.Exit(int(ExitCode.INTERNAL)) from None
        raise typer.Exit(int(code or 0))

    return wrapper  # type: ignore[return-value]


def _error(message: str) -> None:
    sys.stderr.write(f"silo-regress: error: {message}\n")
    sys.stderr.flush()


def _warn(message: str) -> None:
    sys.stderr.write(f"silo-regress: warning: {message}\n")


def _out(text: str) -> None:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # `silo-regress check | head`: the reader left. Keep the command's own exit
        # code instead of a traceback, and send what is left nowhere.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _globals(ctx: typer.Context) -> Globals:
    obj = ctx.find_root().obj
    return obj if isinstance(obj, Globals) else Globals(project=Path(), color=ColorWhen.AUTO)


def _setup(ctx: typer.Context) -> tuple[Globals, Any]:
    g = _globals(ctx)
    return g, _config(g)


def _config(g: Globals) -> Any:
    """The project's config: the one --project names, else the one found walking up."""
    from silo_regress.config import discover_config, load_config

    return load_config(g.project) if g.explicit else discover_config(g.project)


def _refs(texts: list[str] | None) -> list[Any]:
    from silo_regress.taskref import parse_ref

    return [parse_ref(t) for t in texts or []]


def main(argv: list[str] | None = None) -> int:
    """Console entry point: run the app and return its exit code."""
    args = sys.argv[1:] if argv is None else argv
    try:
        app(args=args, prog_name="silo-regress", standalone_mode=True)
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        return code if isinstance(code, int) else 1
    except KeyboardInterrupt:
        _error("interrupted")
        return int(ExitCode.INTERRUPTED)
    return 0
