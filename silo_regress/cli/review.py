"""`silo-regress review`: walk the changed results on a terminal and accept them one by one."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from silo_regress.cli.app import app
from silo_regress.cli.common import Globals, handled, out, parse_refs, setup, working_tree
from silo_regress.errors import UsageError

if TYPE_CHECKING:
    from silo_regress.judging.outcome import Outcome
    from silo_regress.project.config import Config
    from silo_regress.render.text import Palette
    from silo_regress.runs.index import RunIndex

SHORT_DIFF = 40  # lines of diff shown before [d] shows it all
KEYS = "[a]ccept  [s]kip  accept [p]aths  full [d]iff  [q]uit"


@app.command()
@handled
def review(
    ctx: typer.Context,
    refs: Annotated[
        list[str] | None,
        typer.Argument(
            help="Only these tasks (default: every baselined task).", show_default=False
        ),
    ] = None,
) -> int:
    """On a terminal: each changed result, regressions first, with keys to accept it.

    Accepting writes that artifact from the very run that was compared (or only
    the JSON paths you choose). Off a terminal it refuses (exit 2) and names the
    non-interactive way: `silo-regress check`, then `silo-regress record`.
    """
    from silo_regress.judging.judge import check
    from silo_regress.recording.reviewing import review_queue
    from silo_regress.runs.cache import index_runs

    g, config = setup(ctx)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError(
            "review needs a terminal (stdin and stdout); without one, see the changes with "
            "`silo-regress check` and accept each with `silo-regress record TASK` or "
            "`silo-regress record baselines/TASK.ARTIFACT [--path POINTER]`"
        )
    index = index_runs(config.runs_dir)
    store = working_tree(config)
    report = check(config, index, store, parse_refs(refs))
    queue = review_queue(report)
    if not queue.items:
        out("nothing to review: " + _unsettled(queue.unsettled) + "\n")
        return 0
    accepted: list[str] = []
    skipped = 0
    for n, outcome in enumerate(queue.items, start=1):
        decision = _ask(g, config, index, outcome, position=f"{n}/{len(queue.items)}")
        if decision is None:  # quit
            skipped += len(queue.items) - n + 1
            break
        if decision:
            accepted.extend(decision)
        else:
            skipped += 1
    out(_closing(accepted, skipped, queue.unsettled))
    return 0


def _unsettled(unsettled: tuple[Outcome, ...]) -> str:
    if not unsettled:
        return "every result matches its baseline"
    names = ", ".join(f"{o.task} {o.artifact} ({o.verdict.value})" for o in unsettled)
    return f"no changed results; these need a new run or a fix first: {names}"


def _ask(
    g: Globals, config: Config, index: RunIndex, outcome: Outcome, *, position: str
) -> list[str] | None:
    """Show one result and act on keys; the written paths, [] for skip, None for quit."""
    from silo_regress.render.text import Palette, render_outcome

    palette = Palette(g.use_color())
    direction = outcome.direction.value if outcome.direction else outcome.verdict.value
    out(f"\n{palette.paint(f'[{position}] {direction}', 'bold')}\n", colour=palette.color)
    out(
        "\n".join(render_outcome(outcome, palette=palette, cap=SHORT_DIFF)) + "\n",
        colour=palette.color,
    )
    while True:
        out(f"{KEYS} > ")
        key = typer.getchar()
        out(key + "\n")
        if key in ("q", "\x03", "\x04"):
            return None
        if key == "s":
            return []
        if key == "d":
            out(
                "\n".join(render_outcome(outcome, palette=palette, cap=10**9)) + "\n",
                colour=palette.color,
            )
            continue
        if key == "a":
            return _accept(config, index, outcome, pointers=())
        if key == "p":
            pointers = _choose_paths(outcome, palette)
            if pointers:
                return _accept(config, index, outcome, pointers=pointers)
            out("no paths chosen\n")
            continue
        out(f"unknown key {key!r}\n")


def _choose_paths(outcome: Outcome, palette: Palette) -> list[str]:
    from silo_regress.canon.jsondiff import show

    changes = outcome.changes
    if not changes:
        out("this result has no JSON paths to choose from (a new baseline): accept it whole\n")
        return []
    for n, change in enumerate(changes, start=1):
        out(f"  {n:>3}  {change.path or '/'}: {show(change.baseline)} -> {show(change.run)}\n")
    out("paths to accept (numbers or JSON Pointers, space-separated; empty: none) > ")
    answer = sys.stdin.readline().split()
    pointers = []
    for word in answer:
        if word.isascii() and word.isdigit() and 1 <= int(word) <= len(changes):
            pointers.append(changes[int(word) - 1].path)
        elif word.startswith("/"):
            pointers.append(word)
        else:
            out(
                palette.paint(f"ignored {word!r}: not a number from the list or a pointer", "red"),
                colour=palette.color,
            )
            out("\n")
    return pointers


def _accept(
    config: Config, index: RunIndex, outcome: Outcome, *, pointers: tuple[str, ...] | list[str]
) -> list[str]:
    from silo_regress.errors import SiloRegressError
    from silo_regress.recording.recorder import FileState
    from silo_regress.recording.reviewing import accept
    from silo_regress.render.recording import accepted_lines
    from silo_regress.render.text import Palette

    try:
        recording = accept(config, working_tree(config), index, outcome, pointers=pointers)
    except SiloRegressError as exc:  # one refused accept does not end the review
        out(f"silo-regress: error: {exc.message}\n")
        return []
    written = []
    for file in recording.files:
        if file.state is FileState.UNCHANGED:
            continue
        what = f" (paths {' '.join(pointers)})" if pointers else ""
        out(f"accepted {file.path}{what} from run {recording.run.name}\n")
        out("".join(f"    {line}\n" for line in accepted_lines(file, Palette(False))))
        written.append(file.path)
    return written


def _closing(accepted: list[str], skipped: int, unsettled: tuple[Outcome, ...]) -> str:
    lines = [""]
    if accepted:
        lines.append(f"accepted {len(accepted)}: {', '.join(accepted)}; skipped {skipped}")
        lines.append("stage them with: git add " + " ".join(dict.fromkeys(accepted)))
    else:
        lines.append(f"accepted nothing; skipped {skipped}")
    if unsettled:
        names = ", ".join(f"{o.task} {o.artifact} ({o.verdict.value})" for o in unsettled)
        lines.append(f"not reviewable here (need a new run or a fix): {names}")
    return "\n".join(lines) + "\n"
