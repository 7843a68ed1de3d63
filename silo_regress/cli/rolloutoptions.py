"""The options of every command that starts rollouts: ``run``, ``check --run``, ``record --repeat``.

One definition, so ``--agent``, ``--timeout`` and ``--jobs`` read and behave the
same wherever Silo is started.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, TypeVar

import typer

from silo_regress.commands.rollouts import RolloutFlags

__all__ = ["AgentOption", "JobsOption", "RolloutFlags", "TimeoutOption", "at_least"]

_Number = TypeVar("_Number", int, float)


def at_least(minimum: _Number) -> Callable[[_Number | None], _Number | None]:
    """An option callback refusing values below ``minimum``.

    Instead of typer's ``min=``, whose help hint reads ``[x>=0.001]``: the help
    text says "at least" in words, and the error names the option and the value.
    """

    def check(value: _Number | None) -> _Number | None:
        if value is not None and value < minimum:
            raise typer.BadParameter(f"must be at least {minimum}, not {value}")
        return value

    return check


AgentOption = Annotated[
    str | None,
    typer.Option(
        "--agent",
        metavar="FILE",
        help="Agent file passed to Silo as --agent (overrides config); recorded as the "
        "run's agent.",
        show_default=False,
    ),
]
TimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        callback=at_least(0.001),
        metavar="SECONDS",
        help="Seconds per rollout (at least 0.001) before its process group is killed "
        "(overrides config).",
        show_default=False,
    ),
]
JobsOption = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        callback=at_least(1),
        metavar="N",
        help="Rollouts at a time, at least 1 (default: jobs in config, else the CPU count).",
        show_default=False,
    ),
]
