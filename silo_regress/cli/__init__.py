"""The command line. Importing this package registers every command on ``app``."""

from silo_regress.cli import (
    core,  # noqa: F401  (registers the core commands)
    gitcmds,  # noqa: F401  (log, init, install-hook, diff --from)
    reports,  # noqa: F401  (merge; the GitHub job summary)
    review,  # noqa: F401  (review: accept changed results one by one on a terminal)
    runner,  # noqa: F401  (run; the runner halves of check --run and record --repeat)
)
from silo_regress.cli.app import app, main

__all__ = ["app", "main"]
