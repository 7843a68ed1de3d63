"""Behaviour profiles: one per artifact kind, each turning two values into typed notes.

A profile is a module with ``compare(before, after)`` and ``describe(value)``,
each returning notes (:mod:`silo_regress.behaviour.notes`), or None when the
values are not the shape it knows, and then the generic profile speaks. An
artifact without a profile of its own gets the generic one: a project that
baselines another JSON file needs nothing here.
"""

from __future__ import annotations

from typing import Any, Protocol

from silo_regress.behaviour import generic, result, state, toolevents
from silo_regress.behaviour.notes import Note


class Profile(Protocol):
    """What a profile module provides (mypy checks each module against it)."""

    def compare(self, before: Any, after: Any, /) -> tuple[Note, ...] | None: ...

    def describe(self, value: Any, /) -> tuple[Note, ...] | None: ...


# Artifact name -> its profile. New kinds (the tool path) register here.
PROFILES: dict[str, Profile] = {
    result.ARTIFACT: result,
    state.ARTIFACT: state,
    toolevents.ARTIFACT: toolevents,
}


def compare(artifact: str, before: Any, after: Any) -> tuple[Note, ...]:
    """What changed between two versions of ``artifact``, in agent terms."""
    profile = PROFILES.get(artifact)
    notes: tuple[Note, ...] | None = None
    if profile is not None:
        notes = profile.compare(before, after)
    return generic.compare(before, after) if notes is None else notes


def describe(artifact: str, value: Any) -> tuple[Note, ...]:
    """A new baseline of ``artifact`` in a few notes."""
    profile = PROFILES.get(artifact)
    notes: tuple[Note, ...] | None = None
    if profile is not None:
        notes = profile.describe(value)
    return generic.describe(value) if notes is None else notes
