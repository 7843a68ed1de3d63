"""What every command shares: global options, the error boundary, output, config, refs.

Every command body runs inside :func:`handled`, which turns a
:class:`SiloRegressError` into one line on stderr and its documented exit code,
and anything else into exit 4 with a traceback.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import functools
import io
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO, TYPE_CHECKING, Any, TypeVar

from silo_regress.errors import ExitCode, OutputError, SiloRegressError

# typer is imported only where a typer command runs: `check` and the pre-commit
# hooks start without it (see cli/quick.py).
if TYPE_CHECKING:
    import typer

    from silo_regress.project.config import Config
    from silo_regress.project.taskref import TaskRef
    from silo_regress.store.baselines import BaselineSource, BaselineStore

F = TypeVar("F", bound=Callable[..., Any])


class ColorWhen(enum.StrEnum):
    AUTO = "auto"
    ALWAYS = "always"
    NEVER = "never"


@dataclass(frozen=True)
class Globals:
    """The options given before the command: ``--project`` and ``--color``."""

    project: Path
    color: ColorWhen
    # --project given: that directory is the project. Otherwise the project is
    # found by walking up from ``project`` (the current directory).
    explicit: bool = False

    def use_color(self, stream: IO[str] | None = None) -> bool:
        if self.color is ColorWhen.ALWAYS:
            return True
        if self.color is ColorWhen.NEVER or os.environ.get("NO_COLOR"):
            return False
        stream = stream or sys.stdout
        return bool(getattr(stream, "isatty", lambda: False)())


def handled(func: F) -> F:
    """Run a command body: its return value is the exit code, errors become one line."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        import typer

        code = run_guarded(lambda: func(*args, **kwargs), passthrough=(typer.Exit,))
        raise typer.Exit(code)

    return wrapper  # type: ignore[return-value]


def run_guarded(
    body: Callable[[], int | None], *, passthrough: tuple[type[BaseException], ...] = ()
) -> int:
    """The exit code of a command body: a :class:`SiloRegressError` is one line on
    stderr and its documented code, Ctrl-C is 130, anything else a traceback and 4."""
    try:
        return int(body() or 0)
    except SiloRegressError as exc:
        error(exc.message)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        error("interrupted")
        return int(ExitCode.INTERRUPTED)
    except passthrough:
        raise
    except Exception:
        import traceback  # only a bug pays for it

        traceback.print_exc()
        error("internal error (a bug in silo-regress); please report it with the traceback above")
        return int(ExitCode.INTERNAL)


def error(message: str) -> None:
    sys.stderr.write(f"silo-regress: error: {_sentence(message)}\n")
    sys.stderr.flush()


def warn(message: str) -> None:
    sys.stderr.write(f"silo-regress: warning: {_sentence(message)}\n")


def _sentence(message: str) -> str:
    """A message with names from run files in it, safe for a terminal and a CI log.

    Nothing invisible or controlling is written raw, and a message of several lines
    (Silo's own stderr) continues on lines that start with ``    | ``, so no line of
    it can start a GitHub workflow command (the runner reads ``::`` after spaces).
    """
    from silo_regress.canon.visible import one_line

    first, *rest = message.split("\n")
    return "\n".join([one_line(first), *(f"    | {one_line(line)}" for line in rest)])


def out(text: str, *, colour: bool = False) -> None:
    """Write ``text`` to stdout with nothing invisible or controlling left raw in it;
    ``colour`` lets our own colour sequences through."""
    from silo_regress.canon.visible import shielded

    text = shielded(text, colour=colour)
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # `silo-regress check | head`: the reader left. Keep the command's own exit
        # code instead of a traceback, and send what is left nowhere.
        _stdout_to_devnull()
    except OSError as exc:
        # `> /dev/full`, a closed stdout: the report is lost, so the command did not
        # do what it was asked; say so once (exit 3) instead of a traceback.
        _stdout_to_devnull()
        raise OutputError(f"stdout: cannot write the output: {exc.strerror or exc}") from None


def _stdout_to_devnull() -> None:
    """Send stdout nowhere, so Python's last flush at exit cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    with contextlib.suppress(OSError, ValueError):
        os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


class _ClosedStdout(io.TextIOBase):
    """Stands in for a stdout the process was started without (``>&-``)."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "stdout is closed")

    def fileno(self) -> int:
        return 1


def guard_standard_streams() -> None:
    """Keep fds 0-2 taken and stdout's failures reportable.

    With fd 1 closed, the next file this process opens would get fd 1, and
    whatever git prints would land in it; /dev/null takes the slot instead, and
    the first write to stdout becomes one error sentence.
    """
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            devnull = os.open(os.devnull, os.O_RDWR)
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
            if fd == 1:
                sys.stdout = _ClosedStdout()
    # A task ref or path with a byte that is not UTF-8 is printed escaped, never a crash.
    with contextlib.suppress(AttributeError, ValueError):
        sys.stdout.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]


def terminate_as_interrupt() -> None:
    """SIGTERM (a cancelled CI job) ends a command like Ctrl-C: cleanup runs, exit 130."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    # Off the main thread signal.signal raises ValueError: there is nothing to install
    # (and no threading import on the hook's start-up path to ask first).
    with contextlib.suppress(ValueError, OSError):
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, interrupt)


def globals_of(ctx: typer.Context) -> Globals:
    obj = ctx.find_root().obj
    return obj if isinstance(obj, Globals) else Globals(project=Path(), color=ColorWhen.AUTO)


def setup(ctx: typer.Context) -> tuple[Globals, Config]:
    """The global options and the project's config."""
    g = globals_of(ctx)
    return g, project_config(g)


def project_config(g: Globals) -> Config:
    """The project's config: the one --project names, else the one found walking up."""
    from silo_regress.commands.sources import load_project

    return load_project(g.project, explicit=g.explicit)


def parse_refs(texts: list[str] | None) -> list[TaskRef]:
    from silo_regress.commands.sources import parse_refs as parse

    return parse(texts)


def working_tree(config: Config) -> BaselineStore:
    """The project's baselines directory, the one place baselines are written."""
    from silo_regress.commands.sources import working_tree as store

    return store(config)


def baseline_source(
    config: Config, *, against: str | None = None, staged: bool = False
) -> BaselineSource:
    """Where baselines are read from: the working tree, the git index or a commit."""
    from silo_regress.commands.sources import baseline_source as source

    return source(config, against=against, staged=staged)
