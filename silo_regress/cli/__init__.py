"""The command line. Importing this package registers every command on ``app``."""

from silo_regress.cli import core  # noqa: F401  (registers the core commands)
from silo_regress.cli.app import app, main

__all__ = ["app", "main"]
