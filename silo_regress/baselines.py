"""Where baselines live, how they are named and listed, and how they are written.

Baselines are read through a :class:`BaselineSource`, so the same comparison runs
against the working tree, the git index (the pre-commit hook) or any commit
(``check --against``). Only :class:`BaselineStore`, the working tree, writes.
"""

from __future__ import annotations

import contextlib
import enum
import os
import stat
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from silo_regress.config import Config
from silo_regress.errors import GitError, InputError, TaskRefError
from silo_regress.taskref import TaskRef, unsafe_reason

FORMAT_FILE = ".silo-regress-format"
INDEX_LABEL = "git index"  # the label of baselines read from the index


class SourceKind(enum.StrEnum):
    """Where a :class:`BaselineSource` reads from."""

    WORKING_TREE = "working-tree"
    INDEX = "index"
    COMMIT = "commit"


@dataclass(frozen=True)
class Baseline:
    """One artifact of one task, as stored under the baselines directory."""

    ref: TaskRef
    artifact: str
    relpath: str  # relative to the baselines directory, with "/" separators


class BaselineSource(Protocol):
    """Read-only view of a baselines directory: working tree, index or commit."""

    @property
    def label(self) -> str: ...

    @property
    def kind(self) -> SourceKind: ...

    def entries(self) -> list[Baseline]: ...

    def read(self, baseline: Baseline) -> bytes: ...

    def format_version(self) -> str | None: ...

    def display_path(self, baseline: Baseline) -> str: ...


def baseline_relpath(ref: TaskRef, artifact: str) -> str:
    name = f"{ref.task_id}.{artifact}"
    return f"{ref.environment}/{name}" if ref.environment else name


def parse_relpath(relpath: str, artifacts: Iterable[str]) -> Baseline | None:
    """The baseline a path under the baselines directory names, or None."""
    parts = relpath.split("/")
    if len(parts) > 2 or any(p.startswith(".") for p in parts):
        return None
    for artifact in artifacts:
        suffix = "." + artifact
        if parts[-1].endswith(suffix) and len(parts[-1]) > len(suffix):
            task_id = parts[-1][: -len(suffix)]
            environment = parts[0] if len(parts) == 2 else None
            if unsafe_reason(task_id) or (environment is not None and unsafe_reason(environment)):
                return None
            return Baseline(TaskRef(task_id, environment), artifact, relpath)
    return None


def sort_baselines(found: Iterable[Baseline], artifacts: tuple[str, ...]) -> list[Baseline]:
    order = {a: i for i, a in enumerate(artifacts)}
    return sorted(found, key=lambda b: (b.ref.task_id, b.ref.environment or "", order[b.artifact]))


@dataclass(frozen=True)
class BaselineStore:
    """The baselines directory in the working tree."""

    root: Path
    artifacts: tuple[str, ...]
    display_root: str = "baselines"

    @classmethod
    def of(cls, config: Config) -> BaselineStore:
        """The project's baselines directory, named in messages as config shows it."""
        return cls(config.baselines_dir, config.artifacts, config.relative(config.baselines_dir))

    @property
    def label(self) -> str:
        return "working tree"

    @property
    def kind(self) -> SourceKind:
        return SourceKind.WORKING_TREE

    def path_for(self, ref: TaskRef, artifact: str) -> Path:
        for part in (ref.environment, ref.task_id):
            if part is not None and unsafe_reason(part):
                raise TaskRefError(f"task ref {ref} is refused: {unsafe_reason(part)}")
        path = self.root / baseline_relpath(ref, artifact)
        root = self.root.resolve()
        if root not in path.resolve().parents:
            raise TaskRefError(f"task ref {ref}: {path} would lie outside {self.root}")
        return path

    def display_path(self, baseline: Baseline) -> str:
        return f"{self.display_root}/{baseline.relpath}"

    def _check_root(self) -> bool:
        if self.root.is_dir():
            return True
        if self.root.exists():
            raise InputError(f"{self.root}: baselines directory is a file, not a directory")
        return False

    def entries(self) -> list[Baseline]:
        if not self._check_root():
            return []
        found: list[Baseline] = []
        try:
            with os.scandir(self.root) as top:
                for entry in top:
                    if entry.name.startswith("."):
                        continue
                    if entry.is_dir():
                        with os.scandir(entry.path) as inner:
                            for sub in inner:
                                if sub.is_file():
                                    self._add(f"{entry.name}/{sub.name}", found)
                    elif entry.is_file():
                        self._add(entry.name, found)
        except PermissionError as exc:
            raise InputError(f"{exc.filename}: cannot be read (permission denied)") from None
        return sort_baselines(found, self.artifacts)

    def _add(self, relpath: str, found: list[Baseline]) -> None:
        baseline = parse_relpath(relpath, self.artifacts)
        if baseline is not None:
            found.append(baseline)

    def read(self, baseline: Baseline) -> bytes:
        path = os.path.join(self.root, baseline.relpath)
        try:
            with open(path, "rb") as handle:
                return handle.read()
        except OSError as exc:
            raise InputError(f"{path}: cannot read baseline: {exc.strerror}") from None

    def read_existing(self, ref: TaskRef, artifact: str) -> bytes | None:
        path = self.path_for(ref, artifact)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise InputError(f"{path}: cannot read baseline: {exc.strerror}") from None

    def format_version(self) -> str | None:
        try:
            return (self.root / FORMAT_FILE).read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            raise InputError(
                f"{self.root}: baselines directory is a file, not a directory"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{self.root / FORMAT_FILE}: cannot read: {exc}") from None

    def prepare(self) -> None:
        """Create the baselines directory, or explain why it cannot be used."""
        if self.root.exists() and not self.root.is_dir():
            raise InputError(f"{self.root}: baselines directory is a file, not a directory")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"{self.root}: cannot create baselines directory: {exc}") from None


@dataclass(frozen=True)
class MappingSource:
    """Baselines held in memory: the git index or a commit's tree."""

    files: Mapping[str, bytes]  # relpath -> bytes, including FORMAT_FILE when present
    artifacts: tuple[str, ...]
    label: str
    display_root: str = "baselines"
    kind: SourceKind = SourceKind.COMMIT

    def entries(self) -> list[Baseline]:
        found = [b for p in self.files if (b := parse_relpath(p, self.artifacts)) is not None]
        return sort_baselines(found, self.artifacts)

    def read(self, baseline: Baseline) -> bytes:
        return self.files[baseline.relpath]

    def format_version(self) -> str | None:
        data = self.files.get(FORMAT_FILE)
        return None if data is None else data.decode("utf-8", "replace").strip()

    def display_path(self, baseline: Baseline) -> str:
        return f"{self.display_root}/{baseline.relpath} ({self.label})"


def git_source(config: Config, *, ref: str | None, staged: bool) -> MappingSource:
    """The baselines as staged in the git index, or as of the commit ``ref`` names."""
    from silo_regress import gitio

    repo = gitio.find_repository(config.project)
    directory = repo.path_of(config.baselines_dir)
    shown = config.relative(config.baselines_dir)
    if staged or ref is None:
        index = gitio.read_index(repo, directory)
        unmerged = [
            p
            for p in index.conflicted
            if p == FORMAT_FILE or parse_relpath(p, config.artifacts) is not None
        ]
        if unmerged:
            raise GitError(
                f"{shown}/{unmerged[0]}: unmerged in the git index (a merge conflict"
                + (f", with {len(unmerged) - 1} more" if len(unmerged) > 1 else "")
                + "); resolve it, re-record the task if needed, then `git add` it"
            )
        return MappingSource(
            index.files, config.artifacts, INDEX_LABEL, shown, kind=SourceKind.INDEX
        )
    commit = gitio.resolve_commit(repo, ref)
    return MappingSource(gitio.read_tree(repo, commit, directory), config.artifacts, ref, shown)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so a reader sees the old bytes or the new, never half."""
    write_all_atomic([(path, data)])


def write_all_atomic(files: Sequence[tuple[Path, bytes]]) -> None:
    """Write several files so that each gets its new bytes, or none of them changes.

    Every file is first written in full to a temporary file in its own directory (so
    the rename cannot cross file systems) and fsynced; only then are they renamed
    into place, and a failed rename puts back the files already renamed. A new file
    gets the mode the umask allows, a replaced one keeps its own: mkstemp's 0600
    would hide baselines from everyone else on a shared checkout.
    """
    previous: list[bytes | None] = []
    staged: list[tuple[Path, str]] = []
    try:
        for path, data in files:
            previous.append(_read_previous(path))
            staged.append((path, _stage(path, data)))
    except BaseException:
        _discard(tmp for _, tmp in staged)
        raise
    done = 0
    try:
        for path, tmp in staged:
            os.replace(tmp, path)
            done += 1
    except BaseException as exc:
        _discard(tmp for _, tmp in staged[done:])
        for (path, _), old in zip(staged[:done], previous[:done], strict=True):
            _put_back(path, old)
        if isinstance(exc, OSError):
            failed = staged[done][0]
            raise InputError(
                f"{failed}: cannot write: {exc.strerror or exc}; no baseline was changed"
            ) from None
        raise
    for directory in dict.fromkeys(path.parent for path, _ in staged):
        with contextlib.suppress(OSError):
            dir_fd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)


def _read_previous(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, so it cannot be written as a file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read before replacing it: {exc.strerror}") from None


def _stage(path: Path, data: bytes) -> str:
    """Write ``data`` to a fsynced temporary file beside ``path``; return its name."""
    directory = path.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), _mode_for(path))
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException as exc:
        _discard([tmp])
        if isinstance(exc, OSError):
            raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None
        raise
    return tmp


def _mode_for(path: Path) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        umask = os.umask(0o022)  # the only way to read it is to set it
        os.umask(umask)
        return 0o666 & ~umask


def _put_back(path: Path, old: bytes | None) -> None:
    """Best effort: undo one rename of a failed :func:`write_all_atomic`."""
    with contextlib.suppress(OSError, InputError):
        if old is None:
            path.unlink()
        else:
            os.replace(_stage(path, old), path)


def _discard(temporaries: Iterable[str]) -> None:
    for tmp in temporaries:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
