"""Where baselines live, how they are listed and read, and how they are written.

Baselines are read through a :class:`BaselineSource`, so the same comparison runs
against the working tree, the git index (the pre-commit hook) or any commit
(``check --against``). Only :class:`BaselineStore`, the working tree, writes.
"""

from __future__ import annotations

import contextlib
import enum
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from silo_regress.errors import InputError, TaskRefError
from silo_regress.project.config import Config
from silo_regress.project.taskref import TaskRef, unsafe_reason

# How files are named lives in baselinenames; callers import those names from here.
from silo_regress.store.baselinenames import MAX_VARIANTS as MAX_VARIANTS
from silo_regress.store.baselinenames import VARIANT_MARK as VARIANT_MARK
from silo_regress.store.baselinenames import Baseline as Baseline
from silo_regress.store.baselinenames import Refused as Refused
from silo_regress.store.baselinenames import baseline_relpath as baseline_relpath
from silo_regress.store.baselinenames import group_variants as group_variants
from silo_regress.store.baselinenames import layout_problem as layout_problem
from silo_regress.store.baselinenames import parse_relpath as parse_relpath
from silo_regress.store.baselinenames import refusal as refusal
from silo_regress.store.baselinenames import sort_baselines as sort_baselines

FORMAT_FILE = ".silo-regress-format"
INDEX_LABEL = "git index"  # the label of baselines read from the index


class SourceKind(enum.StrEnum):
    """Where a :class:`BaselineSource` reads from."""

    WORKING_TREE = "working-tree"
    INDEX = "index"
    COMMIT = "commit"


def located(kind: SourceKind, ref: str, path: str, git_prefix: str = "") -> str:
    """``path`` named with the source its bytes came from, in git's ``REV:PATH`` spelling.

    ``HEAD~1:baselines/X.json`` is what ``git show`` takes, and ``:baselines/X.json``
    its name for the index's copy (``index:`` would name a branch called index); a
    working-tree path stays plain, since that is the file on disk. ``ref`` is the
    commit as the user named it.
    ``path`` is relative to the project; git reads ``REV:PATH`` from the top of the
    repository, wherever it runs, so a project in a subdirectory puts its
    ``git_prefix`` (``agents/crm/``) in front.
    """
    if kind is SourceKind.WORKING_TREE:
        return path
    return f"{'' if kind is SourceKind.INDEX else ref}:{git_prefix}{path}"


@dataclass(frozen=True)
class Listing:
    """A baselines directory's files named like baselines: those that name a task, sorted,
    and those that name none."""

    baselines: tuple[Baseline, ...]
    refused: tuple[Refused, ...] = ()


class BaselineSource(Protocol):
    """Read-only view of a baselines directory: working tree, index or commit."""

    @property
    def label(self) -> str: ...

    @property
    def kind(self) -> SourceKind: ...

    @property
    def commit(self) -> str | None: ...

    def entries(self) -> list[Baseline]: ...

    def listing(self) -> Listing: ...

    def read(self, baseline: Baseline) -> bytes: ...

    def format_version(self) -> str | None: ...

    def display_path(self, baseline: Baseline) -> str: ...

    def has(self, relpath: str) -> bool:
        """Whether a file (of any name) is at ``relpath`` under the baselines directory."""
        ...

    @property
    def git_prefix(self) -> str: ...


@dataclass(frozen=True)
class BaselineStore:
    """The baselines directory in the working tree.

    Reads never follow a symbolic link and never block: a baseline path that is a
    link, FIFO, device or directory is a verdict for ``check`` and an error for
    writers. Writes go through :mod:`silo_regress.store.transaction` (the writer lock,
    one containment rule, all-or-nothing batches).
    """

    root: Path
    artifacts: tuple[str, ...]
    display_root: str = "baselines"
    project: Path | None = None  # when known, the root must lie inside it to be written

    @classmethod
    def of(cls, config: Config) -> BaselineStore:
        """The project's baselines directory, named in messages as config shows it."""
        return cls(
            config.baselines_dir,
            config.known_artifacts,
            config.relative(config.baselines_dir),
            project=config.project,
        )

    @property
    def label(self) -> str:
        return "working tree"

    @property
    def kind(self) -> SourceKind:
        return SourceKind.WORKING_TREE

    @property
    def commit(self) -> str | None:
        return None

    @property
    def git_prefix(self) -> str:
        return ""  # working-tree labels are the plain path: no REV:PATH to spell

    def path_for(self, ref: TaskRef, artifact: str, variant: int = 1) -> Path:
        for part in (ref.environment, ref.task_id):
            if part is not None and unsafe_reason(part):
                raise TaskRefError(f"task ref {ref} is refused: {unsafe_reason(part)}")
        path = self.root / baseline_relpath(ref, artifact, variant)
        if os.path.islink(path):
            raise TaskRefError(
                f"{self.shown(path)}: is a symbolic link; a baseline is a regular file, "
                "never written through a link (remove it, then record again)"
            )
        root = self.root.resolve()
        if root not in path.resolve().parents:
            raise TaskRefError(
                f"task ref {ref}: {self.shown(path)} would lie outside {self.display_root}"
            )
        return path

    def display_path(self, baseline: Baseline) -> str:
        return f"{self.display_root}/{baseline.relpath}"

    def shown(self, path: Path | str) -> str:
        """``path`` (under the root) as messages name it: ``baselines/TASK.result.json``."""
        text = str(path)
        prefix = str(self.root) + os.sep
        if text.startswith(prefix):
            return f"{self.display_root}/{text[len(prefix) :]}".replace(os.sep, "/")
        return self.display_root if text == str(self.root) else text

    def _check_root(self) -> bool:
        try:
            info = os.stat(self.root)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise InputError(f"{self.display_root}: cannot be read: {exc.strerror}") from None
        if not stat.S_ISDIR(info.st_mode):
            raise InputError(f"{self.display_root}: baselines directory is a file, not a directory")
        return True

    def entries(self) -> list[Baseline]:
        return list(self.listing().baselines)

    def listing(self) -> Listing:
        if not self._check_root():
            return Listing(())
        found: list[Baseline] = []
        refused: list[Refused] = []
        try:
            with os.scandir(self.root) as top:
                for entry in top:
                    if entry.name.startswith("."):
                        continue
                    if entry.is_dir(follow_symlinks=False) and not self._names_one(entry.name):
                        # A directory named a..b.result.json is named, and so is what it holds.
                        self._refuse(entry.name, refused)
                        with os.scandir(entry.path) as inner:
                            for sub in inner:
                                relpath = f"{entry.name}/{sub.name}"
                                # Not only regular files: a FIFO or link named like a
                                # baseline gets a verdict, never a silent skip.
                                if not sub.is_dir(follow_symlinks=False) or self._names_one(
                                    relpath
                                ):
                                    self._add(relpath, found, refused)
                                elif not sub.name.startswith("."):
                                    self._add_deeper(relpath, sub.path, found, refused)
                    elif entry.is_symlink() and entry.is_dir():
                        raise InputError(
                            f"{self.display_root}/{entry.name}: is a symbolic link to a "
                            "directory; silo-regress follows no link in the baselines directory "
                            "(a clone can carry one that points anywhere): replace it by a "
                            "directory or remove it"
                        )
                    else:
                        self._add(entry.name, found, refused)
        except PermissionError as exc:
            raise InputError(
                f"{self.shown(exc.filename)}: cannot be read (permission denied)"
            ) from None
        return Listing(
            tuple(sort_baselines(found, self.artifacts)),
            tuple(sorted(refused, key=lambda r: r.relpath)),
        )

    def _names_one(self, relpath: str) -> bool:
        """A directory named like a baseline is a broken baseline, not an environment."""
        return parse_relpath(relpath, self.artifacts) is not None

    def _add(self, relpath: str, found: list[Baseline], refused: list[Refused]) -> None:
        baseline = parse_relpath(relpath, self.artifacts)
        if baseline is not None:
            found.append(baseline)
        else:
            self._refuse(relpath, refused)

    def _refuse(self, relpath: str, refused: list[Refused]) -> None:
        problem = refusal(relpath, self.artifacts)
        if problem is not None:
            refused.append(problem)

    def _add_deeper(
        self, relpath: str, path: str, found: list[Baseline], refused: list[Refused]
    ) -> None:
        """A subdirectory of an environment, and every name below it: no baseline lies
        there, so one named like a baseline is refused. Links are not followed, dotted
        names not read."""
        self._refuse(relpath, refused)

        def unreadable(exc: OSError) -> None:
            raise exc  # named by listing(), as any unreadable part of the directory

        for top, dirs, files in os.walk(path, onerror=unreadable):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            below = relpath + top[len(path) :].replace(os.sep, "/")
            for name in (*dirs, *files):
                self._add(f"{below}/{name}", found, refused)

    def read(self, baseline: Baseline) -> bytes:
        from silo_regress.system.fsio import FileError, read_regular

        path = f"{self.root}{os.sep}{baseline.relpath}"  # per artifact: cheaper than a join
        shown = self.display_path(baseline)
        try:
            return read_regular(path, shown=shown, follow=False)
        except FileNotFoundError:
            raise FileError(f"{shown}: cannot read baseline: it disappeared") from None

    def has(self, relpath: str) -> bool:
        return os.path.lexists(self.root / relpath)

    def variants_of(self, ref: TaskRef, artifact: str) -> list[Baseline]:
        """Every stored variant of one artifact of one task (misnamed ones last)."""
        directory = self.root / ref.environment if ref.environment else self.root
        prefix = f"{ref.task_id}{VARIANT_MARK}"
        found = []
        names = [f"{ref.task_id}.{artifact}"]
        with contextlib.suppress(OSError):
            names += [n for n in os.listdir(directory) if n.startswith(prefix)]
        for name in names:
            relpath = f"{ref.environment}/{name}" if ref.environment else name
            baseline = parse_relpath(relpath, (artifact,))
            if baseline is not None and baseline.ref == ref and (directory / name).is_file():
                found.append(baseline)
        return group_variants(found).get((ref, artifact), [])

    def read_existing(self, ref: TaskRef, artifact: str, variant: int = 1) -> bytes | None:
        from silo_regress.system.fsio import read_optional

        path = self.path_for(ref, artifact, variant)
        return read_optional(path, shown=self.shown(path), follow=False)

    def format_version(self) -> str | None:
        from silo_regress.system.fsio import read_optional

        shown = f"{self.display_root}/{FORMAT_FILE}"
        if os.path.lexists(self.root) and not os.path.isdir(self.root):
            raise InputError(f"{self.display_root}: baselines directory is a file, not a directory")
        try:
            data = read_optional(self.root / FORMAT_FILE, shown=shown, limit=4096, follow=False)
        except NotADirectoryError:
            raise InputError(
                f"{self.display_root}: baselines directory is a file, not a directory"
            ) from None
        if data is None:
            return None
        try:
            return data.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise InputError(f"{shown}: cannot read: not UTF-8") from None

    def containment_problem(self, path: Path) -> str | None:
        from silo_regress.store.transaction import containment_problem

        return containment_problem(self.root, path, project=self.project)

    def prepare(self) -> None:
        """Create the baselines directory, or explain why it cannot be used."""
        from silo_regress.store.transaction import containment_problem

        probe = self.root / FORMAT_FILE
        problem = containment_problem(self.root, probe, project=self.project)
        if problem is not None and os.path.lexists(self.root):
            raise InputError(f"{self.display_root}: baselines cannot be written: {problem}")
        if os.path.lexists(self.root) and not self.root.is_dir():
            raise InputError(f"{self.display_root}: baselines directory is a file, not a directory")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(
                f"{self.display_root}: cannot create baselines directory: {exc.strerror}"
            ) from None

    def locked(self, command: str) -> contextlib.AbstractContextManager[None]:
        """The writer lock: hold it across reading old baselines and writing new ones."""
        from silo_regress.store.transaction import writer_lock

        self.prepare()
        return writer_lock(self.root, command=command, shown=self.display_root)

    def write(
        self, files: Sequence[tuple[Path, bytes]], *, command: str, removals: Sequence[Path] = ()
    ) -> None:
        """Write every file and remove every one of ``removals`` (paths under the root)
        or, on any failure or signal, none."""
        from silo_regress.store.transaction import commit

        commit(
            self.root,
            files,
            shown=self.shown,
            project=self.project,
            command=command,
            removals=removals,
        )


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so a reader sees the old bytes or the new, never half."""
    from silo_regress.system.fsio import write_atomic as write_one

    write_one(path, data, make_parents=True)


def write_all_atomic(files: Sequence[tuple[Path, bytes]], *, root: Path | None = None) -> None:
    """Write several files under ``root`` so that each gets its new bytes, or none changes.

    ``root`` (default: the files' common directory) is the directory whose
    writer lock, journal and temporary files :mod:`silo_regress.store.transaction` uses.
    """
    from silo_regress.store.transaction import commit

    if not files:
        return
    top = root or Path(os.path.commonpath([path.parent for path, _ in files]))
    commit(top, files, shown=str)
