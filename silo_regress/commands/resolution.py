"""``fmt --resolve``: baselines git left with conflict markers, merged as the driver would.

A merge made without the driver (GitHub's editor, a rebase, a fresh clone, an agent)
leaves line conflicts in canonical JSON. While a merge (rebase, cherry-pick) of a file
is in progress and the file is still exactly what git wrote, git's index holds the
three documents whole: they merge as the driver would have, whatever git's line merge
did outside the markers. Otherwise (no merge in progress, or a file someone edited)
each side is read back from the markers, with the best base there is: the ``|||||||``
sections of diff3-style markers, else git's index (stage 1), else none, which leaves a
conflict wherever the sides differ rather than guess. Every file is read and merged
before any is written, all in one batch under the writer lock: a refusal leaves every
file as it was."""

from __future__ import annotations

import enum
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from silo_regress.canon.jsonmerge import DocumentMerge, merge_documents, rules_for, unsplice
from silo_regress.canon.markers import has_markers, split_sides
from silo_regress.errors import InputError
from silo_regress.project.config import Config
from silo_regress.stats.tally import SUFFIX, conflicted_tally
from silo_regress.store.baselinenames import parse_tally_relpath
from silo_regress.store.baselines import BaselineStore
from silo_regress.system.fsio import FileError, read_regular
from silo_regress.vcs.mergestages import read_stages, written_by_git

LABELS = ("ours", "theirs")


class BaseFrom(enum.Enum):
    """Where the common ancestor of a resolved file came from."""

    DIFF3 = "the diff3 markers"
    INDEX = "git's index (stage 1)"
    NONE = "nowhere: a conflict wherever the sides differ"


class ReadFrom(enum.Enum):
    """Where the two sides of a resolved file came from."""

    STAGES = "git's index (stages 2 and 3): the file is as git wrote it"
    MARKERS = "the markers: no merge of it is in progress"
    # not byte for byte what git's line merge writes from the stages: edited since, or
    # written by the merge driver, or by a git that this one cannot re-create
    EDITED = "the markers: the file is not what git's line merge wrote (edited since?)"


@dataclass(frozen=True)
class ResolvedFile:
    shown: str
    read: ReadFrom
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
            done, read, origin = _merged(path, data, shown=shown)
            writes.append((path, done.text))
            pointers = tuple(c.shown for c in done.merge.conflicts)
            resolved.append(ResolvedFile(shown=shown, read=read, base=origin, pointers=pointers))
        if writes:
            store.write(writes, command="fmt")
    return Resolution(tuple(resolved), tuple(unmarked))


def _merged(path: Path, data: bytes, *, shown: str) -> tuple[DocumentMerge, ReadFrom, BaseFrom]:
    """The merge of the file's two sides, read from the best place there is.

    While a merge of the path is in progress and the file is still what git wrote,
    git's index holds the three documents whole: they merge exactly as the driver
    would have, whatever git's line merge did outside the markers. Otherwise the sides
    come from the markers, with the base from diff3 markers, else stage 1, else none."""
    sides = split_sides(data, source=shown)
    assert sides is not None  # the caller saw markers
    stages = read_stages(path)
    if stages is not None and written_by_git(path, data, stages):
        origin = BaseFrom.INDEX if stages.base is not None else BaseFrom.NONE
        sources = (
            f"{shown} (git's index, stage 1)",
            f"{shown} (git's index, stage 2: ours)",
            f"{shown} (git's index, stage 3: theirs)",
        )
        done = merge_documents(
            stages.base, stages.ours, stages.theirs, name=path.name, sources=sources, labels=LABELS
        )
        return done, ReadFrom.STAGES, origin
    read = ReadFrom.MARKERS if stages is None else ReadFrom.EDITED
    base, origin = sides.base, BaseFrom.DIFF3
    if base is None:
        base = stages.base if stages is not None else None
        origin = BaseFrom.INDEX if base is not None else BaseFrom.NONE
    sources = (f"{shown} (base from {origin.value})", f"{shown} (ours)", f"{shown} (theirs)")
    rules = rules_for(path.name)
    if origin is BaseFrom.DIFF3:
        base = unsplice(base, sides.base_marked, rules=rules) if base is not None else None
    ours = unsplice(sides.ours, sides.ours_marked, rules=rules)
    theirs = unsplice(sides.theirs, sides.theirs_marked, rules=rules)
    try:
        done = merge_documents(base, ours, theirs, name=path.name, sources=sources, labels=LABELS)
    except InputError as exc:
        if read is not ReadFrom.EDITED:
            raise
        # git's index would merge, but it would also drop whatever the person changed
        raise InputError(
            f"{exc.message}; the file is not what git's line merge wrote (edited since?), "
            f"so git's index is not used: fix the markers by hand, or have git write it again with "
            f"`git checkout --merge -- {shown}`"
        ) from None
    return done, read, origin


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
