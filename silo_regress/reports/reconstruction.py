"""The line diffs of a merged report, rebuilt from the baselines it was checked against.

A shard's JSON report carries each change's values, not the files, so ``merge``
rebuilds both canonical texts: the baseline read where the shard read it (the
working tree, the git index, or the commit ``--against`` named, by its hash),
and the run's text as that baseline with the changes applied. A diff is shown
only when every change's baseline side fits the file, so a checkout at another
commit never shows a made-up diff; what is left out is said beside each artifact
and once in a warning.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from silo_regress.canon.canonical import serialize
from silo_regress.canon.jsondiff import MISSING, Change, array_index, child
from silo_regress.canon.pointer import split_pointer
from silo_regress.canon.visible import visible
from silo_regress.errors import SiloRegressError
from silo_regress.judging.outcome import Outcome, Report, Verdict
from silo_regress.store.baselines import SourceKind


def attach_texts(report: Report, project: Path) -> Report:
    """The report with canonical texts for changed outcomes whose baselines are here.

    The run's canonical text is the baseline with the changes applied; it is
    attached only when every change's baseline side matches the file, so a
    checkout at another commit never shows a made-up diff.
    """
    outcomes = []
    left_out: list[str] = []
    refused: list[str] = []
    project = project.resolve()
    for outcome in report.outcomes:
        if outcome.verdict is Verdict.CHANGED and outcome.baseline_path and outcome.changes:
            problem = outside_problem(project, outcome.baseline_path)
            if problem is not None:
                refused.append(f"{visible(outcome.baseline_path)} ({problem})")
                outcomes.append(outcome)
                continue
            texts = _texts(_read_baseline(outcome, project), outcome.changes)
            if texts is not None:
                outcome = _with_texts(outcome, *texts)
            else:
                left_out.append(f"{outcome.task} {outcome.artifact}")
                outcome = _without_diff(outcome, project)
        outcomes.append(outcome)
    warnings = report.warnings
    if left_out:
        warnings += (_left_out_warning(left_out, project),)
    if refused:
        warnings += (
            f"not read, so shown without a line diff: {', '.join(refused)}; a shard report "
            "is not trusted to name files, and merge reads only baselines inside the project",
        )
    return replace(report, outcomes=tuple(outcomes), warnings=warnings)


def outside_problem(project: Path, relpath: str) -> str | None:
    """Why a report's baseline path may not be read under ``project``, or None.

    The rule of every write (store/transaction.py): a relative path with no '..',
    inside the project, through no symbolic link, to a regular file (or nothing).
    A shard report is someone else's file: ``../x``, ``/etc/passwd`` or a link out
    must never be read, let alone printed.
    """
    from silo_regress.store.transaction import containment_problem

    if relpath.startswith("/") or Path(relpath).is_absolute():
        return "an absolute path"
    if "\x00" in relpath:
        return "a NUL in the path"
    return containment_problem(project, project / relpath)


def _with_texts(outcome: Outcome, baseline: bytes, run: bytes) -> Outcome:
    return Outcome(**{**outcome.__dict__, "baseline_text": baseline, "run_text": run})


def _without_diff(outcome: Outcome, project: Path) -> Outcome:
    """The outcome saying why its line diff is missing: JSON reports carry only the
    changed values, and the baseline here is not the one the shard compared."""
    if outcome.detail:
        return outcome
    detail = (
        f"no line diff: {outcome.baseline_path} under {project.resolve()} is missing or is not the "
        "baseline this shard checked; the changed values are listed instead"
    )
    return Outcome(**{**outcome.__dict__, "detail": detail})


def _left_out_warning(labels: Sequence[str], project: Path) -> str:
    shown = ", ".join(labels[:5]) + (f" and {len(labels) - 5} more" if len(labels) > 5 else "")
    count = len(labels)
    return (
        f"{count} changed artifact{'s' * (count != 1)} without a line diff ({shown}): "
        f"the shard reports hold only the changed values, and the baselines under "
        f"{project.resolve()} "
        "are missing or differ from the ones checked; run merge in a checkout of the "
        "commit the shards checked to see the diffs"
    )


def _read_baseline(outcome: Outcome, project: Path) -> bytes | None:
    """The baseline's bytes from where the shard read them; None when they cannot be had."""
    assert outcome.baseline_path is not None
    path = project / outcome.baseline_path
    origin = outcome.baseline_source
    try:
        if origin is None or origin.kind is SourceKind.WORKING_TREE:
            from silo_regress.system.fsio import read_optional

            return read_optional(path, shown=str(path), follow=False)
        if origin.kind is SourceKind.COMMIT and origin.commit is None:
            return None  # a report that does not say which commit: nothing to trust
        from silo_regress.vcs import gitio

        repo = gitio.find_repository(project)
        where = repo.path_of(path)
        name = f"{origin.commit}:{where}" if origin.kind is SourceKind.COMMIT else f":{where}"
        (data,) = gitio.read_blobs(repo, [name])
        return data
    except (OSError, SiloRegressError, ValueError):  # not a repository, no such object ...
        return None


def _texts(data: bytes | None, changes: Sequence[Change]) -> tuple[bytes, bytes] | None:
    if data is None:
        return None
    try:
        value = json.loads(data.decode("utf-8"))
    except ValueError:
        return None
    try:
        if serialize(value) != data:
            return None
        run = apply_changes(value, changes)
        return data, serialize(run)
    except (ValueError, TypeError, RecursionError, KeyError, IndexError):
        return None


def apply_changes(value: Any, changes: Sequence[Change]) -> Any:
    """``value`` with the changes applied; ValueError when a change does not fit it."""
    root = [copy.deepcopy(value)]
    removed: dict[int, tuple[list[Any], int]] = {}
    for change in changes:
        parts: tuple[str | int, ...] = (0, *split_pointer(change.path))
        parent: Any = root
        for part in parts[:-1]:
            parent = _child(parent, part)
        last = parts[-1]
        current = _child(parent, last, missing_ok=True)
        if change.baseline is MISSING:
            if current is not MISSING:
                raise ValueError(f"{change.path} exists in the baseline")
        elif current is MISSING or serialize(current) != serialize(change.baseline):
            raise ValueError(f"{change.path} holds another value in the baseline")
        if isinstance(parent, list):
            index = _index(parent, last, allow_end=True)
            if change.run is MISSING:
                low = removed.get(id(parent), (parent, len(parent)))[1]
                removed[id(parent)] = (parent, min(low, index))
            elif index == len(parent):
                parent.append(change.run)
            else:
                parent[index] = change.run
        elif change.run is MISSING:
            del parent[last]
        else:
            parent[last] = change.run
    for items, start in removed.values():
        del items[start:]
    return root[0]


def _index(items: list[Any], part: str | int, *, allow_end: bool = False) -> int:
    index = array_index(part)
    if index is None:
        raise ValueError(f"{part!r} is not an array index")
    if index > len(items) or (index == len(items) and not allow_end):
        raise ValueError(f"index {index} is past the end")
    return index


def _child(node: Any, part: str | int, *, missing_ok: bool = False) -> Any:
    if not isinstance(node, dict | list):
        raise ValueError("path runs through a value that is not an object or array")
    if isinstance(node, list) and array_index(part) is None:
        raise ValueError(f"{part!r} is not an array index")
    found = child(node, part)
    if found is MISSING and not missing_ok:
        raise ValueError(f"{part!r} is missing")
    return found
