"""The behaviour profile of ``state-diff.json``: record ids per collection, world scalars."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable
from typing import Any

from silo_regress.behaviour.generic import value_notes
from silo_regress.behaviour.notes import (
    ChangesNothing,
    CollectionChanged,
    IdsChanged,
    Note,
    ScalarChanged,
    ScalarsReordered,
    Transition,
)
from silo_regress.canon.jsondiff import MISSING

ARTIFACT = "state-diff.json"
# What a new state diff is read against: a rollout that changed nothing.
UNTOUCHED: dict[str, Any] = {"scalars": [], "collections": {}}


def compare(before: Any, after: Any) -> tuple[Note, ...] | None:
    """The notes for two state diffs, or None when they are not both objects."""
    if not (isinstance(before, dict) and isinstance(after, dict)):
        return None
    a, b = before, after
    notes: list[Note] = []
    ca, cb = _as_dict(a.get("collections")), _as_dict(b.get("collections"))
    for name in sorted(set(ca) | set(cb)):
        old, new = ca.get(name, {}), cb.get(name, {})
        if not isinstance(old, dict) or not isinstance(new, dict):
            if old != new:
                notes.append(CollectionChanged(name, None, old, new))
            continue
        for kind in sorted(set(old) | set(new)):
            x, y = old.get(kind, []), new.get(kind, [])
            if x == y:
                continue
            if isinstance(x, list) and isinstance(y, list):
                gained, lost = gained_lost(x, y)
                notes.append(IdsChanged(name, kind, tuple(gained), tuple(lost)))
            else:
                notes.append(CollectionChanged(name, kind, x, y))
    notes.extend(_scalar_notes(a.get("scalars"), b.get("scalars")))
    notes.extend(
        value_notes(
            {k: v for k, v in a.items() if k not in {"collections", "scalars"}},
            {k: v for k, v in b.items() if k not in {"collections", "scalars"}},
        )
    )
    return tuple(notes)


def describe(value: Any) -> tuple[Note, ...] | None:
    """A new state diff: what the rollout changed, read against one that changed nothing."""
    notes = compare(UNTOUCHED, value)
    if notes is None:
        return None
    return notes or (ChangesNothing(),)


def gained_lost(before: list[Any], after: list[Any]) -> tuple[list[Any], list[Any]]:
    """Items only in ``after`` and only in ``before``, in their order; linear.

    A list of millions of ids usually changes in one place: the common start and
    end are skipped at C speed, and a few changed ids are looked up directly.
    """
    shorter = min(len(before), len(after))
    start = _common_prefix(before, after, shorter)
    end = _common_prefix(reversed(before), reversed(after), shorter - start)
    middle_before, middle_after = before[start : len(before) - end], after[start : len(after) - end]
    if len(middle_before) + len(middle_after) <= 32 and all(
        type(i) is str for i in (*middle_before, *middle_after)
    ):
        gained = [i for i in middle_after if i not in before]
        lost = [i for i in middle_before if i not in after]
        return list(dict.fromkeys(gained)), list(dict.fromkeys(lost))
    try:  # a set alone would call true and 1 the same id: tag them where they occur
        old, new = set(before), set(after)
        if old & _BOOLISH or new & _BOOLISH:
            old = {(type(i) is bool, i) for i in before}
            new = {(type(i) is bool, i) for i in after}
            return (
                [i for i in after if (type(i) is bool, i) not in old],
                [i for i in before if (type(i) is bool, i) not in new],
            )
    except TypeError:  # objects in the list: compare them one by one
        return [i for i in after if i not in before], [i for i in before if i not in after]
    return _in_order(new - old, after), _in_order(old - new, before)


def _common_prefix(a: Iterable[Any], b: Iterable[Any], length: int) -> int:
    """How many of the first ``length`` items ``a`` and ``b`` share, counted in C."""
    a, b = itertools.tee(a), itertools.tee(b)
    # Compared with their types too: true and 1 are equal to Python, not to JSON.
    unequal = map(operator.ne, a[0], b[0])
    retyped = map(operator.is_not, map(type, a[1]), map(type, b[1]))
    differs = itertools.islice(map(operator.or_, unequal, retyped), max(length, 0))
    first = next(itertools.compress(itertools.count(), differs), None)
    return max(length, 0) if first is None else first


def _in_order(items: set[Any], order: list[Any]) -> list[Any]:
    """``items`` in the order they appear in ``order``, without a Python pass over it
    when there are few."""
    if len(items) <= 16:
        return sorted(items, key=order.index)
    return [i for i in order if i in items]


_BOOLISH = frozenset({0, 1})


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _scalar_notes(before: Any, after: Any) -> list[Note]:
    def by_field(entries: Any) -> dict[str, dict[str, Any]]:
        if not isinstance(entries, list):
            return {}
        return {
            e["field"]: e
            for e in entries
            if isinstance(e, dict) and isinstance(e.get("field"), str)
        }

    a, b = by_field(before), by_field(after)
    notes: list[Note] = []
    for name in list(a) + [n for n in b if n not in a]:
        old, new = a.get(name), b.get(name)
        if old == new:
            continue
        notes.append(ScalarChanged(name, _transition(old), _transition(new)))
    if not notes and before != after:
        notes.append(ScalarsReordered())
    return notes


def _transition(entry: dict[str, Any] | None) -> Transition | None:
    if entry is None:
        return None
    return Transition(entry.get("from", MISSING), entry.get("to", MISSING))
