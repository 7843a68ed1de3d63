"""Accepting part of a run: chosen JSON Pointers taken from the run into the baseline.

``record TASK --path /checks/2/passed`` and the review command's "accept paths"
both end here. The baseline keeps every other value, so what was not accepted
still differs and is still reported. Values only: nothing here writes a file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from silo_regress.canon.canonical import canonicalize
from silo_regress.canon.pointer import split_pointer
from silo_regress.errors import InputError, UsageError
from silo_regress.project.config import Config
from silo_regress.project.taskref import TaskRef
from silo_regress.store.baselines import parse_relpath


@dataclass(frozen=True)
class PathChoice:
    """One ``--path``: a JSON Pointer, optionally limited to one artifact."""

    pointer: str
    artifact: str | None = None

    def __str__(self) -> str:
        return f"{self.artifact}:{self.pointer}" if self.artifact else self.pointer


def parse_path_choice(text: str, artifacts: Sequence[str]) -> PathChoice:
    """``/checks/2/passed`` or ``result.json:/checks/2/passed``."""
    artifact, pointer = None, text
    head, sep, rest = text.partition(":")
    if sep and not head.startswith("/") and (rest == "" or rest.startswith("/")):
        if head not in artifacts:
            raise UsageError(
                f"--path {text}: {head!r} is not a recorded artifact ({', '.join(artifacts)})"
            )
        artifact, pointer = head, rest
    try:
        split_pointer(pointer)
    except ValueError:
        raise UsageError(
            f"--path {text}: not a JSON Pointer (it starts with '/', e.g. /checks/2/passed)"
        ) from None
    return PathChoice(pointer=pointer, artifact=artifact)


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Any = _Absent()


def lookup(value: Any, parts: Sequence[str]) -> Any:
    """The member at ``parts``, or ``ABSENT``."""
    node = value
    for part in parts:
        if isinstance(node, dict):
            if part not in node:
                return ABSENT
            node = node[part]
        elif isinstance(node, list):
            index = _index(part)
            if index is None or index >= len(node):
                return ABSENT
            node = node[index]
        else:
            return ABSENT
    return node


def _index(part: str) -> int | None:
    # "²".isdigit() is true, and int("²") fails: an array index is ASCII digits only.
    if part.isascii() and part.isdigit() and (part == "0" or not part.startswith("0")):
        return int(part)
    return None


def _replaced(node: Any, parts: Sequence[str], new: Any) -> Any:
    """``node`` with the member at ``parts`` set to ``new`` (``ABSENT``: removed).

    Containers along the path are copied, the rest is shared: a 50 MB baseline
    with one accepted value is not copied whole.
    """
    if not parts:
        return new
    head, rest = parts[0], parts[1:]
    if isinstance(node, dict):
        copy = dict(node)
        if rest:
            copy[head] = _replaced(node[head], rest, new)
        elif new is ABSENT:
            del copy[head]
        else:
            copy[head] = new
        return copy
    items = list(node)
    index = _index(head)
    assert index is not None  # the caller looked the parent up
    if rest:
        items[index] = _replaced(node[index], rest, new)
    elif new is ABSENT:
        del items[index]
    elif index == len(items):
        items.append(new)
    else:
        items[index] = new
    return items


def splice(baseline: Any, run: Any, pointers: Sequence[str], *, where: str) -> Any:
    """``baseline`` with the run's value at each pointer (added, replaced or removed).

    Replacements go first, then additions in ascending order and removals in
    descending order, so that accepting ``/items/3`` and ``/items/4`` of a list
    the run shortened removes both items and not one and its neighbour.
    ``where`` names the files for the error when a pointer cannot be applied.
    """
    steps: list[tuple[int, tuple[Any, ...], tuple[str, ...], Any]] = []
    for pointer in dict.fromkeys(pointers):
        parts = split_pointer(pointer)
        old, new = lookup(baseline, parts), lookup(run, parts)
        if old is ABSENT and new is ABSENT:
            raise InputError(f"{where}: {pointer or '/'} is in neither the baseline nor the run")
        if old is ABSENT or new is ABSENT:
            parent = lookup(baseline, parts[:-1])
            if not isinstance(parent, dict | list):
                raise InputError(
                    f"{where}: the baseline has no {_parent(parts)} to hold {pointer}; "
                    f"accept {_parent(parts)} instead"
                )
        kind = 0 if old is not ABSENT and new is not ABSENT else 1 if old is ABSENT else 2
        steps.append((kind, _sort_key(parts), parts, new))
    result = baseline
    replacements = [s for s in steps if s[0] == 0]
    additions = sorted((s for s in steps if s[0] == 1), key=lambda s: s[1])
    removals = sorted((s for s in steps if s[0] == 2), key=lambda s: s[1], reverse=True)
    for _, _, parts, new in [*replacements, *additions, *removals]:
        parent = lookup(result, parts[:-1])
        if isinstance(parent, list) and new is not ABSENT:
            index = _index(parts[-1])
            if index is None or index > len(parent):
                pointer = "/" + "/".join(parts)
                raise InputError(
                    f"{where}: {pointer} is past the end of the baseline's list "
                    f"({len(parent)} items); accept the items before it too, "
                    f"or the whole {_parent(parts)}"
                )
        result = _replaced(result, parts, new)
    return result


def _parent(parts: Sequence[str]) -> str:
    return "/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts[:-1])


def _sort_key(parts: Sequence[str]) -> tuple[tuple[int, int, str], ...]:
    return tuple((0, int(p), "") if _index(p) is not None else (1, 0, p) for p in parts)


@dataclass
class PathAcceptance:
    """The ``--path`` choices of one record, applied artifact by artifact.

    A pointer with no artifact applies to every artifact that has it on either
    side; :meth:`unused` names the pointers no artifact had, which is an error
    once every artifact has been seen.
    """

    choices: tuple[PathChoice, ...]
    used: set[PathChoice] = field(default_factory=set)

    def __call__(
        self, ref: TaskRef, *, artifact: str, run_value: Any, previous: bytes | None, source: str
    ) -> Any:
        """The value to record for this artifact: the baseline with the chosen paths taken."""
        if previous is None:
            raise InputError(
                f"{source}: task {ref} has no {artifact} baseline yet, so there is nothing to "
                f"accept paths into; record the whole task first: silo-regress record {ref}"
            )
        baseline = canonicalize(previous, source=f"baseline of {ref} {artifact}").value
        pointers = []
        for choice in self.choices:
            if choice.artifact not in (None, artifact):
                continue
            parts = split_pointer(choice.pointer)
            here = lookup(baseline, parts) is not ABSENT or lookup(run_value, parts) is not ABSENT
            if here or choice.artifact == artifact:
                pointers.append(choice.pointer)
                self.used.add(choice)
        if not pointers:
            return baseline
        return splice(baseline, run_value, pointers, where=f"{source} ({ref} {artifact})")

    def unused(self) -> list[PathChoice]:
        return [c for c in self.choices if c not in self.used]


@dataclass(frozen=True)
class RecordTarget:
    """A record argument: a task ref, maybe limited to one artifact (a baseline path)."""

    ref: TaskRef
    artifact: str | None = None


def read_target(text: str, config: Config, *, cwd: Path | None = None) -> RecordTarget | None:
    """The task and artifact a baseline path names (as reports print it), or None.

    ``baselines/TASK-002.result.json`` (relative to the project or the current
    directory) and ``crm-west/TASK-002.state-diff.json`` (relative to the
    baselines directory) are both accepted.
    """
    if not any(text.endswith("." + a) for a in config.known_artifacts):
        return None
    path = Path(text)
    candidates = [path] if path.is_absolute() else [Path(cwd or Path.cwd()) / path]
    candidates.append(config.project / path)
    root = config.baselines_dir.resolve()
    for candidate in candidates:
        try:
            relpath = candidate.resolve().relative_to(root).as_posix()
        except ValueError:
            continue
        found = parse_relpath(relpath, config.known_artifacts)
        if found is not None:
            return RecordTarget(found.ref, found.artifact)
    found = parse_relpath(path.as_posix(), config.known_artifacts)
    return RecordTarget(found.ref, found.artifact) if found is not None else None
