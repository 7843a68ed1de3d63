"""The fallback behaviour profile: any JSON artifact, one note per changed value."""

from __future__ import annotations

from typing import Any

from silo_regress.behaviour.notes import Note, Recorded, ValueChanged
from silo_regress.canon.jsondiff import diff_values

LISTED = 20  # changed values named for an artifact no profile knows


def compare(before: Any, after: Any) -> tuple[Note, ...]:
    """The first :data:`LISTED` changed values, each at its JSON Pointer."""
    return tuple(value_notes(before, after)[:LISTED])


def describe(value: Any) -> tuple[Note, ...]:
    return (Recorded(),)


def value_notes(before: Any, after: Any) -> list[Note]:
    """Every changed value as a :class:`ValueChanged` note, in document order."""
    return [ValueChanged(c.path, c.baseline, c.run) for c in diff_values(before, after)]
