"""The command line: :func:`main` is the console entry point, ``app`` the typer app.

``app`` is built (every command registered on it) on first use, not on import:
`check` as CI and the pre-commit hook call it starts without typer (cli/quick.py), and so
does `merge-driver` as git starts it, once per conflicted file (cli/driverline.py).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

    from silo_regress.cli.app import app


def load_app() -> typer.Typer:
    """The typer app with every command registered."""
    from silo_regress.cli import (
        bisect,  # noqa: F401  (bisect, blame: the commit that made a task worse)
        comment,  # noqa: F401  (comment: the sticky pull-request comment)
        core,  # noqa: F401  (registers the core commands)
        discard,  # noqa: F401  (discard, restore: runs out of judging and back)
        gitcmds,  # noqa: F401  (log, init, install-hook, diff --from)
        mergedriver,  # noqa: F401  (merge-driver: git's merge driver for baselines)
        plan,  # noqa: F401  (plan: the rollouts a check needs to detect a drop)
        prune,  # noqa: F401  (prune: baselines of tasks that are gone)
        reports,  # noqa: F401  (merge; the GitHub job summary)
        review,  # noqa: F401  (review: accept changed results one by one on a terminal)
        runner,  # noqa: F401  (run; the runner halves of check --run and record --repeat)
    )
    from silo_regress.cli.app import app

    # Importing the submodule cli/app.py bound its module to this package's name
    # `app`; the name means the typer app.
    globals()["app"] = app
    return app


def main(argv: list[str] | None = None) -> int:
    """Console entry point: the exit code of the command ``argv`` (default: sys.argv) names."""
    args = sys.argv[1:] if argv is None else argv
    from silo_regress.cli.common import error, guard_standard_streams, terminate_as_interrupt

    guard_standard_streams()
    terminate_as_interrupt()
    try:
        from silo_regress.cli.driverline import drive, driver_arguments

        # git starts the driver once per conflicted baseline: no typer, no other command
        driver = driver_arguments(args)
        if driver is not None:
            from silo_regress.cli.common import run_guarded

            return run_guarded(lambda: drive(*driver))
        from silo_regress.cli.quick import run_quick

        code = run_quick(args)
    except KeyboardInterrupt:
        error("interrupted")
        return 130
    if code is not None:
        return code
    load_app()
    from silo_regress.cli.app import main as run_typer

    return run_typer(args)


def __getattr__(name: str) -> typer.Typer:
    if name == "app":
        return load_app()
    raise AttributeError(name)


__all__ = ["app", "load_app", "main"]
