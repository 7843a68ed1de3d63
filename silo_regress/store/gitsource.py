"""Baselines as git holds them: staged in the index (the pre-commit hook) or in a commit.

Apart from :mod:`silo_regress.store.baselines` so that a check of the working tree (CI,
most days) builds none of it: only ``check --staged``, ``--against`` and ``diff
--from/--to`` read baselines from git.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from silo_regress.errors import GitError
from silo_regress.project.config import Config
from silo_regress.store.baselines import (
    FORMAT_FILE,
    INDEX_LABEL,
    Baseline,
    Listing,
    Refused,
    SourceKind,
    located,
    parse_relpath,
    refusal,
    sort_baselines,
)


@dataclass(frozen=True)
class MappingSource:
    """Baselines held in memory: the git index or a commit's tree."""

    files: Mapping[str, bytes]  # relpath -> bytes, including FORMAT_FILE when present
    artifacts: tuple[str, ...]
    label: str
    display_root: str = "baselines"
    kind: SourceKind = SourceKind.COMMIT
    # Paths git holds as a symbolic link or submodule: path -> what it is. One named
    # like a baseline is listed, and reading it raises, so it gets a verdict.
    special: Mapping[str, str] = field(default_factory=dict)
    # The full hash ``label`` named when it was read: a report outlives what HEAD~1 means.
    commit: str | None = None
    git_prefix: str = ""  # the project's directory from the top of the repository, "a/b/"

    def entries(self) -> list[Baseline]:
        return list(self.listing().baselines)

    def listing(self) -> Listing:
        paths = [*self.files, *(p for p in self.special if p not in self.files)]
        found: list[Baseline] = []
        refused: list[Refused] = []
        for path in paths:
            baseline = parse_relpath(path, self.artifacts)
            if baseline is not None:
                found.append(baseline)
            elif (problem := refusal(path, self.artifacts)) is not None:
                refused.append(problem)
        return Listing(
            tuple(sort_baselines(found, self.artifacts)),
            tuple(sorted(refused, key=lambda r: r.relpath)),
        )

    def read(self, baseline: Baseline) -> bytes:
        what = self.special.get(baseline.relpath)
        if what is not None:
            from silo_regress.system.fsio import FileError, FileKind

            kind = FileKind.SYMLINK if what == "symbolic link" else FileKind.OTHER
            raise FileError(
                f"{self.display_path(baseline)}: is a {what} in git, not a baseline file "
                "(git stores the link, not the file it points to)",
                kind=kind,
            )
        return self.files[baseline.relpath]

    def has(self, relpath: str) -> bool:
        return relpath in self.files or relpath in self.special

    def format_version(self) -> str | None:
        data = self.files.get(FORMAT_FILE)
        return None if data is None else data.decode("utf-8", "replace").strip()

    def display_path(self, baseline: Baseline) -> str:
        shown = f"{self.display_root}/{baseline.relpath}"
        return located(self.kind, self.label, shown, self.git_prefix)


def git_source(config: Config, *, ref: str | None, staged: bool) -> MappingSource:
    """The baselines as staged in the git index, or as of the commit ``ref`` names."""
    from silo_regress.vcs import gitio

    repo = gitio.find_repository(config.project)
    directory = repo.path_of(config.baselines_dir)
    shown = config.relative(config.baselines_dir)
    prefix = repo.path_of(config.project)  # what `git rev-parse --show-prefix` says there
    prefix += "/" if prefix else ""
    if staged or ref is None:
        index = gitio.read_index(repo, directory)
        unmerged = [
            p
            for p in index.conflicted
            if p == FORMAT_FILE
            or parse_relpath(p, config.known_artifacts) is not None
            or refusal(p, config.known_artifacts) is not None
        ]
        if unmerged:
            raise GitError(
                f"{shown}/{unmerged[0]}: unmerged in the git index (a merge conflict"
                + (f", with {len(unmerged) - 1} more" if len(unmerged) > 1 else "")
                + "); resolve it, re-record the task if needed, then `git add` it"
            )
        return MappingSource(
            index.files,
            config.known_artifacts,
            INDEX_LABEL,
            shown,
            kind=SourceKind.INDEX,
            special=index.special,
            git_prefix=prefix,
        )
    commit = gitio.resolve_commit(repo, ref)
    files, special = gitio.read_tree_entries(repo, commit, directory)
    return MappingSource(
        files,
        config.known_artifacts,
        ref,
        shown,
        special=special,
        commit=commit,
        git_prefix=prefix,
    )
