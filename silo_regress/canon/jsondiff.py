"""The structural diff of two JSON values, and following a JSON Pointer into one.

Pointer syntax (formatting, splitting, path patterns) is :mod:`silo_regress.canon.pointer`,
which sits below the serializer; this module is where values are walked: one
:func:`child` step that every reader of a pointer uses, and :func:`diff_values`.
"""

from __future__ import annotations

import enum
import itertools
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson

from silo_regress.canon.canonical import JsonValue, format_number, serialize
from silo_regress.canon.pointer import Part, format_pointer


class Missing(enum.Enum):
    """The side of a change where the path does not exist (not JSON ``null``)."""

    MISSING = "missing"

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Final = Missing.MISSING


@dataclass(frozen=True)
class Change:
    """One JSON Pointer whose value differs; ``MISSING`` marks an absent side."""

    path: str
    baseline: JsonValue | Missing = MISSING
    run: JsonValue | Missing = MISSING


# --- following a pointer ---------------------------------------------------------


def array_index(part: Part) -> int | None:
    """The array index ``part`` names (RFC 6901: ``0`` or no leading zero), else None."""
    if isinstance(part, int):
        return part if part >= 0 else None
    if not part.isdigit() or not part.isascii() or (part != "0" and part.startswith("0")):
        return None
    return int(part)


def child(node: Any, part: Part) -> JsonValue | Missing:
    """The member ``part`` names in ``node``; ``MISSING`` when there is none."""
    if isinstance(node, dict):
        key = part if isinstance(part, str) else str(part)
        found: JsonValue | Missing = node.get(key, MISSING)
        return found
    if isinstance(node, list):
        index = array_index(part)
        if index is None or index >= len(node):
            return MISSING
        return node[index]  # type: ignore[no-any-return]
    return MISSING


def resolve(value: JsonValue, parts: Sequence[Part]) -> JsonValue | Missing:
    """The value at ``parts`` (split JSON Pointer) in ``value``, or ``MISSING``."""
    node: JsonValue | Missing = value
    for part in parts:
        if node is MISSING:
            return MISSING
        node = child(node, part)
    return node


# --- the structural diff -----------------------------------------------------------


def diff_values(before: Any, after: Any, parts: tuple[Part, ...] = ()) -> list[Change]:
    """Every JSON Pointer where ``before`` and ``after`` differ, in document order."""
    out: list[Change] = []
    _diff(before, after, parts, out)
    return out


def same_leaf(a: Any, b: Any) -> bool:
    """JSON equality of two scalars: ``1`` and ``1.0`` are equal, ``true`` and ``1`` not."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return _number(a) == _number(b)
    return type(a) is type(b) and bool(a == b)


def show(value: JsonValue | Missing) -> str:
    """A short, exact rendering of a JSON value on one line."""
    if value is MISSING:
        return "(absent)"
    if isinstance(value, str | int | float | bool) or value is None:
        return serialize(value).decode("utf-8").rstrip("\n")
    # One line per member in canonical form (newlines inside strings are escaped).
    lines = serialize(value).decode("utf-8").rstrip("\n").split("\n")
    return "".join(line.strip(" ") + (" " if line.endswith(",") else "") for line in lines)


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else format_number(value)


def _identical(a: Any, b: Any) -> bool:
    """True when two containers hold the same JSON, checked at C speed.

    ``==`` alone calls ``true`` and ``1`` equal; orjson's bytes tell them apart.
    False means "look closer", never "different".
    """
    if type(a) is not type(b) or a != b:
        return False
    try:
        return bool(orjson.dumps(a) == orjson.dumps(b))
    except (orjson.JSONEncodeError, TypeError):  # integers beyond 64 bits
        return False


def _suspects(a: list[Any], b: list[Any]) -> Iterable[int]:
    """Indices below both lengths where the items may differ; linear, mostly in C."""
    count = min(len(a), len(b))
    same_type = map(operator.is_, map(type, a), map(type, b))
    same = list(map(operator.and_, map(operator.eq, a, b), same_type))
    containers = map(_CONTAINERS.__contains__, map(type, a))
    maybe_hidden = itertools.compress(range(count), map(operator.and_, same, containers))
    differing = itertools.compress(range(count), map(operator.not_, same))
    hidden = [i for i in maybe_hidden if not _identical(a[i], b[i])]
    return sorted([*differing, *hidden]) if hidden else differing


_CONTAINERS = frozenset({dict, list})


def _diff(a: Any, b: Any, parts: tuple[Part, ...], out: list[Change]) -> None:
    if isinstance(a, dict | list) and _identical(a, b):
        return
    if isinstance(a, dict) and isinstance(b, dict):
        keys = sorted(set(a) | set(b), key=lambda k: k.encode("utf-16-be", "surrogatepass"))
        for key in keys:
            path = (*parts, key)
            if key not in b:
                out.append(Change(format_pointer(path), baseline=a[key]))
            elif key not in a:
                out.append(Change(format_pointer(path), run=b[key]))
            else:
                _diff(a[key], b[key], path, out)
    elif isinstance(a, list) and isinstance(b, list):
        for i in _suspects(a, b):
            _diff(a[i], b[i], (*parts, i), out)
        for i in range(min(len(a), len(b)), max(len(a), len(b))):
            path = (*parts, i)
            if i >= len(b):
                out.append(Change(format_pointer(path), baseline=a[i]))
            else:
                out.append(Change(format_pointer(path), run=b[i]))
    elif isinstance(a, dict | list) or isinstance(b, dict | list):
        if a != b:
            out.append(Change(format_pointer(parts), baseline=a, run=b))
    elif not same_leaf(a, b):
        out.append(Change(format_pointer(parts), baseline=a, run=b))
