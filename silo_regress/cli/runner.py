"""The runner's commands: ``run``, and the runner halves of ``check --run`` and ``record --repeat``.

Progress goes to stderr (a rich progress bar on a terminal, one plain line per
finished rollout elsewhere); summaries and stability reports go to stdout.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from silo_regress.cli.app import app
from silo_regress.cli.common import (
    Globals,
    error,
    handled,
    out,
    parse_refs,
    setup,
    warn,
)
from silo_regress.cli.rolloutoptions import (
    AgentOption,
    JobsOption,
    RolloutFlags,
    TimeoutOption,
    at_least,
)
from silo_regress.errors import ExitCode

if TYPE_CHECKING:
    from silo_regress.commands.recording import RepeatedRecord
    from silo_regress.project.config import Config
    from silo_regress.runner import Batch, Event, Exited

# --- the command --------------------------------------------------------------


@app.command("run")
@handled
def run_command(
    ctx: typer.Context,
    refs: Annotated[
        list[str] | None,
        typer.Argument(
            help="Task refs: TASK-002 or ENV/TASK-002 (default: every baselined task).",
            show_default=False,
        ),
    ] = None,
    repeat: Annotated[
        int,
        typer.Option(
            "--repeat",
            "-n",
            callback=at_least(1),
            help="Rollouts per task, at least 1; with 2 or more, report whether they agree "
            "(exit 1 if not).",
        ),
    ] = 1,
    jobs: JobsOption = None,
    timeout: TimeoutOption = None,
    agent: AgentOption = None,
) -> int:
    """Start Silo for each task and collect the runs it makes.

    Runs `<silo-command> run --env ENV --task TASK [--agent AGENT]` in the
    project directory, several at a time. Exit 0 when every rollout left a
    complete run (a failed verifier check still counts), 1 when one crashed or,
    with --repeat, when a task's repeats differ, 3 when Silo could not run a task
    (not found, configuration error, timeout, disk full), 130 on Ctrl-C.
    """
    from silo_regress.commands.rollouts import report_problems
    from silo_regress.commands.running import RunRequest, run_tasks

    g, config = setup(ctx)
    request = RunRequest(
        refs=tuple(parse_refs(refs)),
        repeat=repeat,
        flags=RolloutFlags(jobs=jobs, agent=agent, timeout=timeout),
    )
    watcher = ConsoleWatcher(g)
    ran = run_tasks(config, request, watcher=watcher)
    if repeat > 1:
        from silo_regress.render.stability import render_stability

        shown = render_stability(
            list(ran.stabilities), config=config, color=g.use_color(), tallies=dict(ran.tallies)
        )
        out(shown, colour=g.use_color())
    else:
        out(render_batch(ran.batch))
    out(_totals(ran.batch))
    if report_problems(ran.batch, watcher):
        return int(ExitCode.BAD_INPUT)
    return int(ExitCode.CHECK_FAILED) if ran.unsettled else 0


# --- how rollouts look on a terminal -----------------------------------------


class ConsoleWatcher:
    """Rollouts as a person sees them: progress on stderr (a rich bar on a terminal, one
    plain line per finished rollout elsewhere), warnings and errors as they come."""

    def __init__(self, g: Globals) -> None:
        self.g = g

    def rollouts(self, total: int, width: int) -> AbstractContextManager[Callable[[Event], None]]:
        return _progress(self.g, total, width)

    def note(self, message: str) -> None:
        from silo_regress.canon.visible import one_line

        sys.stderr.write(f"silo-regress: {one_line(message)}\n")
        sys.stderr.flush()

    def warn(self, message: str) -> None:
        warn(message)

    def error(self, message: str) -> None:
        error(message)


# --- record --repeat ------------------------------------------------------------


def print_repeated(g: Globals, config: Config, done: RepeatedRecord, *, repeat: int) -> int:
    """What ``record --repeat`` did (commands/recording.py), printed; the exit code."""
    from silo_regress.commands.recording import RecordEnd
    from silo_regress.render.recording import render_record
    from silo_regress.render.stability import render_stability, tally_line
    from silo_regress.stats.tally import parse_tally

    if done.end is RecordEnd.NO_RUN:
        error("nothing was recorded")
        return int(ExitCode.BAD_INPUT)
    colour = g.use_color()
    shown = render_stability(
        done.stabilities, config=config, color=colour, tallies=dict(done.counted)
    )
    out(shown, colour=colour)
    if done.end is RecordEnd.DISAGREED:
        error(
            f"refusing to record {', '.join(done.disagreeing)}: the {repeat} rollouts disagree, "
            "so a byte baseline would fail at random; make the task deterministic, ignore the "
            f"varying paths ({config.location.key('ignore')}), judge it by pass rate (gate = "
            '"stats", shown above), or record anyway with --force. Nothing was recorded'
        )
        return int(ExitCode.CHECK_FAILED)
    for label in done.disagreeing:
        warn(f"{label}: recording the newest of runs that disagree (--force)")
    stats_tasks = frozenset() if done.variants else done.stats_tasks
    out(render_record(done.recordings, color=colour, stats_tasks=stats_tasks), colour=colour)
    lines = []
    for (path, data), stability in zip(done.tallies, done.stabilities, strict=False):
        where = config.relative(path)
        tally = parse_tally(data, source=where)
        lines.append(tally_line(where, tally, without_result=len(stability.broken)))
    out("".join(lines))
    return 0


# --- progress -----------------------------------------------------------------


@contextmanager
def _progress(g: Globals, total: int, jobs: int) -> Iterator[Callable[[Event], None]]:
    stream = sys.stderr
    shown = min(jobs, total)
    intro = f"silo-regress: running {total} rollout{'s' if total != 1 else ''}, {shown} at a time"
    if total and getattr(stream, "isatty", lambda: False)():
        with _bar(g, total, intro) as on_event:
            yield on_event
        return
    stream.write(intro + "\n")
    stream.flush()
    yield _plain_line


def _plain_line(event: Event) -> None:
    from silo_regress.runner import Exited

    if isinstance(event, Exited):
        width = len(str(event.total))
        sys.stderr.write(
            f"silo-regress: [{event.done:>{width}}/{event.total}] {event.rollout.label}: "
            f"{_exit_words(event)} after {event.seconds:.2f} s\n"
        )
        sys.stderr.flush()


def _exit_words(event: Exited) -> str:
    if event.timed_out:
        return "timed out, process group killed"
    if event.exit_code is None:
        return "could not be started"
    if event.exit_code < 0:
        return f"killed by signal {-event.exit_code}"
    return f"exit {event.exit_code}"


@contextmanager
def _bar(g: Globals, total: int, intro: str) -> Iterator[Callable[[Event], None]]:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    from silo_regress.runner import Exited, Started

    console = Console(stderr=True, no_color=not g.use_color(sys.stderr), highlight=False)
    console.print(intro, markup=False)
    running: dict[str, None] = {}
    with Progress(
        SpinnerColumn(),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}", markup=False),
        console=console,
        transient=True,
    ) as progress:
        bar = progress.add_task("", total=total)

        def on_event(event: Event) -> None:
            if isinstance(event, Started):
                running[event.rollout.label] = None
            elif isinstance(event, Exited):
                running.pop(event.rollout.label, None)
                if event.timed_out or event.exit_code not in (0, 1):
                    progress.console.print(
                        f"silo-regress: {event.rollout.label}: {_exit_words(event)}", markup=False
                    )
                progress.advance(bar)
            progress.update(bar, description=", ".join(running))

        yield on_event


# --- reports ------------------------------------------------------------------


def render_batch(batch: Batch) -> str:
    """One line per rollout: the run it left and what Silo said of it."""
    lines = []
    for outcome in batch.outcomes:
        if outcome.problem:
            continue  # reported on stderr as errors
        lines.append(outcome.message.replace("\n", "\n    ") + "\n")
    return "".join(lines)


def _totals(batch: Batch) -> str:
    from silo_regress.runner import RolloutState

    counts: dict[str, int] = {}
    for outcome in batch.outcomes:
        counts[outcome.state.value] = counts.get(outcome.state.value, 0) + 1
    order = [s.value for s in RolloutState]
    parts = [f"{counts[s]} {s}" for s in order if s in counts]
    n = len(batch.outcomes)
    return (
        f"{n} rollout{'s' if n != 1 else ''} in {batch.seconds:.1f} s"
        + (f": {', '.join(parts)}" if parts else "")
        + "\n"
    )
