"""Where a command reads from: the project's config, its baselines (working tree, git
index or a commit) and the task refs it was given."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from silo_regress.errors import UsageError

if TYPE_CHECKING:
    from silo_regress.project.config import Config
    from silo_regress.project.taskref import TaskRef
    from silo_regress.store.baselines import BaselineSource, BaselineStore


def load_project(project: Path, *, explicit: bool) -> Config:
    """The project's config: the one ``project`` names when ``explicit`` (--project),
    else the one found walking up from it."""
    from silo_regress.project.config import discover_config, load_config

    return load_config(project) if explicit else discover_config(project)


def parse_refs(texts: Sequence[str] | None) -> list[TaskRef]:
    from silo_regress.project.taskref import parse_ref

    return [parse_ref(t) for t in texts or []]


def working_tree(config: Config) -> BaselineStore:
    """The project's baselines directory, the one place baselines are written."""
    from silo_regress.store.baselines import BaselineStore

    return BaselineStore.of(config)


def baseline_source(
    config: Config, *, against: str | None = None, staged: bool = False
) -> BaselineSource:
    """Where baselines are read from: the working tree, the git index or a commit."""
    if against is not None and staged:
        raise UsageError("--against and --staged both choose the baselines: give one")
    if against is None and not staged:
        return working_tree(config)
    from silo_regress.store.gitsource import git_source

    return git_source(config, ref=against, staged=staged)
