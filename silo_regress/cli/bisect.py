"""`silo-regress bisect` and `silo-regress blame`: which commit made a task worse."""

from __future__ import annotations

import enum
import sys
from typing import Annotated

import typer

from silo_regress.cli.app import app
from silo_regress.cli.common import handled, out, setup
from silo_regress.cli.rolloutoptions import at_least
from silo_regress.errors import ExitCode


class BisectFormat(enum.StrEnum):
    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"


FormatOption = Annotated[
    BisectFormat, typer.Option("--format", help="Output format: text, json or markdown.")
]


@app.command()
@handled
def bisect(
    ctx: typer.Context,
    task: Annotated[str, typer.Argument(help="The task that got worse, e.g. crm-west/TASK-002.")],
    good: Annotated[
        str | None,
        typer.Option(
            "--good",
            metavar="REF",
            help="A commit where the task was good (default: the commit that last recorded "
            "its baseline tally, or its baselines for an exact task).",
            show_default=False,
        ),
    ] = None,
    bad: Annotated[
        str, typer.Option("--bad", metavar="REF", help="A commit where it is worse.")
    ] = "HEAD",
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            callback=at_least(1),
            help="Rollouts a round (a stats task), run in parallel (at least 1).",
        ),
    ] = 5,
    budget: Annotated[
        int,
        typer.Option("--budget", callback=at_least(1), help="Rollouts this bisect may start."),
    ] = 500,
    confidence: Annotated[
        float,
        typer.Option(
            "--confidence",
            help="Name a culprit only when it is right at least this often (0.5 to 0.99).",
        ),
    ] = 0.95,
    restart: Annotated[
        bool,
        typer.Option("--restart", help="Drop an unfinished bisect's state and start afresh."),
    ] = False,
    output_format: FormatOption = BisectFormat.TEXT,
) -> int:
    """Find the first-parent commit that made TASK worse, in temporary git worktrees.

    A stats task is a Bayesian change point over pass counts (both pass rates
    unknown); rounds of --jobs rollouts go to the commit that tells the most, until
    the culprit is named at --confidence or --budget runs out (exit 1, resumable).
    An exact task is plain bisection on the byte verdict. The config key
    bisect-setup (e.g. ["npm", "ci"]) runs in each worktree first; a commit whose
    set-up or agent fails is skipped. Ctrl-C keeps the state in the git directory:
    run the same command again to resume.
    """
    from silo_regress.commands.bisecting import BisectOptions, Step
    from silo_regress.commands.bisecting import bisect as run_bisect
    from silo_regress.project.taskref import parse_ref
    from silo_regress.render.bisection import render_bisect
    from silo_regress.reports.bisection import Ending

    _, config = setup(ctx)

    def progress(step: Step) -> None:
        from silo_regress.canon.visible import one_line

        if step.skipped is not None:
            line = f"skipped {step.sha[:12]}: {one_line(step.skipped)}"
        else:
            extra = f" ({step.infra} left no run, not counted)" if step.infra else ""
            line = f"{step.sha[:12]}: {step.passed}/{step.rollouts} passed{extra}"
        sys.stderr.write(f"silo-regress: bisect: {line}\n")
        sys.stderr.flush()

    options = BisectOptions(
        ref=parse_ref(task),
        good=good,
        bad=bad,
        jobs=jobs,
        budget=budget,
        confidence=confidence,
        restart=restart,
    )
    result = run_bisect(config, options, on_step=progress)
    out(render_bisect(result, output_format.value))
    return int(ExitCode.OK) if result.ending is not Ending.UNDECIDED else int(ExitCode.CHECK_FAILED)


@app.command()
@handled
def blame(
    ctx: typer.Context,
    task: Annotated[str, typer.Argument(help="The task, e.g. crm-west/TASK-002.")],
    pointer: Annotated[
        str,
        typer.Argument(help="A JSON Pointer into the baseline (default: the whole document)."),
    ] = "",
    artifact: Annotated[
        str, typer.Option("--artifact", help="The baseline artifact to blame.")
    ] = "result.json",
    output_format: FormatOption = BisectFormat.TEXT,
) -> int:
    """Which commit introduced each current baseline value, from git history alone.

    For an exact task: each value under POINTER in the committed baseline, with the
    commit that introduced it. For a stats task: the tally at every commit that
    changed it, and the most probable change point between them. Starts no rollouts.
    """
    from silo_regress.project.config import Gate
    from silo_regress.project.taskref import parse_ref
    from silo_regress.render.bisection import render_blame
    from silo_regress.reports.bisection import blame_pointer, blame_tally

    _, config = setup(ctx)
    ref = parse_ref(task)
    if config.task_settings(ref).gate is Gate.STATS and not pointer:
        found = blame_tally(config, ref)
        out(render_blame(found, output_format.value))
        return 0
    out(render_blame(blame_pointer(config, ref, pointer, artifact=artifact), output_format.value))
    return 0
