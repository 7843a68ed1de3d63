"""``silo-regress plan``: parse, plan (commands/planning.py), print."""

from __future__ import annotations

from typing import Annotated

import typer

from silo_regress.cli.app import app
from silo_regress.cli.common import globals_of, handled, out
from silo_regress.cli.rolloutoptions import at_least


@app.command()
@handled
def plan(
    ctx: typer.Context,
    refs: Annotated[
        list[str] | None,
        typer.Argument(help="Stats tasks to plan for (default: every one).", show_default=False),
    ] = None,
    detect: Annotated[
        float,
        typer.Option("--detect", help="The drop in pass rate to detect, e.g. 0.15."),
    ] = 0.15,
    power: Annotated[
        float,
        typer.Option("--power", help="The chance of detecting it, e.g. 0.8."),
    ] = 0.8,
    repeat: Annotated[
        int | None,
        typer.Option(
            "--repeat",
            "-n",
            callback=at_least(1),
            help="The M to judge (default: the repeat key, else 8).",
            show_default=False,
        ),
    ] = None,
    against: Annotated[
        str | None,
        typer.Option(
            "--against", help="Read the tallies from this git revision.", show_default=False
        ),
    ] = None,
) -> int:
    """How many rollouts a check needs to detect a drop in pass rate.

    From the stats tasks' tallies: per task, the fixed M at which its own test
    catches the drop with the power asked (with its power and that of M - 1), and the
    smallest drop the configured M catches; for the suite (every task down by the
    drop), the fewest rollouts, M or M + 1 a task, that reach the power, with their
    power and the config keys that run them, and the sequential check's power,
    rollouts and rounds. Writes nothing.
    """
    from silo_regress.commands.planning import PlanRequest
    from silo_regress.commands.planning import plan as make_plan
    from silo_regress.render.plan import render_plan

    g = globals_of(ctx)
    result = make_plan(
        PlanRequest(
            project=g.project,
            explicit=g.explicit,
            detect=detect,
            power=power,
            repeat=repeat,
            against=against,
            refs=tuple(refs or ()),
        )
    )
    out(render_plan(result))
    return 0
