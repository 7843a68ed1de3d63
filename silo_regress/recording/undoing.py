"""Undoing an accept: the baseline files as they were before it, put back in one batch.

``review`` keeps one :class:`Undo` per accept. It holds every baseline file of the
task the accept could touch (each variant of each artifact), before and after, so
an undo restores the exact previous bytes, re-creates the variants a reset removed
and removes a baseline the accept created. It is written through the same
all-or-nothing batch as the accept (:mod:`silo_regress.store.transaction`), and
refused, changing nothing, when another writer changed one of those files since.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from silo_regress.errors import InputError
from silo_regress.judging.outcome import Outcome
from silo_regress.project.config import Config
from silo_regress.recording.recorder import Recording
from silo_regress.recording.reviewing import accept
from silo_regress.runs.index import RunIndex
from silo_regress.store.baselinenames import baseline_relpath
from silo_regress.store.baselines import BaselineStore
from silo_regress.system.fsio import read_optional

Files = tuple[tuple[Path, bytes | None], ...]  # each path's bytes; None: no such file


@dataclass(frozen=True)
class Undo:
    """The files one accept changed: their bytes before it and after it."""

    before: Files
    after: Files

    @property
    def paths(self) -> tuple[Path, ...]:
        return tuple(path for path, _ in self.before)


def accept_undoably(
    config: Config,
    store: BaselineStore,
    index: RunIndex,
    outcome: Outcome,
    *,
    pointers: Sequence[str] = (),
) -> tuple[Recording, Undo]:
    """:func:`~silo_regress.recording.reviewing.accept`, and how to undo it.

    The writer lock is held from the first read of the old files to the last
    read of the new ones, so the undo restores exactly what this accept replaced.
    """
    with store.locked("review"):
        paths = _task_files(config, store, outcome)
        before = _read(store, paths)
        recording = accept(config, store, index, outcome, pointers=pointers)
        after = _read(store, paths)
    changed = [n for n, (old, new) in enumerate(zip(before, after, strict=True)) if old != new]
    return recording, Undo(
        before=tuple(before[n] for n in changed), after=tuple(after[n] for n in changed)
    )


def undo(store: BaselineStore, last: Undo) -> tuple[str, ...]:
    """Put back the bytes ``last`` replaced; the files restored, as messages name them."""
    if not last.before:
        return ()
    with store.locked("review"):
        for path, expected in last.after:
            if _read_one(store, path) != expected:
                raise InputError(
                    f"{store.shown(path)}: changed since it was accepted (another writer?), "
                    "so the accept was not undone; nothing was changed"
                )
        files = [(path, data) for path, data in last.before if data is not None]
        removals = [path for path, data in last.before if data is None]
        store.write(files, command="review", removals=removals)
    return tuple(store.shown(path) for path in last.paths)


def _task_files(config: Config, store: BaselineStore, outcome: Outcome) -> tuple[Path, ...]:
    """Every baseline file of the outcome's task an accept may write or remove."""
    found: list[Path] = []
    for artifact in config.known_artifacts:
        found.append(store.root / baseline_relpath(outcome.task, artifact, 1))
        found += [store.root / b.relpath for b in store.variants_of(outcome.task, artifact)]
    return tuple(dict.fromkeys(found))


def _read(store: BaselineStore, paths: Sequence[Path]) -> Files:
    return tuple((path, _read_one(store, path)) for path in paths)


def _read_one(store: BaselineStore, path: Path) -> bytes | None:
    return read_optional(path, shown=store.shown(path), follow=False)
