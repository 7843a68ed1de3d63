"""The exception family and the exit codes it maps to.

Every module below ``cli`` raises :class:`SiloRegressError` (or a subclass) for
anything the user can fix; ``cli`` is the one place that turns it into a message
on stderr and an exit code.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    OK = 0
    CHECK_FAILED = 1
    USAGE = 2
    BAD_INPUT = 3
    INTERNAL = 4
    INTERRUPTED = 130


class SiloRegressError(Exception):
    """A problem with the user's input or setup; the message names the file."""

    exit_code: ExitCode = ExitCode.BAD_INPUT

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(SiloRegressError):
    """Bad flags or arguments that the parser itself could not catch."""

    exit_code = ExitCode.USAGE


class InputError(SiloRegressError):
    """A file that cannot be read or understood: JSON, encoding, missing file."""


class ConfigError(SiloRegressError):
    """Invalid ``[tool.silo-regress]`` configuration."""


class TaskRefError(SiloRegressError):
    """An unknown, ambiguous or unsafe task reference."""


class VolatileContentError(SiloRegressError):
    """An artifact holds timestamps or run ids and cannot become a baseline."""


class GitError(SiloRegressError):
    """Not a git repository, an unknown ref, or git itself failed."""


class RunnerError(SiloRegressError):
    """Silo could not be started, or a rollout failed before writing a run."""


class OutputError(SiloRegressError):
    """stdout or an ``--output`` target could not take the report."""
