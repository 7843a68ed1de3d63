"""`silo-regress review`: walk the changed results on a terminal and accept them one by one."""

from __future__ import annotations

import os
import sys
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated

import typer

from silo_regress.cli.app import app
from silo_regress.cli.common import Globals, handled, out, parse_refs, setup, working_tree
from silo_regress.errors import UsageError

if TYPE_CHECKING:
    from silo_regress.judging.outcome import Outcome
    from silo_regress.project.config import Config
    from silo_regress.recording.candidates import Candidate
    from silo_regress.recording.undoing import Undo
    from silo_regress.render.text import Palette
    from silo_regress.runs.index import RunIndex
    from silo_regress.store.baselines import BaselineStore

_REJECT_ONLY = ("stale-run", "incomplete-run")  # verdicts a review may reject, never accept
SHORT_DIFF = 40  # lines of diff shown before [d] shows it all
KEYS = "[a]ccept  accept [p]aths  [r]eject run  [s]kip  accept [A]ll  [u]ndo  full [d]iff  [q]uit"
REJECT_KEYS = "[r]eject run  [s]kip  [u]ndo  full [d]iff  [q]uit"  # a run that cannot be accepted


@dataclass
class _Session:
    """What one review did so far: an accumulator, kept by the command only.

    Every item of the queue ends as exactly one of accepted, rejected, skipped or
    not reviewed (an undone accept puts its item back into the queue).
    """

    total: int
    accepted: list[tuple[Outcome, list[str]]] = field(default_factory=list)
    tallies: list[str] = field(default_factory=list)  # stats results accepted: tally paths
    rejected: list[Outcome] = field(default_factory=list)
    rejected_runs: list[str] = field(default_factory=list)
    skipped: int = 0
    failed: int = 0
    undone: int = 0
    undos: list[tuple[Outcome, Undo]] = field(default_factory=list)
    all_remaining: bool = False


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
    from silo_regress.judging.judge import check
    from silo_regress.recording.reviewing import review_queue
    from silo_regress.runs.cache import index_runs

    g, config = setup(ctx)
    if accept_all and reject:
        raise UsageError("--accept-all and --reject choose opposite things: give one")
    if reject and not refs:
        raise UsageError("--reject discards runs: name the tasks, e.g. review --reject TASK-001")
    scripted = accept_all or reject
    if not scripted and not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError(
            "review needs a terminal (stdin and stdout); without one, accept with "
            "`silo-regress review --accept-all [TASK...]` or discard the runs with "
            "`silo-regress review --reject TASK...`, or accept each with "
            "`silo-regress record baselines/TASK.ARTIFACT [--path POINTER]`"
        )
    index = index_runs(config.runs_dir)
    store = working_tree(config)
    from silo_regress.project.fingerprint import current_inputs

    # Judged as `check` judges: a stale run is offered for rejecting, never accepting.
    inputs = current_inputs(config, staged=False)
    report = check(config, index, store, parse_refs(refs), inputs=inputs)
    queue = review_queue(report, config=config)
    # A stale or crashed run cannot be accepted, but it can be rejected (discarded).
    rejectable = tuple(o for o in queue.unsettled if o.run_name and o.verdict in _REJECT_ONLY)
    items = queue.items if accept_all else queue.items + rejectable
    unsettled = tuple(o for o in queue.unsettled if o not in items)
    # Stats results: the candidate tallies `check --run --repeat M` kept (not --reject:
    # a tally is not a run to discard).
    tallies = [] if reject else _candidates(config, refs)
    if not items and not tallies:
        out("nothing to review: " + _unsettled(queue.unsettled) + "\n")
        return 0
    # Scripted, a refused accept is counted as failed and the rest go on.
    session = _Session(total=len(items) + len(tallies), all_remaining=accept_all)
    pending = deque(items)
    if scripted:
        while pending:
            outcome = pending.popleft()
            if reject:
                _reject(config, outcome, pending, session)
            else:
                _accept_item(config, store, index, outcome, pending, session, pointers=())
        for candidate in tallies:
            _accept_tally(config, store, index, candidate, session)
        out(_closing(session, unsettled=unsettled))
        return 0
    palette = _palette(g)
    while pending:
        outcome = pending.popleft()
        # The item's place among all of them: an undone accept comes back under its old
        # number, and items settled with another (a rejected run's) count as done.
        position = f"{len(items) - len(pending)}/{len(items)}"
        try:
            done = _ask(
                config, store, index, outcome, pending, session, palette=palette, position=position
            )
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: a write in flight was rolled back
            out("\ninterrupted\n")
            out(_closing(session, unsettled=unsettled))
            return 130
        if not done:  # quit: this item and the rest stay as they are
            out(_closing(session, unsettled=unsettled))
            return 0
    for n, candidate in enumerate(tallies, start=1):
        try:
            done = _ask_tally(config, store, index, candidate, session, n=n, of=len(tallies))
        except KeyboardInterrupt:  # the tally's write is one batch: done whole or not at all
            out("\ninterrupted\n")
            out(_closing(session, unsettled=unsettled))
            return 130
        if not done:
            break
    out(_closing(session, unsettled=unsettled))
    return 0


def _candidates(config: Config, refs: list[str] | None) -> list[Candidate]:
    if not config.gates_statistically:  # the stats code loads only for a stats project
        return []
    from silo_regress.recording.candidates import reviewable_candidates

    return reviewable_candidates(config.runs_dir, parse_refs(refs))


def _tally_line(candidate: Candidate) -> str:
    tally = candidate.tally
    return (
        f"{candidate.task} {candidate.tier}: the {tally.rollouts} rollouts of the last "
        f"check --run passed {tally.passed}"
    )


def _accept_tally(
    config: Config,
    store: BaselineStore,
    index: RunIndex,
    candidate: Candidate,
    session: _Session,
) -> bool:
    """Write the candidate tally as the task's baseline tally; False when refused."""
    from silo_regress.errors import SiloRegressError
    from silo_regress.recording.candidates import accept_candidate

    try:
        accepted = accept_candidate(
            store, index, candidate, runs_dir=config.runs_dir, environment=config.environment
        )
    except SiloRegressError as exc:
        out(f"silo-regress: error: {exc.message}\n")
        session.failed += 1
        return False
    was = f"{accepted.before.passed}/{accepted.before.rollouts}" if accepted.before else "none"
    out(
        f"accepted {accepted.path} from {len(candidate.runs)} rollouts: "
        f"{was} -> {accepted.after.passed}/{accepted.after.rollouts} passed\n"
    )
    session.tallies.append(accepted.path)
    return True


def _ask_tally(
    config: Config,
    store: BaselineStore,
    index: RunIndex,
    candidate: Candidate,
    session: _Session,
    *,
    n: int,
    of: int,
) -> bool:
    """Offer one stats result; False when the user quits."""
    out(f"\n[tally {n}/{of}] {_tally_line(candidate)}\n")
    while True:
        key = _key("[a]ccept its tally  [s]kip  [q]uit")
        if key in _QUIT:
            return False
        if key == "s":
            session.skipped += 1
            return True
        if key == "a":
            if not _accept_tally(config, store, index, candidate, session):
                session.failed -= 1  # on a terminal a refused accept stays open: skip or quit
                continue
            return True
        out(f"unknown key {key!r}\n")


def _palette(g: Globals) -> Palette:
    from silo_regress.render.text import Palette

    return Palette(g.use_color())


def _unsettled(unsettled: tuple[Outcome, ...]) -> str:
    if not unsettled:
        return "every result matches its baseline"
    names = ", ".join(f"{o.task} {o.artifact} ({o.verdict.value})" for o in unsettled)
    return f"no changed results; these need a new run or a fix first: {names}"


def _ask(
    config: Config,
    store: BaselineStore,
    index: RunIndex,
    outcome: Outcome,
    pending: deque[Outcome],
    session: _Session,
    *,
    palette: Palette,
    position: str,
) -> bool:
    """Show one result and act on keys until it is settled; False when the user quits."""
    from silo_regress.judging.outcome import Verdict
    from silo_regress.render.text import render_outcome

    acceptable = outcome.verdict.value not in _REJECT_ONLY
    if session.all_remaining:
        if acceptable:
            _accept_item(config, store, index, outcome, pending, session, pointers=())
        else:
            out(
                f"skipped {outcome.task} {outcome.artifact} ({outcome.verdict.value}): "
                "a run that cannot be accepted\n"
            )
            session.skipped += 1
        return True
    direction = outcome.direction.value if outcome.direction else outcome.verdict.value
    out(f"\n{palette.paint(f'[{position}] {direction}', 'bold')}\n", colour=palette.color)
    out(
        "\n".join(render_outcome(outcome, palette=palette, cap=SHORT_DIFF)) + "\n",
        colour=palette.color,
    )
    if outcome.verdict is Verdict.MISSING_BASELINE:
        out(_would_record(config, store, index, outcome, palette), colour=palette.color)
    while True:
        key = _key(KEYS if acceptable else REJECT_KEYS)
        if key in _QUIT:
            return False
        if key == "s":
            session.skipped += 1
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
            session.all_remaining = key == "A"
            if _accept_item(config, store, index, outcome, pending, session, pointers=()):
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
            if _accept_item(config, store, index, outcome, pending, session, pointers=pointers):
                return True
            continue
        if key == "r":
            if _reject(config, outcome, pending, session):
                return True
            continue
        if key == "u":
            _undo_last(store, pending, session, current=outcome)
            continue
        out(f"unknown key {key!r}\n")


def _would_record(
    config: Config, store: BaselineStore, index: RunIndex, outcome: Outcome, palette: Palette
) -> str:
    """A missing baseline: the behaviour accepting it would record, file by file."""
    from silo_regress.errors import SiloRegressError
    from silo_regress.recording.recorder import FileState
    from silo_regress.recording.reviewing import preview
    from silo_regress.render.recording import accepted_lines

    try:
        recording = preview(config, store, index, outcome)
    except SiloRegressError as exc:
        return f"  accepting it would fail: {exc.message}\n"
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


def _accept_item(
    config: Config,
    store: BaselineStore,
    index: RunIndex,
    outcome: Outcome,
    pending: deque[Outcome],
    session: _Session,
    *,
    pointers: tuple[str, ...] | list[str],
) -> bool:
    """Accept one item; False (the item stays open) when the accept was refused."""
    from silo_regress.errors import SiloRegressError
    from silo_regress.judging.outcome import Verdict
    from silo_regress.recording.recorder import FileState
    from silo_regress.recording.undoing import accept_undoably
    from silo_regress.render.recording import accepted_lines
    from silo_regress.render.text import Palette

    try:
        recording, undo = accept_undoably(config, store, index, outcome, pointers=pointers)
    except SiloRegressError as exc:  # one refused accept does not end the review
        out(f"silo-regress: error: {exc.message}\n")
        if session.all_remaining or not sys.stdin.isatty():
            session.failed += 1  # accept-all goes on; the item is counted, not lost
            return True
        return False
    written = []
    for file in recording.files:
        if file.state is FileState.UNCHANGED:
            continue
        what = f" (paths {' '.join(pointers)})" if pointers else ""
        out(f"accepted {file.path}{what} from run {recording.run.name}\n")
        out("".join(f"    {line}\n" for line in accepted_lines(file, Palette(False))))
        written.append(file.path)
    out("".join(f"removed {path} (a variant the accept replaced)\n" for path in recording.removed))
    session.accepted.append((outcome, written))
    session.undos.append((outcome, undo))
    if outcome.verdict is Verdict.MISSING_BASELINE:
        # The whole task was recorded: its other new artifacts are accepted with it.
        same = [o for o in pending if o.task == outcome.task and o.verdict is outcome.verdict]
        for other in same:
            pending.remove(other)
            session.accepted.append((other, []))
    return True


def _reject(config: Config, outcome: Outcome, pending: deque[Outcome], session: _Session) -> bool:
    """Discard the item's run; every other item judged from that run goes with it."""
    from silo_regress.errors import SiloRegressError
    from silo_regress.runs.discards import discard_dir, move_out

    if not outcome.run_name:
        out("silo-regress: error: this result has no run to reject\n")
        return False
    try:
        path = move_out(config.runs_dir, outcome.run_name, shown=config.relative(config.runs_dir))
    except KeyboardInterrupt:
        # The rename is one step: if it happened, the closing line must count it.
        if os.path.isdir(discard_dir(config.runs_dir) / outcome.run_name):
            _settle_rejected(outcome, pending, session)
        raise
    except SiloRegressError as exc:
        out(f"silo-regress: error: {exc.message}\n")
        if not sys.stdin.isatty():
            session.failed += 1
            return True
        return False
    out(
        f"rejected run {outcome.run_name} ({outcome.task}): moved to {config.relative(path)}; "
        f"`silo-regress restore {outcome.run_name}` puts it back\n"
    )
    _settle_rejected(outcome, pending, session)
    return True


def _settle_rejected(outcome: Outcome, pending: deque[Outcome], session: _Session) -> None:
    """Count the item and every other item judged from its run as rejected."""
    session.rejected.append(outcome)
    session.rejected_runs.append(outcome.run_name or "")
    for other in [o for o in pending if o.run_name == outcome.run_name]:
        pending.remove(other)
        session.rejected.append(other)


def _undo_last(
    store: BaselineStore, pending: deque[Outcome], session: _Session, *, current: Outcome
) -> None:
    """Put back the bytes the last accept replaced; its item comes back after this one."""
    from silo_regress.errors import SiloRegressError
    from silo_regress.recording.undoing import undo

    if not session.undos:
        out("nothing to undo: no accept in this review yet\n")
        return
    outcome, last = session.undos[-1]
    try:
        restored = undo(store, last)
    except SiloRegressError as exc:
        out(f"silo-regress: error: {exc.message}\n")
        return
    session.undos.pop()
    # The accept (and the items it settled with it) are open again.
    back = [item for item, _ in session.accepted if item.task == outcome.task]
    back = back[back.index(outcome) :] if outcome in back else [outcome]
    session.accepted = [(o, w) for o, w in session.accepted if not any(o is b for b in back)]
    session.undone += 1
    for item in reversed(back):
        pending.appendleft(item)
    out(f"undid the accept of {outcome.task} {outcome.artifact}: restored {', '.join(restored)}")
    out(f"; it comes back after {current.task} {current.artifact}\n")


def _closing(session: _Session, *, unsettled: tuple[Outcome, ...]) -> str:
    accepted = len(session.accepted) + len(session.tallies)
    # Whatever was not settled (quit, Ctrl-C) was not reviewed: never "skipped".
    settled = accepted + len(session.rejected) + session.skipped + session.failed
    unreviewed = session.total - settled
    counts = [
        f"accepted {accepted}",
        f"rejected {len(session.rejected)}",
        f"skipped {session.skipped}",
    ]
    if session.failed:
        counts.append(f"failed {session.failed}")
    if unreviewed:
        counts.append(f"not reviewed {unreviewed}")
    if session.undone:
        counts.append(f"undone {session.undone}")
    lines = ["", f"{session.total} to review: " + ", ".join(counts)]
    files = list(dict.fromkeys(path for _, written in session.accepted for path in written))
    files += session.tallies
    if files:
        lines.append("stage them with: git add " + " ".join(files))
    if session.rejected_runs:
        names = " ".join(dict.fromkeys(session.rejected_runs))
        lines.append(f"rejected runs are kept; put them back with: silo-regress restore {names}")
    if unsettled:
        names = ", ".join(f"{o.task} {o.artifact} ({o.verdict.value})" for o in unsettled)
        lines.append(f"not reviewable here (need a new run or a fix): {names}")
    return "\n".join(lines) + "\n"


_QUIT = ("q", "\x03", "\x04")  # q, and Ctrl-C / Ctrl-D as a raw terminal delivers them


def _key(prompt: str) -> str:
    """One key pressed at ``prompt``, echoed so the transcript shows what was chosen."""
    out(f"{prompt} > ")
    key = typer.getchar()
    out(key + "\n")
    return key
