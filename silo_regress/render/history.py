"""Baselines across git history for people and pull requests: text, Markdown, JSON.

Renders :class:`~silo_regress.reports.history.SourceDiff` (``diff --from``) and
:class:`~silo_regress.reports.history.TaskLog` (``log``). Behaviour notes are printed in
full: check labels, ids and task refs are never truncated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from silo_regress.behaviour.codec import note_json
from silo_regress.behaviour.notes import Note
from silo_regress.render.machine import dumps
from silo_regress.render.markdown import cell, code, note_markdown
from silo_regress.render.text import Palette
from silo_regress.render.wording import one_line, word, words
from silo_regress.reports.history import (
    ArtifactChange,
    ChangeKind,
    LogEntry,
    PassCount,
    SourceDiff,
    TallyMove,
    TaskChange,
    TaskLog,
)
from silo_regress.reports.schema import change_json

_KIND_STYLE = {
    ChangeKind.ADDED: ("green",),
    ChangeKind.REMOVED: ("red",),
    ChangeKind.CHANGED: ("yellow",),
    ChangeKind.UNREADABLE: ("red",),
}


def _count(side: PassCount | None) -> str:
    return "none" if side is None else f"{side.passed}/{side.rollouts}"


def _rate(side: PassCount) -> str:
    return f"{100 * side.passed / side.rollouts:.0f}%" if side.rollouts else "no rollouts"


def tally_words(move: TallyMove | None) -> list[str]:
    """A tally's move as pass counts and rates: ``tally: 9/10 -> 6/10 passed (90% -> 60%)``,
    then each check whose count moved."""
    if move is None:
        return []
    before, after = move.before, move.after
    if before is not None and after is not None:
        head = (
            f"tally: {_count(before)} -> {_count(after)} passed ({_rate(before)} -> {_rate(after)})"
        )
    elif after is not None:
        head = f"tally: {_count(after)} passed ({_rate(after)})"
    elif before is not None:
        head = f"tally removed (was {_count(before)} passed)"
    else:
        return []
    checks = [
        f"check {c.label!r}: {_count(c.before)} -> {_count(c.after)} passed" for c in move.checks
    ]
    return [head, *checks]


def _tally_json(move: TallyMove | None) -> dict[str, Any] | None:
    if move is None:
        return None

    def side(count: PassCount | None) -> dict[str, int] | None:
        return None if count is None else {"passed": count.passed, "rollouts": count.rollouts}

    return {
        "before": side(move.before),
        "after": side(move.after),
        "checks": [
            {"label": c.label, "before": side(c.before), "after": side(c.after)}
            for c in move.checks
        ],
    }


def summary_of(
    changes: Iterable[ArtifactChange],
    *,
    each: int = 3,
    wording: Callable[[Note], str] = word,
    plain: Callable[[str], str] = str,
) -> str:
    """One line for a task: the first notes of every artifact, then a count of the rest.

    A result.json change has many notes (check flips, then their counts), so a
    plain cut would never reach what state-diff.json says the agent did.
    ``wording`` words a note, ``plain`` escapes other text, for the format at hand.
    """
    head: list[str] = []
    rest: list[str] = []
    for change in changes:
        notes = [plain(w) for w in tally_words(change.tally)]
        notes += [wording(n) for n in change.behaviour] or (
            [plain(change.detail)] if change.detail and not notes else []
        )
        head.extend(notes[:each])
        rest.extend(notes[each:])
    return one_line(head + rest, limit=min(max(len(head), 1), 5))


def render_source_diff(diff: SourceDiff, output_format: str, *, color: bool = False) -> str:
    if output_format == "markdown":
        return source_diff_markdown(diff)
    if output_format == "json":
        return dumps(source_diff_json(diff))
    return source_diff_text(diff, color=color)


def render_log(log: TaskLog, output_format: str, *, color: bool = False) -> str:
    if output_format == "markdown":
        return log_markdown(log)
    if output_format == "json":
        return dumps(log_json(log))
    return log_text(log, color=color)


# --- diff --from ----------------------------------------------------------------


def _headline(diff: SourceDiff) -> str:
    count = len(diff.tasks)
    changed = f"{count} task{'s' * (count != 1)} changed" if count else "no behaviour changes"
    return f"{changed} from {diff.before} to {diff.after}; {diff.unchanged} unchanged"


def source_diff_text(diff: SourceDiff, *, color: bool = False) -> str:
    palette = Palette(color)
    out: list[str] = []
    for task in diff.tasks:
        for change in task.artifacts:
            kind = palette.paint(change.kind.value, *_KIND_STYLE.get(change.kind, ()))
            out.append(f"{palette.paint(str(task.task), 'bold')}  {change.label}  {kind}")
            out.extend(f"  {side + ':':<5} {name}" for side, name in _sides(change) if name)
            if change.detail:
                out.append(f"  {change.detail}")
            out.extend(f"  - {word(note)}" for note in change.behaviour)
            out.extend(f"  - {line}" for line in tally_words(change.tally))
        out.append("")
    out.append(_headline(diff))
    return "\n".join(out) + "\n"


def _sides(change: ArtifactChange) -> tuple[tuple[str, str | None], ...]:
    """Where each side's bytes were read: ``from``, ``HEAD~1:baselines/X.json``."""
    return (("from", change.before), ("to", change.after))


def _notes(change: ArtifactChange) -> str:
    notes = [cell(w) for w in tally_words(change.tally)]
    notes += [note_markdown(n) for n in change.behaviour]
    return "<br>".join(notes + ([cell(change.detail)] if change.detail else []))


def source_diff_markdown(diff: SourceDiff) -> str:
    out = [f"### Behaviour changes: {code(diff.before)} → {code(diff.after)}", ""]
    if diff.tasks:
        out += [
            "| Task | Artifact | Change | Files | Behaviour |",
            "| --- | --- | --- | --- | --- |",
        ]
        for task in diff.tasks:
            for change in task.artifacts:
                files = "<br>".join(
                    f"{side}: {code(name.replace('|', chr(92) + '|'))}"
                    for side, name in _sides(change)
                    if name
                )
                out.append(
                    f"| {code(str(task.task))} | {code(change.label)} "
                    f"| {change.kind.value} | {files} | {_notes(change)} |"
                )
        out.append("")
    headline = _headline(diff)
    out.append(headline[:1].upper() + headline[1:] + ".")
    return "\n".join(out) + "\n"


def _task_json(task: TaskChange) -> dict[str, Any]:
    return {
        "task": str(task.task),
        "summary": summary_of(task.artifacts),
        "artifacts": [
            {
                "artifact": c.artifact,
                "variant": c.variant,
                "change": c.kind.value,
                "behaviour": words(c.behaviour),
                "notes": [note_json(n) for n in c.behaviour],
                "detail": c.detail,
                "from": c.before,
                "to": c.after,
                "changes": [change_json(x) for x in c.changes],
                "tally": _tally_json(c.tally),
            }
            for c in task.artifacts
        ],
    }


def source_diff_json(diff: SourceDiff) -> dict[str, Any]:
    return {
        "version": 1,
        "from": diff.before,
        "to": diff.after,
        "unchanged": diff.unchanged,
        "tasks": [_task_json(t) for t in diff.tasks],
    }


# --- log ------------------------------------------------------------------------


def _log_summary(entry: LogEntry, *, markdown: bool = False) -> str:
    summary = (
        summary_of(entry.artifacts, wording=note_markdown, plain=cell)
        if markdown
        else summary_of(entry.artifacts)
    )
    if entry.commit.boundary:
        return "history stops here (shallow clone); " + summary
    return summary


def _stop_note(log: TaskLog) -> str | None:
    if log.shallow_edge is None:
        return None
    return (
        f"shallow clone: history stops at {log.shallow_edge}; "
        "`git fetch --unshallow` fetches the rest"
    )


def _visible(text: str) -> str:
    """``text`` with control characters escaped: a commit subject is anyone's bytes,
    and an ESC in it would drive the reader's terminal."""
    from silo_regress.canon.visible import visible

    return visible(text)


def log_text(log: TaskLog, *, color: bool = False) -> str:
    palette = Palette(color)
    out = [f"{log.task}: {', '.join(log.paths)}"]
    if not log.entries:
        out.append("no commit has changed these baselines yet")
    rows = [
        (
            e.commit.short,
            e.commit.day.isoformat(),
            _visible(e.commit.author),
            _visible(e.commit.subject),
        )
        for e in log.entries
    ]
    widths = [max((len(r[i]) for r in rows), default=0) for i in range(4)]
    for row, entry in zip(rows, log.entries, strict=True):
        cells = [c.ljust(widths[i]) for i, c in enumerate(row)]
        cells[0] = palette.paint(cells[0], "yellow")
        out.append("  ".join(cells) + "  " + _log_summary(entry))
    note = _stop_note(log)
    if note:
        out.append(note)
    return "\n".join(out) + "\n"


def log_markdown(log: TaskLog) -> str:
    out = [f"### Behaviour history of {code(str(log.task))}", ""]
    if log.entries:
        out += [
            "| Commit | Date | Author | Subject | Behaviour |",
            "| --- | --- | --- | --- | --- |",
        ]
        for entry in log.entries:
            c = entry.commit
            out.append(
                f"| {code(c.short)} | {c.day.isoformat()} | {cell(c.author)} "
                f"| {cell(c.subject)} | {_log_summary(entry, markdown=True)} |"
            )
    else:
        out.append("No commit has changed these baselines yet.")
    note = _stop_note(log)
    if note:
        out += ["", cell(note)]
    return "\n".join(out) + "\n"


def log_json(log: TaskLog) -> dict[str, Any]:
    return {
        "version": 1,
        "task": str(log.task),
        "paths": list(log.paths),
        "shallowEdge": log.shallow_edge,
        "commits": [
            {
                "commit": e.commit.sha,
                "short": e.commit.short,
                "date": e.commit.day.isoformat(),
                "author": e.commit.author,
                "subject": e.commit.subject,
                "boundary": e.commit.boundary,
                "summary": _log_summary(e),
                "artifacts": _task_json(TaskChange(log.task, e.artifacts))["artifacts"],
            }
            for e in log.entries
        ],
    }
