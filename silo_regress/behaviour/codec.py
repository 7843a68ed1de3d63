"""Behaviour notes to and from JSON data: the ``notes`` of a JSON report.

Each note is an object with its ``kind`` and its fields in camelCase; an absent
side (``MISSING``) is left out, as in ``changes``. :func:`note_from_json` reads
what :func:`note_json` wrote, so a merged report words its notes like a fresh one.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from typing import Any

from silo_regress.behaviour.notes import Note, Segment, SegmentKind, Transition
from silo_regress.canon.jsondiff import MISSING

_BY_KIND: dict[str, type[Any]] = {
    cls.KIND: cls
    for cls in typing.get_args(Note)  # every member of the union
}

# Field name -> its annotation. The annotations are strings (postponed evaluation);
# their text is enough to tell a transition, segments, a list or a scalar apart.
_HINTS = {cls: {f.name: str(f.type) for f in dataclasses.fields(cls)} for cls in _BY_KIND.values()}


class NoteError(ValueError):
    """A note in a JSON report that this version cannot read; the message says why."""


def note_json(note: Note) -> dict[str, Any]:
    item: dict[str, Any] = {"kind": note.KIND}
    for field in dataclasses.fields(note):
        value = getattr(note, field.name)
        if value is MISSING:
            continue
        item[_camel(field.name)] = _encode(value)
    return item


def note_from_json(item: Any) -> Note:
    """The note ``item`` describes; :class:`NoteError` when it is not one."""
    if not isinstance(item, dict) or not isinstance(item.get("kind"), str):
        raise NoteError("must be an object with a string 'kind'")
    cls = _BY_KIND.get(item["kind"])
    if cls is None:
        raise NoteError(f"kind {item['kind']!r} is not a behaviour note this version knows")
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        name = _camel(field.name)
        hint = _HINTS[cls][field.name]
        if name in item:
            values[field.name] = _decode(item[name], hint, name)
        elif _accepts_missing(hint):
            values[field.name] = MISSING
        elif field.default is dataclasses.MISSING:
            raise NoteError(f"{item['kind']}: '{name}' is missing")
    note: Note = cls(**values)
    return note


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _encode(value: Any) -> Any:
    if isinstance(value, Transition):
        return {
            key: _encode(member)
            for key, member in (("from", value.start), ("to", value.end))
            if member is not MISSING
        }
    if isinstance(value, Segment):
        return {"kind": value.kind.value, "text": value.text}
    if isinstance(value, tuple):
        return [_encode(member) for member in value]
    return value


def _accepts_missing(hint: str) -> bool:
    return "Missing" in hint


def _decode(value: Any, hint: str, name: str) -> Any:
    if "Transition" in hint:
        if value is None and "None" in hint:
            return None
        if not isinstance(value, dict):
            raise NoteError(f"'{name}' must be an object with 'from' and 'to'")
        return Transition(value.get("from", MISSING), value.get("to", MISSING))
    if "Segment" in hint:
        if value is None:
            return None
        if not isinstance(value, list):
            raise NoteError(f"'{name}' must be a list of segments")
        return tuple(_segment(member, name) for member in value)
    if hint.startswith("tuple["):
        if not isinstance(value, list):
            raise NoteError(f"'{name}' must be a list")
        if hint == "tuple[str, ...]" and not all(isinstance(v, str) for v in value):
            raise NoteError(f"'{name}' must be a list of strings")
        return tuple(value)
    allowed = hint.split(" | ")
    if set(allowed) <= set(_SCALARS) and not any(_SCALARS[a](value) for a in allowed):
        raise NoteError(f"'{name}' must be {' or '.join(allowed)}")
    return value


_SCALARS: dict[str, Callable[[Any], bool]] = {
    "str": lambda v: isinstance(v, str),
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "bool": lambda v: isinstance(v, bool),
    "None": lambda v: v is None,
}


def _segment(value: Any, name: str) -> Segment:
    if (
        not isinstance(value, dict)
        or value.get("kind") not in {k.value for k in SegmentKind}
        or not isinstance(value.get("text"), str)
    ):
        raise NoteError(f"'{name}' holds a segment that is not {{'kind', 'text'}}")
    return Segment(SegmentKind(value["kind"]), value["text"])
