"""``merge-driver %O %A %B %P``: git's merge driver for baselines.

Git calls it for each baseline both sides of a merge changed, with the base, ours
and theirs in temporary files; the result goes into ours (%A), and the exit status
says clean (0) or conflicted. A result, state-diff or tool-events baseline merges by
key and identity (canon/jsonmerge): it is a prediction the merged commit's
``check --run`` verifies. A tally is never merged: it counts rollouts of one code
state, so the driver leaves it conflicted with the one step that makes a true one.
"""

from __future__ import annotations

import contextlib
import enum
from dataclasses import dataclass
from pathlib import Path

from silo_regress.canon.jsonmerge import merge_documents
from silo_regress.canon.markers import conflict_text
from silo_regress.errors import InputError, SiloRegressError
from silo_regress.stats.tally import SUFFIX, conflicted_tally
from silo_regress.system.fsio import read_regular, write_atomic

LABELS = ("ours", "theirs")


@dataclass(frozen=True)
class DriverFiles:
    """What git passes: %O, %A (where the result goes), %B and the path %P."""

    base: Path
    ours: Path
    theirs: Path
    name: str


class DriverVerdict(enum.Enum):
    MERGED = "merged"
    CONFLICTED = "conflicted"  # both sides changed a member differently
    TALLY = "tally"  # never merged
    NOT_JSON = "not-json"  # a side that is not JSON: left to the user whole


@dataclass(frozen=True)
class DriverResult:
    verdict: DriverVerdict
    name: str
    pointers: tuple[str, ...] = ()
    reason: str = ""  # for a tally or a side that is not JSON: the sentence to show

    @property
    def clean(self) -> bool:
        return self.verdict is DriverVerdict.MERGED


def is_tally(name: str) -> bool:
    return name.endswith(SUFFIX)


def run_merge_driver(files: DriverFiles) -> DriverResult:
    """Merge the three files into ``files.ours``; a conflict leaves markers there."""
    base, ours, theirs = (
        read_regular(path, shown=f"{files.name} ({side})")
        for path, side in ((files.base, "base"), (files.ours, "ours"), (files.theirs, "theirs"))
    )
    if is_tally(files.name):
        text = conflict_text(ours, theirs, labels=LABELS)
        write_atomic(files.ours, text, shown=files.name)
        error = conflicted_tally(text, source=files.name, task=task_of(files.name))
        reason = error.message if error is not None else files.name
        return DriverResult(DriverVerdict.TALLY, files.name, reason=reason)
    try:
        done = merge_documents(
            base,
            ours,
            theirs,
            name=files.name,
            sources=(f"{files.name} (base)", f"{files.name} (ours)", f"{files.name} (theirs)"),
            labels=LABELS,
        )
    except InputError as exc:
        write_atomic(files.ours, conflict_text(ours, theirs, labels=LABELS), shown=files.name)
        return DriverResult(DriverVerdict.NOT_JSON, files.name, reason=exc.message)
    write_atomic(files.ours, done.text, shown=files.name)
    if done.merge.clean:
        return DriverResult(DriverVerdict.MERGED, files.name)
    pointers = tuple(c.shown for c in done.merge.conflicts)
    return DriverResult(DriverVerdict.CONFLICTED, files.name, pointers=pointers)


def task_of(name: str) -> str:
    """The task a tally at ``name`` (a path from the top of the repository) counts:
    ``ENV/TASK`` when the project's config places it in an environment's folder."""
    path = Path(name)
    stem = path.name[: -len(SUFFIX)] if path.name.endswith(SUFFIX) else path.name
    with contextlib.suppress(SiloRegressError, OSError, ValueError):
        from silo_regress.project.config import find_project, load_config
        from silo_regress.store.baselinenames import parse_tally_relpath

        config = load_config(find_project(path.absolute().parent))
        relpath = path.absolute().relative_to(config.baselines_dir).as_posix()
        ref = parse_tally_relpath(relpath)
        if ref is not None:
            return str(ref)
    return stem
