"""`prune`: remove the baselines of tasks that are gone, or of tasks the user names.

SILO_FORMAT.md says where runs are but not where tasks are defined (Silo's
environments define them in code, and ``silo run`` refuses an unknown task before
writing anything). So a task counts as known, and its baselines are kept, when any
of these names it:

- a run in the runs directory, or a discarded one (a discard is not a deletion);
- a ``[tasks."REF"]`` table in the config;
- the text of a file the config's ``inputs`` (or ``agent``) globs match, where the
  environments that define tasks usually are (``inputs = ["environments/**"]``).

Only a baseline no source names is removed: when unsure, keep. Removal is one batch
of :mod:`silo_regress.store.transaction` under the writer lock: every file goes, or
none does, and ``check`` never prunes. A task one of whose files the batch would
refuse (a symbolic link, or a path through one) is refused whole in the plan, so
``--dry-run`` shows exactly what ``prune`` then does: the rest still goes.
"""

from __future__ import annotations

import contextlib
import enum
import os
from collections.abc import Sequence
from dataclasses import dataclass

from silo_regress.errors import InputError
from silo_regress.project.config import Config
from silo_regress.project.taskref import TaskRef
from silo_regress.runs.discards import list_discarded
from silo_regress.runs.index import RunIndex
from silo_regress.store.baselines import BaselineStore
from silo_regress.system.fsio import FileError, read_regular


class Known(enum.StrEnum):
    """Why a task's baselines are kept."""

    RUN = "it has runs"
    DISCARDED = "it has discarded runs"
    CONFIG = "the config has a table for it"
    INPUT = "an input file names it"


@dataclass(frozen=True)
class Kept:
    ref: TaskRef
    why: Known
    where: str = ""  # the input file that names it, for Known.INPUT


@dataclass(frozen=True)
class Removal:
    """A baseline file to remove: its path as shown, and whether the user named its task."""

    ref: TaskRef
    path: str
    chosen: bool


@dataclass(frozen=True)
class Refused:
    """A task whose baselines stay because the batch would refuse one of its files."""

    ref: TaskRef
    path: str
    problem: str


@dataclass(frozen=True)
class PrunePlan:
    removals: tuple[Removal, ...]
    kept: tuple[Kept, ...]
    refused: tuple[Refused, ...] = ()


def plan_prune(
    config: Config, index: RunIndex, store: BaselineStore, refs: Sequence[TaskRef] = ()
) -> PrunePlan:
    """Which baseline files go: every file of each named task, or (none named) of every
    task nothing names. Reads only; nothing is removed."""
    baselines = store.entries()
    by_ref: dict[TaskRef, list[str]] = {}
    for baseline in baselines:
        by_ref.setdefault(baseline.ref, []).append(store.display_path(baseline))
    if refs:
        missing = [str(ref) for ref in refs if ref not in by_ref]
        if missing:
            raise InputError(
                f"{store.display_root}: no baseline of {', '.join(missing)} to prune "
                "(give the refs as the baseline names spell them, e.g. crm-west/TASK-001)"
            )
        chosen = [Removal(ref, path, True) for ref in refs for path in by_ref[ref]]
        return _without_refused(config, store, PrunePlan(tuple(chosen), ()))
    discarded = {d.run.key for d in list_discarded(index.runs_dir) if d.run is not None}
    inputs = _input_texts(config)
    removals: list[Removal] = []
    kept: list[Kept] = []
    for ref, paths in sorted(by_ref.items(), key=lambda item: item[0].sort_key()):
        reason = _known(config, index, discarded, inputs, ref)
        if reason is None:
            removals += [Removal(ref, path, False) for path in paths]
        elif reason.why is not Known.RUN:
            kept.append(reason)  # an orphan in status, kept here: say why
    return _without_refused(config, store, PrunePlan(tuple(removals), tuple(kept)))


def _without_refused(config: Config, store: BaselineStore, plan: PrunePlan) -> PrunePlan:
    """The plan less every task with a file the batch would refuse: the batch is all or
    nothing, so one such file would otherwise make the real prune remove none."""
    from silo_regress.store.transaction import containment_problem

    refused: dict[TaskRef, Refused] = {}
    for removal in plan.removals:
        if removal.ref in refused:
            continue
        problem = containment_problem(
            store.root, config.project / removal.path, project=config.project
        )
        if problem is not None:
            refused[removal.ref] = Refused(removal.ref, removal.path, problem)
    if not refused:
        return plan
    kept = tuple(r for r in plan.removals if r.ref not in refused)
    return PrunePlan(kept, plan.kept, tuple(refused.values()))


def _known(
    config: Config,
    index: RunIndex,
    discarded: set[tuple[str, str]],
    inputs: list[tuple[str, bytes]],
    ref: TaskRef,
) -> Kept | None:
    environment = ref.environment or config.environment
    keys = (
        [(environment, ref.task_id)]
        if environment is not None
        else [(env, ref.task_id) for env in index.environments_of(ref.task_id)]
        + [key for key in discarded if key[1] == ref.task_id]
    )
    if any(index.rows.get(key) for key in keys):
        return Kept(ref, Known.RUN)
    if any(key in discarded for key in keys):
        return Kept(ref, Known.DISCARDED)
    if ref in config.task_overrides or TaskRef(ref.task_id) in config.task_overrides:
        return Kept(ref, Known.CONFIG)
    needle = ref.task_id.encode("utf-8", "surrogateescape")
    for path, text in inputs:
        if needle in text:
            return Kept(ref, Known.INPUT, path)
    return None


def _input_texts(config: Config) -> list[tuple[str, bytes]]:
    """The configured input files' bytes; one that cannot be read names nothing."""
    globs = config.input_globs
    if not globs:
        return []
    from silo_regress.project.fingerprint import expand_inputs

    paths, _ = expand_inputs(config.project, globs)
    texts = []
    for path in paths:
        full = os.path.join(config.project, path)
        with contextlib.suppress(FileError, OSError):
            texts.append((path, read_regular(full, shown=path)))
    return texts


def prune(config: Config, store: BaselineStore, plan: PrunePlan) -> None:
    """Remove the plan's files in one batch under the writer lock; empty
    environment directories it leaves go too."""
    if not plan.removals:
        return
    paths = [config.project / removal.path for removal in plan.removals]
    with store.locked("prune"):
        store.write([], command="prune", removals=paths)
    for directory in dict.fromkeys(path.parent for path in paths):
        if directory != store.root:
            with contextlib.suppress(OSError):
                directory.rmdir()  # only when empty
