"""`discard` and `restore`: which runs the user meant, moved out of judging or back.

An argument is a run NAME or a task ref, never a path: a run name is one directory
name (no ``/``, no ``..``, no leading dot) of a run directly inside the runs directory
(or, for restore, directly inside the discard directory); anything else must parse as
a task ref. ``../../baselines`` is neither, so it is refused before anything moves.
Discarding a task discards the run ``check`` judges now (its newest); restoring a task
restores every discarded run of it. The moves themselves are
:mod:`silo_regress.runs.discards`.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Sequence
from dataclasses import dataclass

from silo_regress.canon.visible import visible
from silo_regress.errors import InputError, TaskRefError
from silo_regress.project.config import Config
from silo_regress.project.taskref import TaskRef, parse_ref
from silo_regress.runs.discards import (
    DISCARD_DIR,
    DiscardedRun,
    discard_dir,
    list_discarded,
    move_back,
    move_out,
    require_real_discard_dir,
)
from silo_regress.runs.index import Run, RunIndex, Unidentified, read_run


class Move(enum.StrEnum):
    DISCARDED = "discarded"
    RESTORED = "restored"


@dataclass(frozen=True)
class Moved:
    """One run directory moved: its name, its task (``env/TASK``, None when its
    ``run.json`` names none) and where it is now, relative to the project."""

    name: str
    task: str | None
    move: Move
    path: str


def discard_runs(config: Config, index: RunIndex, args: Sequence[str]) -> list[Moved]:
    """Move each named run (or each named task's newest run) into the discard directory.

    Every argument is resolved before the first move, so a typo moves nothing.
    """
    names: dict[str, str | None] = {}
    for arg in args:
        _require_name_or_ref(arg, config=config)
        if _is_run_name(arg) and _is_entry(config.runs_dir / arg):
            names[arg] = _task_of(read_run(config.runs_dir / arg))
            continue
        ref = _ref_or_none(arg)
        key = index.resolve(ref, default_environment=config.environment) if ref else None
        newest = index.newest(*key) if key else None
        if newest is None:
            raise InputError(
                f"{config.relative(config.runs_dir)}: {arg!r} is neither a run directory there "
                "nor a task with runs"
            )
        names[newest.name] = f"{newest.environment}/{newest.task_id}"
    shown = config.relative(config.runs_dir)
    moved = []
    for name, task in names.items():
        path = move_out(config.runs_dir, name, shown=shown)
        moved.append(Moved(name, task, Move.DISCARDED, config.relative(path)))
    return moved


def restore_runs(config: Config, args: Sequence[str]) -> list[Moved]:
    """Move each named discarded run (or every discarded run of a named task) back."""
    require_real_discard_dir(config.runs_dir, shown=config.relative(config.runs_dir))
    discarded = list_discarded(config.runs_dir)
    chosen: dict[str, DiscardedRun] = {}
    for arg in args:
        _require_name_or_ref(arg, config=config)
        by_name = [d for d in discarded if d.name == arg]
        if by_name:
            chosen.update((d.name, d) for d in by_name)
            continue
        ref = _ref_or_none(arg)
        matching = [d for d in discarded if ref and _matches(d.run, ref, config)]
        if not matching:
            raise InputError(
                f"{config.relative(discard_dir(config.runs_dir))}: {arg!r} is neither a "
                "discarded run nor a task with discarded runs"
            )
        chosen.update((d.name, d) for d in matching)
    shown = config.relative(config.runs_dir)
    moved = []
    for name, item in chosen.items():
        path = move_back(config.runs_dir, name, shown=shown)
        moved.append(Moved(name, _task_of(item.run), Move.RESTORED, config.relative(path)))
    return moved


def _is_run_name(text: str) -> bool:
    """One plain directory name: what Silo writes (``run_20260316_…``) or any name a
    person gave a run, but never a path that could leave the runs directory."""
    return (
        bool(text)
        and "/" not in text
        and "\\" not in text
        and ".." not in text
        and not text.startswith(".")
        and text != DISCARD_DIR
        and text.isprintable()
    )


def _require_name_or_ref(arg: str, *, config: Config) -> None:
    if _is_run_name(arg) or _ref_or_none(arg) is not None:
        return
    raise InputError(
        f"{config.relative(config.runs_dir)}: '{visible(arg)}' is not a run name (one directory "
        "name inside the runs directory, without '/', '..' or a leading dot) nor a task ref; "
        "discard and restore never take a path"
    )


def _is_entry(path: os.PathLike[str]) -> bool:
    name = os.fspath(path).rsplit(os.sep, 1)[-1]
    return not name.startswith(".") and name != DISCARD_DIR and os.path.lexists(path)


def _ref_or_none(text: str) -> TaskRef | None:
    try:
        return parse_ref(text)
    except TaskRefError:
        return None


def _matches(run: Run | None, ref: TaskRef, config: Config) -> bool:
    if run is None or run.task_id != ref.task_id:
        return False
    environment = ref.environment or config.environment
    return environment is None or environment == run.environment


def _task_of(found: Run | Unidentified | None) -> str | None:
    return f"{found.environment}/{found.task_id}" if isinstance(found, Run) else None
