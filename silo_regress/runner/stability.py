"""Stability of repeats: do a task's repeated rollouts leave the same canonical artifacts?

Ignored paths (``ignore`` in config) are replaced by their placeholder first, as
``check`` does, and the paths that vary are found with the structural diff.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from silo_regress.canonical import apply_ignores, canonicalize, serialize
from silo_regress.config import Config
from silo_regress.errors import InputError
from silo_regress.jsondiff import MISSING, diff_values, resolve, show
from silo_regress.pointer import split_pointer
from silo_regress.runner.batch import Batch
from silo_regress.runner.plan import Task
from silo_regress.runs import Run, read_artifact
from silo_regress.toolpath import IncompleteTraceError


@dataclass(frozen=True)
class Variation:
    """One JSON Pointer whose value differs between the repeats of a task."""

    artifact: str
    path: str
    variants: tuple[tuple[Any, int], ...]  # (value or MISSING, count), most common first

    def describe(self) -> str:
        """``/agentOutput: 3 variants`` or ``/checks/2/passed: true x2, false x1``."""
        path = self.path or "(whole document)"
        if all(_listable(value) for value, _ in self.variants):
            return f"{path}: " + ", ".join(f"{show(v)} x{n}" for v, n in self.variants)
        return f"{path}: {len(self.variants)} variants"


_TOKEN = re.compile(r"[\w.:+-]{1,24}")


def _listable(value: Any) -> bool:
    """Short scalar values are worth listing; prose and structures are counted."""
    if value is MISSING or value is None or isinstance(value, bool | int | float):
        return True
    return isinstance(value, str) and _TOKEN.fullmatch(value) is not None


@dataclass(frozen=True)
class Stability:
    """Whether a task's repeated rollouts left byte-identical canonical artifacts."""

    task: Task
    expected: int
    runs: tuple[Run, ...]  # complete runs, oldest first
    broken: tuple[Run, ...]  # runs with a missing or unparseable artifact
    distinct: int  # distinct artifact sets among the complete runs
    variations: tuple[Variation, ...]

    @property
    def identical(self) -> bool:
        return not self.variations

    @property
    def stable(self) -> bool:
        return self.identical and not self.broken and len(self.runs) >= self.expected


def assess(config: Config, batch: Batch, tasks: Sequence[Task], *, repeat: int) -> list[Stability]:
    """Compare each task's new runs artifact by artifact, after canonicalization.

    Ignored paths (``ignore`` in config) are replaced by their placeholder first,
    as ``check`` does, so a field the project ignores cannot make a task flaky.
    """
    return [_assess_task(config, task, batch.runs.get(task.key, ()), repeat) for task in tasks]


def _assess_task(config: Config, task: Task, runs: Sequence[Run], repeat: int) -> Stability:
    complete: list[tuple[Run, dict[str, tuple[bytes, Any]]]] = []
    broken: list[Run] = []
    for run in runs:
        docs = _canonical_artifacts(config, run)
        if docs is None:
            broken.append(run)
        else:
            complete.append((run, docs))
    variations: list[Variation] = []
    for artifact in config.artifacts:
        texts = {docs[artifact][0] for _, docs in complete}
        if len(texts) > 1:
            values = [docs[artifact][1] for _, docs in complete]
            variations.extend(_variations(artifact, values))
    distinct = len({tuple(d[a][0] for a in config.artifacts) for _, d in complete})
    return Stability(
        task=task,
        expected=repeat,
        runs=tuple(run for run, _ in complete),
        broken=tuple(broken),
        distinct=distinct,
        variations=tuple(variations),
    )


def _canonical_artifacts(config: Config, run: Run) -> dict[str, tuple[bytes, Any]] | None:
    docs: dict[str, tuple[bytes, Any]] = {}
    for artifact in config.artifacts:
        try:
            data = read_artifact(run, artifact, trace_events=config.trace_events)
        except IncompleteTraceError:  # a broken rollout, counted as such
            return None
        if data is None:
            return None
        try:
            doc = canonicalize(data, source=config.relative(run.path / artifact))
        except InputError:
            return None
        value = apply_ignores(doc.value, artifact=artifact, ignore=config.ignore)
        docs[artifact] = (doc.text if value is doc.value else serialize(value), value)
    return docs


def _variations(artifact: str, values: Sequence[Any]) -> list[Variation]:
    paths: dict[str, None] = {}
    for other in values[1:]:
        for change in diff_values(values[0], other):
            paths.setdefault(change.path, None)
    found = []
    for path in paths:
        parts = split_pointer(path)
        counts: dict[bytes, list[Any]] = {}
        for value in values:
            member = resolve(value, parts)
            identity = b"" if member is MISSING else serialize(member)
            counts.setdefault(identity, [member, 0])[1] += 1
        ranked = sorted(counts.values(), key=lambda pair: -int(pair[1]))
        found.append(Variation(artifact, path, tuple((v, int(n)) for v, n in ranked)))
    return found
