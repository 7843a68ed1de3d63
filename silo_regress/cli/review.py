"""`silo-regress review`: walk the changed results on a terminal and accept them one by one.

What settling an item means lives in :mod:`silo_regress.commands.reviewing`; here are
the keys, the prompts and what is printed."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from silo_regress.cli.app import app
from silo_regress.cli.common import Globals, handled, out, parse_refs, setup

if TYPE_CHECKING:
    from silo_regress.commands.reviewing import Accepted, Event, Review, ReviewSummary
    from silo_regress.judging.outcome import Outcome
    from silo_regress.recording.candidates import Candidate
    from silo_regress.render.text import Palette

SHORT_DIFF = 40  # lines of diff shown before [d] shows it all
KEYS = "[a]ccept  accept [p]aths  [r]eject run  [s]kip  accept [A]ll  [u]ndo  full [d]iff  [q]uit"
REJECT_KEYS = "[r]eject run  [s]kip  [u]ndo  full [d]iff  [q]uit"  # a run that cannot be accepted


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
    accept_all: Annotated[
        bool,
        typer.Option(
            "--accept-all", help="Accept every reviewable result without asking (no terminal)."
        ),
    ] = False,
    reject: Annotated[
        bool,
        typer.Option(
            "--reject",
            help="Discard the run of every reviewable result of the named tasks (no terminal).",
        ),
    ] = False,
) -> int:
    """On a terminal: each changed result, regressions first, with keys to accept it.

    Accepting writes that artifact from the very run that was compared (or only
    the JSON paths you choose); rejecting discards that run (`silo-regress restore`
    puts it back); [u] undoes the last accept. Without a terminal use
    `--accept-all` or `--reject TASK...`; otherwise it refuses (exit 2).
    """
    from silo_regress.commands.reviewing import ReviewRequest, check_request, open_review

    request = ReviewRequest(
        refs=tuple(parse_refs(refs) or ()),
        accept_all=accept_all,
        reject=reject,
        terminal=sys.stdin.isatty() and sys.stdout.isatty(),
    )
    check_request(request)
    g, config = setup(ctx)
    session = open_review(config, request)
    if session.empty:
        out("nothing to review: " + _unsettled(session.everything_unsettled) + "\n")
        return 0
    if request.scripted:
        from silo_regress.commands.reviewing import review_scripted

        summary = review_scripted(session, reject=reject, on_event=_print_event)
        out(_closing(summary))
        return 0
    palette = _palette(g)
    while (outcome := session.next_item()) is not None:
        try:
            done = _ask(session, outcome, palette=palette, position=session.position())
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: a write in flight was rolled back
            out("\ninterrupted\n")
            out(_closing(session.summary()))
            return 130
        if not done:  # quit: this item and the rest stay as they are
            out(_closing(session.summary()))
            return 0
    for n, candidate in enumerate(session.tallies, start=1):
        try:
            done = _ask_tally(session, candidate, n=n, of=len(session.tallies))
        except KeyboardInterrupt:  # the tally's write is one batch: done whole or not at all
            out("\ninterrupted\n")
            out(_closing(session.summary()))
            return 130
        if not done:
            break
    out(_closing(session.summary()))
    return 0


def _print_event(event: Event) -> None:
    """What one settled item says."""
    from silo_regress.commands.reviewing import Accepted, Passed, Refused, Rejected

    if isinstance(event, Accepted):
        _print_accepted(event)
    elif isinstance(event, Rejected):
        out(
            f"rejected run {event.outcome.run_name} ({event.outcome.task}): moved to "
            f"{event.moved_to}; `silo-regress restore {event.outcome.run_name}` puts it back\n"
        )
    elif isinstance(event, Refused):
        out(f"silo-regress: error: {event.message}\n")
    elif isinstance(event, Passed):
        out(
            f"skipped {event.outcome.task} {event.outcome.artifact} "
            f"({event.outcome.verdict.value}): a run that cannot be accepted\n"
        )
    else:
        was = event.accepted.before
        before = f"{was.passed}/{was.rollouts}" if was else "none"
        after = event.accepted.after
        out(
            f"accepted {event.accepted.path} from {len(event.candidate.runs)} rollouts: "
            f"{before} -> {after.passed}/{after.rollouts} passed\n"
        )


def _print_accepted(event: Accepted) -> None:
    from silo_regress.recording.recorder import FileState
    from silo_regress.render.recording import accepted_lines
    from silo_regress.render.text import Palette

    recording = event.recording
    for file in recording.files:
        if file.state is FileState.UNCHANGED:
            continue
        what = f" (paths {' '.join(event.pointers)})" if event.pointers else ""
        out(f"accepted {file.path}{what} from run {recording.run.name}\n")
        out("".join(f"    {line}\n" for line in accepted_lines(file, Palette(False))))
    out("".join(f"removed {path} (a variant the accept replaced)\n" for path in recording.removed))


def _tally_line(candidate: Candidate) -> str:
    tally = candidate.tally
    return (
        f"{candidate.task} {candidate.tier}: the {tally.rollouts} rollouts of the last "
        f"check --run passed {tally.passed}"
    )


def _ask_tally(session: Review, candidate: Candidate, *, n: int, of: int) -> bool:
    """Offer one stats result; False when the user quits."""
    out(f"\n[tally {n}/{of}] {_tally_line(candidate)}\n")
    while True:
        key = _key("[a]ccept its tally  [s]kip  [q]uit")
        if key in _QUIT:
            return False
        if key == "s":
            session.skip()
            return True
        if key == "a":
            done = session.accept_tally(candidate)
            _print_event(done)
            if _refused(done):  # on a terminal a refused accept stays open: skip or quit
                continue
            return True
        out(f"unknown key {key!r}\n")


def _refused(event: object) -> bool:
    from silo_regress.commands.reviewing import Refused

    return isinstance(event, Refused) and not event.counted


def _palette(g: Globals) -> Palette:
    from silo_regress.render.text import Palette

    return Palette(g.use_color())


def _unsettled(unsettled: tuple[Outcome, ...]) -> str:
    if not unsettled:
        return "every result matches its baseline"
    names = ", ".join(f"{o.task} {o.artifact} ({o.verdict.value})" for o in unsettled)
    return f"no changed results; these need a new run or a fix first: {names}"


def _ask(session: Review, outcome: Outcome, *, palette: Palette, position: str) -> bool:
    """Show one result and act on keys until it is settled; False when the user quits."""
    from silo_regress.judging.outcome import Verdict
    from silo_regress.render.text import render_outcome

    acceptable = session.acceptable(outcome)
    if session.accept_all:
        _print_event(session.accept(outcome) if acceptable else session.pass_over(outcome))
        return True
    direction = outcome.direction.value if outcome.direction else outcome.verdict.value
    out(f"\n{palette.paint(f'[{position}] {direction}', 'bold')}\n", colour=palette.color)
    out(
        "\n".join(render_outcome(outcome, palette=palette, cap=SHORT_DIFF)) + "\n",
        colour=palette.color,
    )
    if outcome.verdict is Verdict.MISSING_BASELINE:
        out(_would_record(session, outcome, palette), colour=palette.color)
    while True:
        key = _key(KEYS if acceptable else REJECT_KEYS)
        if key in _QUIT:
            return False
        if key == "s":
            session.skip()
            return True
        if key == "d":
            out(
                "\n".join(render_outcome(outcome, palette=palette, cap=10**9)) + "\n",
                colour=palette.color,
            )
            continue
        if key in ("a", "A", "p") and not acceptable:
            out(
                f"a {outcome.verdict.value} result cannot be accepted: [r]eject its run, or "
                f"make a new one (silo-regress run {outcome.task})\n"
            )
            continue
        if key in ("a", "A"):
            session.accept_all = key == "A"
            if _settled(session.accept(outcome)):
                return True
            continue
        if key == "p":
            pointers = _choose_paths(outcome, palette)
            if not pointers:
                out("no paths chosen\n")
                continue
            if not _confirm_mixture(outcome, pointers, palette):
                out("not accepted; choose other paths, or another key\n")
                continue
            if _settled(session.accept(outcome, pointers)):
                return True
            continue
        if key == "r":
            if _settled(session.reject(outcome)):
                return True
            continue
        if key == "u":
            _print_undo(session.undo(), current=outcome)
            continue
        out(f"unknown key {key!r}\n")


def _settled(event: Event) -> bool:
    """Print what happened; False when the item stays open (a refusal on a terminal)."""
    _print_event(event)
    return not _refused(event)


def _print_undo(event: object, *, current: Outcome) -> None:
    from silo_regress.commands.reviewing import Refused, Undone

    if isinstance(event, Refused):
        out(f"silo-regress: error: {event.message}\n")
    elif isinstance(event, Undone):
        done = event.outcome
        out(
            f"undid the accept of {done.task} {done.artifact}: restored {', '.join(event.restored)}"
        )
        out(f"; it comes back after {current.task} {current.artifact}\n")
    else:
        out("nothing to undo: no accept in this review yet\n")


def _would_record(session: Review, outcome: Outcome, palette: Palette) -> str:
    """A missing baseline: the behaviour accepting it would record, file by file."""
    from silo_regress.commands.reviewing import Refused
    from silo_regress.recording.recorder import FileState
    from silo_regress.render.recording import accepted_lines

    recording = session.preview(outcome)
    if isinstance(recording, Refused):
        return f"  accepting it would fail: {recording.message}\n"
    lines = ["  accepting records the whole task:"]
    for file in recording.files:
        if file.state is not FileState.UNCHANGED:
            lines.append(f"    {file.state.value} {file.path}")
            lines.extend(f"        {line}" for line in accepted_lines(file, palette))
    return "\n".join(lines) + "\n"


def _choose_paths(outcome: Outcome, palette: Palette) -> list[str]:
    """The pointers chosen; asks again until every word is one (empty: none chosen)."""
    from silo_regress.canon.jsondiff import show
    from silo_regress.canon.visible import capped

    changes = outcome.changes
    if not changes:
        out("this result has no JSON paths to choose from (a new baseline): accept it whole\n")
        return []
    for n, change in enumerate(changes, start=1):
        before, after = capped(show(change.baseline)), capped(show(change.run))
        out(f"  {n:>3}  {change.path or '/'}: {before} -> {after}\n")
    known = [change.path for change in changes]
    while True:
        out("paths to accept (numbers or JSON Pointers, space-separated; empty: none) > ")
        answer = sys.stdin.readline().split()
        pointers, bad = [], []
        for word in answer:
            if word.isascii() and word.isdigit() and 1 <= int(word) <= len(changes):
                pointers.append(changes[int(word) - 1].path)
            elif word.startswith("/") and _near(word, known):
                pointers.append(word)
            else:
                bad.append(word)
        if not bad:
            return pointers
        for word in bad:
            why = (
                "not a number from the list"
                if not word.startswith("/")
                else ("not a changed path, nor inside or around one")
            )
            out(
                palette.paint(f"{word!r}: {why}; nothing accepted yet, try again", "red") + "\n",
                colour=palette.color,
            )


def _near(pointer: str, known: list[str]) -> bool:
    """A pointer that is a changed path, holds one, or lies inside one."""
    return any(
        pointer == path or path.startswith(pointer + "/") or pointer.startswith(path + "/")
        for path in known
    )


def _confirm_mixture(outcome: Outcome, pointers: list[str], palette: Palette) -> bool:
    """Say, before writing, when the chosen paths leave scores no run produced; ask."""
    from silo_regress.canon.canonical import parse
    from silo_regress.canon.jsondiff import show
    from silo_regress.errors import InputError
    from silo_regress.recording.consistency import Side, introduced_contradictions, mixed_scores

    if outcome.baseline_text is None or outcome.run_text is None:
        return True
    try:
        baseline = parse(outcome.baseline_text, source="baseline")
        run = parse(outcome.run_text, source="run")
    except InputError:
        return True
    mixture = mixed_scores(baseline, run, pointers)
    broken = introduced_contradictions(baseline, run, pointers)
    if not mixture and not broken:
        return True
    lines = []
    if mixture:
        sides = {
            side: ", ".join(f"{t.pointer} {show(t.value)}" for t in mixture if t.side is side)
            for side in Side
        }
        lines.append(
            f"these paths leave {outcome.artifact} inconsistent: {sides[Side.RUN]} from the "
            f"run, but {sides[Side.BASELINE]} from the baseline; no run produced that"
        )
    # Name the fields that would contradict each other, not only where each came from.
    lines += [
        f"  {c.field} {show(c.value)} but {c.other} {show(c.other_value)}: {c.why}" for c in broken
    ]
    out(
        "".join(palette.paint(line, "yellow") + "\n" for line in lines),
        colour=palette.color,
    )
    return _key("write it anyway? [y/N]") in ("y", "Y")


def _closing(summary: ReviewSummary) -> str:
    counts = [
        f"accepted {summary.accepted}",
        f"rejected {summary.rejected}",
        f"skipped {summary.skipped}",
    ]
    if summary.failed:
        counts.append(f"failed {summary.failed}")
    if summary.unreviewed:
        counts.append(f"not reviewed {summary.unreviewed}")
    if summary.undone:
        counts.append(f"undone {summary.undone}")
    lines = ["", f"{summary.total} to review: " + ", ".join(counts)]
    if summary.files:
        lines.append("stage them with: git add " + " ".join(summary.files))
    if summary.rejected_runs:
        names = " ".join(summary.rejected_runs)
        lines.append(f"rejected runs are kept; put them back with: silo-regress restore {names}")
    if summary.unsettled:
        names = ", ".join(f"{o.task} {o.artifact} ({o.verdict.value})" for o in summary.unsettled)
        lines.append(f"not reviewable here (need a new run or a fix): {names}")
    return "\n".join(lines) + "\n"


_QUIT = ("q", "\x03", "\x04")  # q, and Ctrl-C / Ctrl-D as a raw terminal delivers them


def _key(prompt: str) -> str:
    """One key pressed at ``prompt``, echoed so the transcript shows what was chosen."""
    out(f"{prompt} > ")
    key = typer.getchar()
    out(key + "\n")
    return key
