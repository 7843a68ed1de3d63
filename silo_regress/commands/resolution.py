"""``fmt --resolve``: baselines git left with conflict markers, merged as the driver would.

A merge made without the driver (GitHub's editor, a rebase, a fresh clone, an agent)
leaves line conflicts in canonical JSON. Each side is read back from the markers and
the three-way JSON merge runs again, with the best base there is: the ``|||||||``
sections of diff3-style markers, else git's index (stage 1) while the merge is in
progress, else none, which leaves a conflict wherever the sides differ rather than
guess. Every file is read and merged before any is written, all in one batch under
the writer lock: a refusal leaves every file as it was.
"""

from __future__ import annotations

import enum
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from silo_regress.canon.jsonmerge import DocumentMerge, merge_documents
from silo_regress.canon.markers import has_markers, split_sides
from silo_regress.errors import InputError
from silo_regress.project.config import Config
from silo_regress.stats.tally import SUFFIX, conflicted_tally
from silo_regress.store.baselinenames import parse_tally_relpath
from silo_regress.store.baselines import BaselineStore
from silo_regress.system.fsio import FileError, read_regular

LABELS = ("ours", "theirs")


class BaseFrom(enum.Enum):
    """Where the common ancestor of a resolved file came from."""

    DIFF3 = "the diff3 markers"
    INDEX = "git's index (stage 1)"
    NONE = "nowhere: a conflict wherever the sides differ"
    STAGES = "git's index, with both sides (the markers held no JSON)"


@dataclass(frozen=True)
class ResolvedFile:
    shown: str
    base: BaseFrom
    pointers: tuple[str, ...]  # the conflicts left, empty when it merged cleanly

    @property
    def clean(self) -> bool:
        return not self.pointers


@dataclass(frozen=True)
class Resolution:
    files: tuple[ResolvedFile, ...]
    unmarked: tuple[str, ...]  # files given that hold no conflict markers

    @property
    def clean(self) -> bool:
        return all(f.clean for f in self.files)


def resolve_conflicts(config: Config, paths: Sequence[Path]) -> Resolution:
    """Resolve each of ``paths`` (default: every file under the baselines directory
    that holds conflict markers); :class:`InputError` for a file that cannot be."""
    store = BaselineStore.of(config)
    given = [Path(os.path.abspath(p)) for p in paths]
    for path in given:
        problem = store.containment_problem(path)
        if problem is not None:
            raise InputError(
                f"{config.relative(path)}: fmt --resolve does not rewrite it: {problem}"
            )
    if not os.path.isdir(store.root):
        return Resolution((), tuple(config.relative(p) for p in given))
    with store.locked("fmt"):
        files = given or _conflicted_files(store)
        writes: list[tuple[Path, bytes]] = []
        resolved: list[ResolvedFile] = []
        unmarked: list[str] = []
        for path in files:
            shown = config.relative(path)
            try:
                data = read_regular(path, shown=shown, follow=False)
            except FileNotFoundError:
                raise InputError(f"{shown}: no such file") from None
            except FileError as exc:
                raise InputError(f"{exc.message}; fmt --resolve reads only regular files") from None
            if not has_markers(data):
                unmarked.append(shown)
                continue
            if path.name.endswith(SUFFIX):
                relpath = _relpath(store, path)
                ref = parse_tally_relpath(relpath) if relpath else None
                error = conflicted_tally(data, source=shown, task=str(ref) if ref else None)
                if error is not None:
                    raise error
            done, origin = _merged(path, data, shown=shown)
            writes.append((path, done.text))
            pointers = tuple(c.shown for c in done.merge.conflicts)
            resolved.append(ResolvedFile(shown=shown, base=origin, pointers=pointers))
        if writes:
            store.write(writes, command="fmt")
    return Resolution(tuple(resolved), tuple(unmarked))


def _merged(path: Path, data: bytes, *, shown: str) -> tuple[DocumentMerge, BaseFrom]:
    """The merge of the sides the markers hold, with the best base there is.

    Git's line merge can take one side's half of a changed member outside the markers
    (a key then appears twice in the other side read back). While the merge is in
    progress git's index still holds both sides whole (stages 2 and 3): a side read
    from the markers that is not JSON is then merged from there instead."""
    sides = split_sides(data, source=shown)
    assert sides is not None  # the caller saw markers
    stages: dict[int, bytes] | None = None
    base, origin = sides.base, BaseFrom.DIFF3
    if base is None:
        stages = _stages(path)
        base = stages.get(1)
        origin = BaseFrom.INDEX if base is not None else BaseFrom.NONE
    sources = (f"{shown} (base from {origin.value})", f"{shown} (ours)", f"{shown} (theirs)")
    try:
        done = merge_documents(
            base, sides.ours, sides.theirs, name=path.name, sources=sources, labels=LABELS
        )
    except InputError:
        stages = _stages(path) if stages is None else stages
        if not {1, 2, 3} <= stages.keys():
            raise
        done = merge_documents(
            stages[1], stages[2], stages[3], name=path.name, sources=sources, labels=LABELS
        )
        return done, BaseFrom.STAGES
    return done, origin


def _relpath(store: BaselineStore, path: Path) -> str | None:
    try:
        return path.relative_to(store.root).as_posix()
    except ValueError:
        return None


def _conflicted_files(store: BaselineStore) -> list[Path]:
    """Files of the baselines directory and its environment folders holding markers."""
    found: list[Path] = []
    for directory, subdirs, names in os.walk(store.root):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
        if Path(directory) != store.root:
            subdirs[:] = []  # baselines lie at most one folder deep
        for name in sorted(names):
            path = Path(directory) / name
            if name.endswith(".json") and not path.is_symlink() and path.is_file():
                try:
                    data = read_regular(path, shown=str(path), follow=False)
                except (OSError, FileError):
                    continue
                if has_markers(data):
                    found.append(path)
    return found


def _stages(path: Path) -> dict[int, bytes]:
    """Base (1), ours (2) and theirs (3) as git's index holds them while a merge of
    ``path`` is in progress; empty when none is."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    found: dict[int, bytes] = {}
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-u", "-z", "--", path.name],
            cwd=path.parent,
            capture_output=True,
            env=env,
            check=False,
        )
        if listed.returncode != 0:
            return found
        for entry in listed.stdout.split(b"\0"):
            fields = entry.partition(b"\t")[0].split()
            if len(fields) != 3 or fields[2] not in (b"1", b"2", b"3"):
                continue
            blob = subprocess.run(
                ["git", "cat-file", "blob", fields[1].decode()],
                cwd=path.parent,
                capture_output=True,
                env=env,
                check=False,
            )
            if blob.returncode == 0:
                found[int(fields[2])] = blob.stdout
    except OSError:
        return {}
    return found
