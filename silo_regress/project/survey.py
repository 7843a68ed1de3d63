"""Where baselines lie below a directory, for a check that found no project to judge.

The pre-commit hook runs at the top of the repository. In a monorepo whose project
sits in ``agents/crm`` a hook without ``--project`` finds no project there, and a
check that then passes (``--allow-no-runs``) would wave every regression through.
So before passing, the check asks this module whether the repository holds
baselines anywhere below the hook's directory; only when it holds none is
"nothing to compare" the truth.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from silo_regress.errors import GitError
from silo_regress.project.config import STANDALONE_NAMES

FORMAT_NAME = ".silo-regress-format"  # the file `record` writes into every baselines directory
# Outside git there is no list of files to read; a walk that finds nothing in this
# many directories stops (a home directory is not a repository to survey).
MAX_WALKED_DIRECTORIES = 20_000
_SKIPPED_DIRECTORIES = {".git", "node_modules", ".venv", "venv", "__pycache__", ".silo"}


@dataclass(frozen=True)
class BaselinesFound:
    """A baselines directory below the surveyed one, and the project it belongs to."""

    baselines: PurePosixPath  # relative to the surveyed directory
    project: PurePosixPath  # where --project should point, relative to the surveyed directory


def find_baselines_below(
    start: Path, *, excluding: Path | None = None
) -> tuple[BaselinesFound, ...]:
    """Every baselines directory at or below ``start`` (not ``excluding``), sorted."""
    start = Path(os.path.abspath(start))
    try:
        from silo_regress.vcs.gitio import list_files_below

        files = list_files_below(start)
    except GitError:
        files = _walk(start)
    markers = [PurePosixPath(f) for f in files if PurePosixPath(f).name == FORMAT_NAME]
    configs = {PurePosixPath(f).parent for f in files if PurePosixPath(f).name in STANDALONE_NAMES}
    skip = os.path.abspath(excluding) if excluding is not None else None
    found = []
    for marker in markers:
        baselines = marker.parent
        if skip is not None and os.path.abspath(start / baselines) == skip:
            continue
        found.append(BaselinesFound(baselines, _project_of(baselines, configs)))
    return tuple(sorted(found, key=lambda f: f.baselines))


def _project_of(baselines: PurePosixPath, configs: set[PurePosixPath]) -> PurePosixPath:
    """The nearest directory above ``baselines`` with a config file, else its parent
    (``baselines/`` is the default name, right below the project)."""
    for directory in baselines.parents:
        if directory in configs:
            return directory
    return baselines.parent


def _walk(start: Path) -> list[str]:
    found: list[str] = []
    for walked, (directory, subdirectories, names) in enumerate(os.walk(start)):
        if walked >= MAX_WALKED_DIRECTORIES:
            break
        subdirectories[:] = sorted(d for d in subdirectories if d not in _SKIPPED_DIRECTORIES)
        relative = PurePosixPath(Path(directory).relative_to(start).as_posix())
        found.extend(
            str(relative / name)
            for name in names
            if name == FORMAT_NAME or name in STANDALONE_NAMES
        )
    return found
