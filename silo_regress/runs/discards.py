"""Discarded runs: run directories taken out of judging, kept whole, and put back on demand.

A discard moves the run directory, by one ``rename``, into
``<runs dir>/.silo-regress-discarded/``; a restore renames it back. Why a move and
not a mark inside the run (its ``silo-regress.json``):

- Atomic and lossless. A rename within one directory tree of one file system is one
  step: the run is in the runs directory or in the discard directory, never half in
  either, whatever kills the process. Renaming a directory onto a non-empty one
  fails (``ENOTEMPTY``), so a discard never overwrites anything, and nothing is ever
  deleted.
- Free for every reader. The index lists only names that do not start with a dot,
  so a discarded run is gone from ``check``, ``status`` and the hook without
  reading one more file per run; the run-index cache sees a name gone from the
  listing and rebuilds, as for a run deleted by hand. A mark would cost a read of
  every run's ``silo-regress.json`` on every check, and a mark written into a
  plain ``silo run`` directory would be taken for its provenance record.
- Silo never writes there: it names each new run directory itself, directly under
  the runs directory.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from silo_regress.errors import InputError
from silo_regress.runs.index import DISCARD_DIR, Run, Unidentified, discard_dir, read_run

__all__ = ["DISCARD_DIR", "discard_dir"]  # named here too: every discard lives in this room


@dataclass(frozen=True)
class DiscardedRun:
    """A run directory in the discard directory: the run its ``run.json`` names, or why
    it names none (a crashed run can be discarded too)."""

    name: str
    path: Path
    run: Run | None
    reason: str | None = None


def list_discarded(runs_dir: Path) -> tuple[DiscardedRun, ...]:
    """Every discarded run, oldest first (by startedAt, then name; unnamed ones last).

    A discard directory that is not a real directory (a symlink put in its place) holds
    no discarded run: it is never followed, so nothing outside is listed as ours.
    """
    where = discard_dir(runs_dir)
    if not _is_real_dir(where):
        return ()
    try:
        with os.scandir(where) as entries:
            names = [e.name for e in entries if not e.name.startswith(".") and _is_dir(e)]
    except (FileNotFoundError, NotADirectoryError):
        return ()
    except OSError as exc:
        raise InputError(f"{where}: cannot be listed: {exc.strerror or exc}") from None
    found = []
    for name in names:
        read = read_run(where / name)
        if isinstance(read, Unidentified):
            found.append(DiscardedRun(name, where / name, None, read.reason))
        else:
            found.append(DiscardedRun(name, where / name, read))
    found.sort(key=lambda d: (d.run is None, d.run.order if d.run else (0, d.name), d.name))
    return tuple(found)


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def require_real_discard_dir(runs_dir: Path, *, shown: str) -> None:
    """Refuse a discard directory that is anything but a real directory (or absent).

    A symlink there would move runs to, or bring them back from, wherever it points.
    """
    where = discard_dir(runs_dir)
    if os.path.lexists(where) and not _is_real_dir(where):
        raise InputError(
            f"{shown}/{DISCARD_DIR}: not a real directory (a symlink or a file); silo-regress "
            "keeps discarded runs only in a real directory there and never follows a link: "
            "remove it, or move it away, and run the command again"
        )


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def move_out(runs_dir: Path, name: str, *, shown: str) -> Path:
    """Move run ``name`` into the discard directory; its new path.

    ``shown`` is the runs directory as messages name it.
    """
    source = runs_dir / name
    _require_run_dir(source, shown=f"{shown}/{name}")
    target_dir = discard_dir(runs_dir)
    require_real_discard_dir(runs_dir, shown=shown)
    try:
        target_dir.mkdir(exist_ok=True)
    except OSError as exc:
        raise InputError(f"{shown}/{DISCARD_DIR}: cannot create: {exc.strerror or exc}") from None
    require_real_discard_dir(runs_dir, shown=shown)  # raced in between: still never followed
    target = target_dir / name
    _rename(source, target, shown=f"{shown}/{name}", clash="a discarded run of that name")
    return target


def move_back(runs_dir: Path, name: str, *, shown: str) -> Path:
    """Move discarded run ``name`` back into the runs directory; its restored path."""
    require_real_discard_dir(runs_dir, shown=shown)
    source = discard_dir(runs_dir) / name
    _require_run_dir(source, shown=f"{shown}/{DISCARD_DIR}/{name}")
    target = runs_dir / name
    _rename(source, target, shown=f"{shown}/{DISCARD_DIR}/{name}", clash="a run of that name")
    return target


def _require_run_dir(path: Path, *, shown: str) -> None:
    """Only a real directory moves: never a link (its target is not ours to move)."""
    if "/" in path.name or path.name in ("", ".", "..") or path.name.startswith("."):
        raise InputError(f"{shown}: not a run directory name")
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise InputError(f"{shown}: no such run directory") from None
    except OSError as exc:
        raise InputError(f"{shown}: cannot be examined: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise InputError(f"{shown}: not a run directory (only directories are moved)")


def _rename(source: Path, target: Path, *, shown: str, clash: str) -> None:
    if os.path.lexists(target):
        raise InputError(f"{shown}: not moved: {target} already holds {clash}")
    try:
        # Onto a non-empty directory this fails, so nothing is ever overwritten.
        os.rename(source, target)
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
            raise InputError(f"{shown}: not moved: {target} already holds {clash}") from None
        raise InputError(f"{shown}: cannot be moved: {exc.strerror or exc}") from None
    _sync(source.parent)
    _sync(target.parent)


def _sync(directory: Path) -> None:
    from silo_regress.system.fsio import fsync_directory

    fsync_directory(directory)
