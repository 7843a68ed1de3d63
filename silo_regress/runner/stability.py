"""Stability of repeats: do a task's repeated rollouts leave the same canonical artifacts?

Ignored paths (``ignore`` in config, the task's own table first) are replaced by
their placeholder first, as ``check`` does, and the paths that vary are found with
the structural diff.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from silo_regress.behaviour.notes import Segment
from silo_regress.behaviour.result import is_short, word_diff
from silo_regress.canon.canonical import JsonValue, apply_ignores, canonicalize, serialize
from silo_regress.canon.jsondiff import MISSING, Missing, diff_values, resolve
from silo_regress.canon.pointer import split_pointer
from silo_regress.errors import InputError
from silo_regress.project.config import Config, TaskSettings
from silo_regress.runner.batch import Batch
from silo_regress.runner.plan import Task
from silo_regress.runs.index import Run, read_artifact
from silo_regress.runs.toolpath import IncompleteTraceError


@dataclass(frozen=True)
class Distinct:
    """One distinct value at a varying path, and how many rollouts produced it."""

    value: JsonValue | Missing
    count: int
    # The word diff from the most common value, when both are long text.
    words: tuple[Segment, ...] | None = None


@dataclass(frozen=True)
class Variation:
    """One JSON Pointer whose value differs between the repeats of a task."""

    artifact: str
    path: str
    values: tuple[Distinct, ...]  # most common first

    @property
    def pattern(self) -> str:
        """The ``ignore`` entry that covers this path: ``result.json:/agentOutput``."""
        return f"{self.artifact}:{self.path}"

    @property
    def scalar(self) -> bool:
        """Every value is a short scalar, worth listing on one line."""
        return all(_listable(d.value) for d in self.values)


_TOKEN = re.compile(r"[\w.:+-]{1,24}")


def _listable(value: JsonValue | Missing) -> bool:
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

    @property
    def ignore_patterns(self) -> tuple[str, ...]:
        """The ``ignore`` entries that would make these repeats agree, in document order."""
        return tuple(dict.fromkeys(v.pattern for v in self.variations))


def assess(config: Config, batch: Batch, tasks: Sequence[Task], *, repeat: int) -> list[Stability]:
    """Compare each task's new runs artifact by artifact, after canonicalization.

    Ignored paths (``ignore`` in config) are replaced by their placeholder first,
    as ``check`` does, so a field the project ignores cannot make a task flaky.
    """
    return [_assess_task(config, task, batch.runs.get(task.key, ()), repeat) for task in tasks]


def _assess_task(config: Config, task: Task, runs: Sequence[Run], repeat: int) -> Stability:
    # The task's own artifacts and ignore, as check judges it: a path the task's table
    # ignores cannot make it flaky.
    settings = config.task_settings(task.ref, environment=task.environment)
    complete: list[tuple[Run, dict[str, tuple[bytes, Any]]]] = []
    broken: list[Run] = []
    for run in runs:
        docs = _canonical_artifacts(config, settings, run)
        if docs is None:
            broken.append(run)
        else:
            complete.append((run, docs))
    variations: list[Variation] = []
    for artifact in settings.artifacts:
        texts = {docs[artifact][0] for _, docs in complete}
        if len(texts) > 1:
            values = [docs[artifact][1] for _, docs in complete]
            variations.extend(_variations(artifact, values))
    distinct = len({tuple(d[a][0] for a in settings.artifacts) for _, d in complete})
    return Stability(
        task=task,
        expected=repeat,
        runs=tuple(run for run, _ in complete),
        broken=tuple(broken),
        distinct=distinct,
        variations=tuple(variations),
    )


def _canonical_artifacts(
    config: Config, settings: TaskSettings, run: Run
) -> dict[str, tuple[bytes, Any]] | None:
    docs: dict[str, tuple[bytes, Any]] = {}
    for artifact in settings.artifacts:
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
        value = apply_ignores(doc.value, artifact=artifact, ignore=settings.ignore)
        docs[artifact] = (doc.text if value is doc.value else serialize(value), value)
    return docs


def _variations(artifact: str, values: Sequence[JsonValue]) -> list[Variation]:
    paths: dict[str, None] = {}
    for other in values[1:]:
        for change in diff_values(values[0], other):
            paths.setdefault(change.path, None)
    found = []
    for path in paths:
        parts = split_pointer(path)
        counts: dict[bytes, tuple[JsonValue | Missing, int]] = {}
        for value in values:
            member = resolve(value, parts)
            identity = b"" if member is MISSING else serialize(member)
            seen, n = counts.get(identity, (member, 0))
            counts[identity] = (seen, n + 1)
        ranked = sorted(counts.values(), key=lambda pair: -pair[1])
        first = ranked[0][0]
        found.append(
            Variation(
                artifact,
                path,
                tuple(
                    Distinct(v, n, _words(first, v) if i else None)
                    for i, (v, n) in enumerate(ranked)
                ),
            )
        )
    return found


def _words(first: JsonValue | Missing, value: JsonValue | Missing) -> tuple[Segment, ...] | None:
    if isinstance(first, str) and isinstance(value, str) and not is_short(first, value):
        return word_diff(first, value)
    return None
