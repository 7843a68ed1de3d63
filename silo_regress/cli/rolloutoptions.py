"""The options of every command that starts rollouts: ``run``, ``check --run``, ``record --repeat``.

One definition, so ``--agent``, ``--timeout`` and ``--jobs`` read and behave the
same wherever Silo is started.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import typer

from silo_regress.errors import UsageError

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
        min=0.001,
        metavar="SECONDS",
        help="Seconds per rollout before its process group is killed (overrides config).",
        show_default=False,
    ),
]
JobsOption = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        min=1,
        metavar="N",
        help="Rollouts at a time (default: jobs in config, else the CPU count).",
        show_default=False,
    ),
]


@dataclass(frozen=True)
class RolloutFlags:
    """What the command line says about starting Silo; None: config decides."""

    jobs: int | None = None
    agent: str | None = None
    timeout: float | None = None

    def require(self, starts: bool, *, needs: str) -> None:
        """Refuse rollout flags on a command line that starts no rollout."""
        given = [
            flag
            for flag, value in (
                ("--jobs", self.jobs),
                ("--agent", self.agent),
                ("--timeout", self.timeout),
            )
            if value is not None
        ]
        if given and not starts:
            raise UsageError(f"{' and '.join(given)} only apply with {needs}, which starts Silo")
