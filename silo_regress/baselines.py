"""Where baselines live, how they are named and listed, and how they are written.

Baselines are read through a :class:`BaselineSource`, so the same comparison runs
against the working tree, the git index (the pre-commit hook) or any commit
(``check --against``). Only :class:`BaselineStore`, the working tree, writes.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from silo_regress.errors import InputError, TaskRefError
from silo_regress.taskref import TaskRef, unsafe_reason

FORMAT_FILE = ".silo-regress-format"


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

    @property
    def label(self) -> str:
        return "working tree"

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
        path = self.root / baseline.relpath
        try:
            return path.read_bytes()
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

    def write_format_version(self, version: int) -> None:
        write_atomic(self.root / FORMAT_FILE, f"{version}\n".encode())


@dataclass(frozen=True)
class MappingSource:
    """Baselines held in memory: the git index or a commit's tree."""

    files: Mapping[str, bytes]  # relpath -> bytes, including FORMAT_FILE when present
    artifacts: tuple[str, ...]
    label: str
    display_root: str = "baselines"

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


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so a reader sees the old bytes or the new, never half.

    The temporary file lives in the same directory, so the rename cannot cross
    file systems; it is fsynced before the rename, and the directory after it.
    """
    directory = path.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None
        raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
