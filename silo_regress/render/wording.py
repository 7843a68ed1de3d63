"""Behaviour notes in words: the one place that says what each typed note means in English.

Every renderer words notes through here. A word diff comes as segments
(:func:`phrase`), so each format marks removed and added words its own way (colour,
``<del>``/``<ins>``); :func:`word` is the plain-text form with ``[-removed-]`` and
``{+added+}``, :func:`word_sides` the form without markers (old -> new).

The escaping rule: every agent string in a note is escaped here, once, and no
renderer escapes a note's text again (they only shield it, which never doubles a
backslash). Values and check labels are spelled as JSON spells them, quotes
included, as in the canonical diff beside them (``"C:\\temp"``, ``\u001b``); the
pieces of a word diff, which stand unquoted, go through
:func:`~silo_regress.canon.visible.visible` (``C:\\temp``, ``\x1b``). Either way a
backslash shows doubled and an escape can only mean one character.
"""

from __future__ import annotations

from collections.abc import Iterable

from silo_regress.behaviour.notes import (
    BaselineRemoved,
    CallChanged,
    CallDropped,
    CallErrorChanged,
    CallInserted,
    CallsCounted,
    ChangesNothing,
    CheckAdded,
    CheckFieldChanged,
    CheckFlipped,
    CheckRemoved,
    ChecksReordered,
    CollectionChanged,
    CountChanged,
    FailedRequired,
    FieldChanged,
    FormatOnly,
    IdsChanged,
    MoreChanges,
    Note,
    OutputChanged,
    PassedChanged,
    Recorded,
    RewardMoved,
    ScalarChanged,
    ScalarsReordered,
    Segment,
    SegmentKind,
    ToolCountChanged,
    ToolPathRecorded,
    Transition,
    ValueChanged,
    ValuesChanged,
    Worded,
)
from silo_regress.behaviour.result import is_short
from silo_regress.canon.canonical import JsonValue
from silo_regress.canon.jsondiff import Missing, show
from silo_regress.canon.visible import capped, visible

ID_CAP = 12  # ids named per clause of a note; the rest as "and N more"
MARKERS = {
    SegmentKind.SAME: ("", ""),
    SegmentKind.REMOVED: ("[-", "-]"),
    SegmentKind.ADDED: ("{+", "+}"),
}


def phrase(note: Note, *, marked: bool = True) -> tuple[Segment, ...]:
    """The note as segments: plain words, and the removed and added words of a word diff.

    A word diff is clipped to its note's ``limit``; ``marked`` counts the plain-text
    markers (``[-`` ``-]`` ``{+`` ``+}``) against it, as the text report prints them.
    """
    if not (isinstance(note, OutputChanged) and note.words is not None):
        return (Segment(SegmentKind.SAME, capped(_sentence(note))),)
    budget = note.limit
    pieces = [Segment(s.kind, visible(s.text.replace("\n", "⏎"))) for s in note.words]
    width = sum(len(p.text) + _marker_width(p.kind, marked) for p in pieces)
    if width > budget:
        pieces = _clipped(pieces, budget - 1, marked=marked)
        pieces.append(Segment(SegmentKind.SAME, "…"))
    return (Segment(SegmentKind.SAME, _output_prefix(note)), *pieces)


def word(note: Note) -> str:
    """The note as one line of plain text, a word diff marked ``[-old-]{+new+}``."""
    return "".join(MARKERS[s.kind][0] + s.text + MARKERS[s.kind][1] for s in phrase(note))


def words(notes: Iterable[Note]) -> list[str]:
    return [word(note) for note in notes]


def word_sides(note: Note) -> str:
    """The note as one line without markers: a word diff as its two sides, old -> new."""
    segments = phrase(note, marked=False)
    if len(segments) == 1:
        return segments[0].text
    lead, rest = segments[0].text, segments[1:]
    before = "".join(s.text for s in rest if s.kind is not SegmentKind.ADDED)
    after = "".join(s.text for s in rest if s.kind is not SegmentKind.REMOVED)
    return f"{lead}{before} -> {after}"


def _marker_width(kind: SegmentKind, marked: bool) -> int:
    return len(MARKERS[kind][0]) + len(MARKERS[kind][1]) if marked else 0


def _clipped(pieces: list[Segment], budget: int, *, marked: bool) -> list[Segment]:
    """The segments that fit in ``budget`` characters, the last one cut short."""
    kept: list[Segment] = []
    for piece in pieces:
        room = budget - _marker_width(piece.kind, marked)
        if room <= 0:
            break
        if len(piece.text) > room:
            kept.append(Segment(piece.kind, piece.text[:room]))
            break
        kept.append(piece)
        budget = room - len(piece.text)
    return kept


def one_line(texts: Iterable[str], *, limit: int = 3) -> str:
    """The first ``limit`` worded notes joined, then how many more there are."""
    notes = list(texts)
    if not notes:
        return "no behavioural difference"
    head = "; ".join(notes[:limit])
    return head + (f"; +{len(notes) - limit} more" if len(notes) > limit else "")


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _output_prefix(note: OutputChanged) -> str:
    return "agentOutput changed: " if note.path == "/agentOutput" else f"{note.path}: "


def _label(label: str) -> str:
    """A check label as JSON spells it, quotes included: the diff below spells it so."""
    return show(label)


def _change(before: JsonValue | Missing, after: JsonValue | Missing) -> str:
    return f"{show(before)} -> {show(after)}"


def _pass_word(value: JsonValue | Missing) -> str:
    if isinstance(value, bool):
        return "passed" if value else "failed"
    return show(value)


def _id(value: JsonValue) -> str:
    return value if isinstance(value, str) else show(value)


def _transition(entry: Transition) -> str:
    return _change(entry.start, entry.end)


def dotted(pointer: str) -> str:
    """A JSON Pointer beneath a call's side as people write it: ``/items/0/id`` ->
    ``.items[0].id`` (an all-digit segment reads as an index)."""
    out = []
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        out.append(f"[{part}]" if part.isascii() and part.isdigit() else f".{part}")
    return "".join(out)


# Silo's state-diff kinds as verbs: "auditLog: now also adds AUD-0003". A gained id
# under "added" is one the run adds and the baseline did not; a lost one, one the
# run no longer adds (not one it removed).
_VERBS = {
    "added": "adds",
    "removed": "removes",
    "changed": "changes",
    "created": "creates",
    "updated": "updates",
    "deleted": "deletes",
}


def _ids_sentence(
    name: str, kind: str, gained: tuple[JsonValue, ...], lost: tuple[JsonValue, ...]
) -> str:
    verb = _VERBS.get(kind)
    if verb is None:
        parts = [f"+{_id(i)}" for i in gained] + [f"-{_id(i)}" for i in lost]
        return f"{name}.{kind}: {_capped_ids(parts) if parts else 'same ids, new order'}"
    if not gained and not lost:
        return f"{name}: {verb} the same ids in another order"
    clauses = []
    if lost:
        clauses.append(f"no longer {verb} {_capped_ids([_id(i) for i in lost])}")
    if gained:
        clauses.append(f"now also {verb} {_capped_ids([_id(i) for i in gained])}")
    return f"{name}: {'; '.join(clauses)}"


def _capped_ids(ids: list[str]) -> str:
    """``ID_CAP`` ids, then how many more: a 1,000-row state diff is one short line."""
    if len(ids) <= ID_CAP:
        return " ".join(ids)
    return f"{' '.join(ids[:ID_CAP])} and {len(ids) - ID_CAP} more"


def _sentence(note: Note) -> str:
    match note:
        case PassedChanged(baseline=b, run=r):
            if r is False:
                return "now FAILS (passed: true -> false)"
            if r is True:
                return "now passes (passed: false -> true)"
            return f"passed: {_change(b, r)}"
        case RewardMoved(baseline=b, run=r):
            return f"reward {_change(b, r)}"
        case CheckFlipped(label=label, baseline=b, run=r):
            return f"check {_label(label)} {_pass_word(b)} -> {_pass_word(r)}"
        case CheckFieldChanged(label=label, field=key, baseline=b, run=r):
            return f"check {_label(label)} {key} {_change(b, r)}"
        case CheckAdded(label=label, passed=passed):
            return f"check {_label(label)} added ({_pass_word(passed)})"
        case CheckRemoved(label=label):
            return f"check {_label(label)} removed"
        case ChecksReordered():
            return "checks reordered"
        case FieldChanged(field=key, baseline=b, run=r):
            return f"{key} {_change(b, r)}"
        case CountChanged(field=key, baseline=b, run=r):
            delta = note.delta
            return f"{key} {_change(b, r)}" + ("" if delta is None else f" ({delta:+d})")
        case OutputChanged(baseline=b, run=r, limit=limit):
            if isinstance(b, str) and isinstance(r, str) and is_short(b, r):
                return _output_prefix(note) + _change(b, r)
            return _output_prefix(note) + f"{capped(show(b), limit)} -> {capped(show(r), limit)}"
        case MoreChanges(scope=scope, count=count):
            return f"{scope}: {count} more changed values"
        case IdsChanged(collection=name, change=kind, gained=gained, lost=lost):
            return _ids_sentence(name, kind, gained, lost)
        case CollectionChanged(collection=name, change=kind, baseline=b, run=r):
            where = name if kind is None else f"{name}.{kind}"
            return f"{where}: {_change(b, r)}"
        case ScalarChanged(field=name, baseline=None, run=Transition() as new):
            return f"scalar {name} now changes: {_transition(new)}"
        case ScalarChanged(field=name, baseline=Transition() as old, run=None):
            return f"scalar {name} no longer changes (was {_transition(old)})"
        case ScalarChanged(field=name, baseline=Transition() as old, run=Transition() as new):
            return f"scalar {name}: {_transition(old)} became {_transition(new)}"
        case ScalarChanged(field=name):
            return f"scalar {name} changed"
        case ScalarsReordered():
            return "scalars reordered"
        case CallsCounted(baseline=b, run=r):
            return f"tool calls {b} -> {r} ({r - b:+d})"
        case ToolCountChanged(tool=tool, baseline=b, run=r):
            return f"{r - b:+d} {tool} ({b} -> {r} call{'s' * (r != 1)})"
        case CallChanged(call=n, tool=tool, side=side, path=path, baseline=b, run=r):
            return f"call {n} {tool}: {side}{dotted(path)} {_change(b, r)}"
        case CallErrorChanged(call=n, tool=tool, errors=True, code=code):
            return f"call {n} {tool} now errors" + (f" ({code})" if code else "")
        case CallErrorChanged(call=n, tool=tool, code=code):
            return f"call {n} {tool} no longer errors" + (f" (was {code})" if code else "")
        case CallInserted(call=n, tool=tool, code=code):
            return f"call {n} {tool} inserted" + (f" (errors: {code})" if code else "")
        case CallDropped(call=n, tool=tool, code=code):
            return f"baseline call {n} {tool} dropped" + (f" (it errored: {code})" if code else "")
        case ToolPathRecorded(calls=calls, errors=errors, as_of=as_of):
            lead = "as of here" if as_of else "recorded"
            tail = f", {errors} error{'s' * (errors != 1)}" if errors else ""
            return f"{lead}: {calls} tool call{'s' * (calls != 1)}{tail}"
        case ValueChanged(path=path, baseline=b, run=r):
            return f"{path or '/'}: {_change(b, r)}"
        case Recorded(passes=None):
            return "recorded"
        case Recorded(passes=passes, reward=reward, as_of=as_of):
            lead = "as of here" if as_of else "recorded"
            return f"{lead}: {'passes' if passes else 'FAILS'}, reward {show(reward)}"
        case FailedRequired(labels=labels):
            return "failed required: " + ", ".join(_label(label) for label in labels)
        case ChangesNothing(as_of=as_of):
            return f"{'as of here' if as_of else 'recorded'}: changes nothing"
        case ValuesChanged():
            return "values changed"
        case BaselineRemoved():
            return "baseline removed"
        case FormatOnly():
            return "same values, other bytes (format only)"
        case Worded(text=text):
            return text
    raise TypeError(f"no wording for {note!r}")


__all__ = ["MARKERS", "Segment", "clip", "one_line", "phrase", "word", "word_sides", "words"]
