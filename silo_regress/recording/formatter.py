"""``fmt``: bring baseline files back to canonical form without changing a value.

``fmt`` is a writer like ``record``: it holds the writer lock from the first
read to the last rename (a ``record`` racing it can no longer have its new
baselines put back), it writes nothing outside the baselines directory and
through no symbolic link, and it writes all its files in one batch or none.
``fmt --check`` only reads, and takes no lock.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from silo_regress.canon.canonical import FORMAT_VERSION, canonicalize
from silo_regress.canon.volatile import Clock, might_be_volatile, scan_volatile
from silo_regress.errors import InputError
from silo_regress.project.config import Config
from silo_regress.store.baselinenames import parse_tally_relpath
from silo_regress.store.baselines import (
    FORMAT_FILE,
    MAX_VARIANTS,
    Baseline,
    BaselineStore,
    Refused,
    baseline_relpath,
    group_variants,
    layout_problem,
    parse_relpath,
    refusal,
)
from silo_regress.system.fsio import FileError, read_regular


@dataclass(frozen=True)
class FormatResult:
    lines: tuple[str, ...]
    problems: tuple[str, ...]  # paths that are not canonical or hold volatile content
    total: int
    written: int
    reformattable: bool  # every problem is one `fmt` can fix


def format_baselines(config: Config, paths: Sequence[Path], *, check_only: bool) -> FormatResult:
    store = BaselineStore.of(config)
    files = [Path(os.path.abspath(p)) for p in paths]
    if not check_only:
        for path in files:
            problem = store.containment_problem(path)
            if problem is not None:
                raise InputError(f"{_shown(config, path)}: fmt does not rewrite it: {problem}")
    with _writer(store, enabled=not check_only and _has_root(store)):
        return _format(config, store, files, check_only=check_only)


def _has_root(store: BaselineStore) -> bool:
    return os.path.isdir(store.root) and not os.path.islink(store.root)


@contextlib.contextmanager
def _writer(store: BaselineStore, *, enabled: bool) -> Iterator[None]:
    if not enabled:
        yield
        return
    with store.locked("fmt"):
        yield


def _format(
    config: Config, store: BaselineStore, given: list[Path], *, check_only: bool
) -> FormatResult:
    lines: list[str] = []
    problems: list[str] = []
    writes: list[tuple[Path, bytes]] = []
    fixable = True
    # A baseline alone has no run whose clock could tell wall-clock time from
    # simulated time: only today's times are judged (DESIGN.md, "Canonical form").
    clock = Clock.of_machine()
    if given:
        files, refused, named = _refused_apart(config, store, given)
        tallies = [p for p in files if _is_tally(store, p)]
        files = [p for p in files if p not in tallies]
    else:
        listing = store.listing()
        named = {store.root / b.relpath: b.artifact for b in listing.baselines}
        files = list(named)
        refused = list(listing.refused)
        tallies = _tallies_in(store)
    for item in refused:
        from silo_regress.judging.refusals import describe

        # Renaming needs the task that was meant, which the name does not say.
        shown = store.shown(store.root / item.shown)
        lines.append(f"refused         {describe(item, shown)}")
        problems.append(shown)
        fixable = False
    if not given:
        version = store.format_version()
        if version != str(FORMAT_VERSION) and (files or version is not None):
            shown = store.shown(store.root / FORMAT_FILE)
            if check_only:
                lines.append(f"format-version  {shown}: holds {version!r}, expected '1'")
                problems.append(shown)
            else:
                writes.append((store.root / FORMAT_FILE, f"{FORMAT_VERSION}\n".encode()))
                lines.append(f"rewrote         {shown}")
    for path in files:
        shown = _shown(config, path)
        try:
            data = read_regular(path, shown=shown, follow=False)
        except FileNotFoundError:
            raise InputError(f"{shown}: no such file") from None
        except FileError as exc:
            if exc.kind is None:
                raise
            # A FIFO, link or directory named like a baseline: a finding, never a hang.
            lines.append(f"invalid         {exc.message}")
            problems.append(shown)
            fixable = False
            continue
        try:
            doc = canonicalize(data, source=shown)
        except InputError as exc:
            lines.append(f"invalid         {exc.message}")
            problems.append(shown)
            fixable = False
            continue
        artifact = named.get(path) or _artifact_of(config, store, path)
        if might_be_volatile(doc.text):
            findings = scan_volatile(
                doc.value, artifact=artifact, clock=clock, exempt=config.scan_exempt
            )
            if findings:
                where = ", ".join(f"{f.pointer} ({f.reason})" for f in findings[:5])
                lines.append(f"volatile        {shown}: {where}")
                problems.append(shown)
                fixable = False
        if doc.text == data:
            continue
        if check_only:
            lines.append(f"not-canonical   {shown}: would be rewritten by `silo-regress fmt`")
            problems.append(shown)
        else:
            writes.append((path, doc.text))
            lines.append(f"reformatted     {shown}")
    for path in tallies:
        finding = _format_tally(config, path, check_only=check_only)
        if finding is None:
            continue
        line, rewrite, is_problem = finding
        lines.append(line)
        if is_problem:
            problems.append(_shown(config, path))
            fixable = fixable and line.startswith("not-canonical")
        if rewrite is not None:
            writes.append((path, rewrite))
    if writes:
        store.write(writes, command="fmt")
    only = None if not given else {_relpath(store, p) for p in files}
    fixes = _renumber(config, store, check_only=check_only, only=only)
    lines += fixes.lines
    problems += fixes.problems
    fixable = fixable and fixes.fixable
    return FormatResult(
        lines=tuple(lines),
        problems=tuple(dict.fromkeys(problems)),
        total=len(files) + len(refused) + len(tallies),
        written=len(writes) + fixes.written,
        reformattable=fixable,
    )


def _is_tally(store: BaselineStore, path: Path) -> bool:
    relpath = _inside(store, path)
    return relpath is not None and parse_tally_relpath(relpath) is not None


def _tallies_in(store: BaselineStore) -> list[Path]:
    """The stats gate's tally files: ``TASK.tally.json`` and ``ENV/TASK.tally.json``."""
    found = []
    with contextlib.suppress(OSError):
        for entry in sorted(os.scandir(store.root), key=lambda e: e.name):
            if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
                with contextlib.suppress(OSError):
                    for inner in sorted(os.scandir(entry.path), key=lambda e: e.name):
                        if parse_tally_relpath(f"{entry.name}/{inner.name}") is not None:
                            found.append(Path(inner.path))
            elif parse_tally_relpath(entry.name) is not None:
                found.append(Path(entry.path))
    return found


def _format_tally(
    config: Config, path: Path, *, check_only: bool
) -> tuple[str, bytes | None, bool] | None:
    """(report line, bytes to write, is a problem) for one tally; None when it is fine.

    A tally is validated on its canonical bytes: an impossible count is refused (fmt
    never invents a count), a mere layout difference is rewritten."""
    from silo_regress.stats.tally import check_tally_size, parse_tally

    shown = _shown(config, path)
    try:
        data = read_regular(path, shown=shown, follow=False)
        check_tally_size(data, source=shown)  # before a 100 MB file is parsed as JSON
        doc = canonicalize(data, source=shown)
        parse_tally(doc.text, source=shown)
    except (InputError, FileError) as exc:
        return f"invalid         {exc.message}", None, True
    if doc.text == data:
        return None
    if check_only:
        return f"not-canonical   {shown}: would be rewritten by `silo-regress fmt`", None, True
    return f"reformatted     {shown}", doc.text, False


def _shown(config: Config, path: Path) -> str:
    return config.relative(path)


def _refused_apart(
    config: Config, store: BaselineStore, given: list[Path]
) -> tuple[list[Path], list[Refused], dict[Path, str]]:
    """The given files that fmt reads, those under the baselines directory whose name
    maps to no task (the pre-commit fmt hook passes what is staged, whatever its name),
    and the artifact of each file that a baseline's name gives one."""
    files: list[Path] = []
    refused: list[Refused] = []
    named: dict[Path, str] = {}
    artifacts = config.known_artifacts
    for path in given:
        relpath = _inside(store, path)
        if relpath is not None:
            baseline = parse_relpath(relpath, artifacts)
            if baseline is not None:
                named[path] = baseline.artifact
            elif (found := refusal(relpath, artifacts)) is not None:
                refused.append(found)
                continue
        files.append(path)
    return files, refused, named


def _inside(store: BaselineStore, path: Path) -> str | None:
    """``path`` relative to the baselines directory, or None when it lies elsewhere.

    String arithmetic, as in Config.relative: the fmt hook passes every staged file."""
    text, prefix = str(path), f"{store.root}{os.sep}"
    if not text.startswith(prefix):
        # Reached through a link to a directory; the file itself may be a link, kept as is.
        text = os.path.join(os.path.realpath(path.parent), path.name)
        prefix = f"{os.path.realpath(store.root)}{os.sep}"
        if not text.startswith(prefix):
            return None
    return text[len(prefix) :].replace(os.sep, "/")


@dataclass
class _Fixes:
    """What renumbering did, gathered while it goes."""

    lines: list[str]
    problems: list[str]
    written: int
    fixable: bool


def _relpath(store: BaselineStore, path: Path) -> str:
    try:
        return path.resolve().relative_to(store.root.resolve()).as_posix()
    except ValueError:
        return path.name


def _renumber(
    config: Config, store: BaselineStore, *, check_only: bool, only: set[str] | None
) -> _Fixes:
    """Number each artifact's variants 1..N again: drop exact copies, close gaps, rename ~01.

    Every distinct variant is kept: the new files are all in place before any old
    name is removed, so an interrupted fmt leaves a copy, never a loss.
    """
    fixes = _Fixes([], [], 0, True)
    for variants in group_variants(store.entries()).values():
        if only is not None and not any(b.relpath in only for b in variants):
            continue
        shown = {b.relpath: config.relative(store.root / b.relpath) for b in variants}
        contents: dict[bytes, Baseline] = {}
        for baseline in variants:
            try:
                data = canonicalize(store.read(baseline), source=shown[baseline.relpath]).text
            except InputError:
                data = store.read(baseline)  # reported above as invalid; kept as it is
            contents.setdefault(data, baseline)
        kept = list(contents.items())
        wanted = {
            baseline_relpath(variants[0].ref, variants[0].artifact, n): data
            for n, (data, _) in enumerate(kept, start=1)
        }
        problem = layout_problem(variants, shown=lambda b: config.relative(store.root / b.relpath))
        copies = len(variants) - len(kept)
        if len(kept) > MAX_VARIANTS:
            fixes.fixable = False
        if problem is None and not copies:
            continue
        first = shown[variants[0].relpath]
        why = problem or f"{first}: {copies} variant(s) identical to another"
        if check_only:
            fixes.lines.append(f"variants        {why}")
            fixes.problems.append(first)
            continue
        renamed = {b.relpath: n for n, (_, b) in enumerate(kept, start=1)}
        moved = [
            b
            for b in variants
            if b.relpath not in renamed
            or baseline_relpath(b.ref, b.artifact, renamed[b.relpath]) != b.relpath
        ]
        if moved:
            store.write([(store.root / rel, data) for rel, data in wanted.items()], command="fmt")
            for baseline in variants:
                if baseline.relpath not in wanted:
                    (store.root / baseline.relpath).unlink(missing_ok=True)
            fixes.written += len(wanted)
        # Only the files whose name changed: 11 variants numbered 1..11 are not renumbered.
        for baseline in moved:
            number = renamed.get(baseline.relpath)
            done = f"variant {number}" if number else "dropped, a copy of another variant"
            fixes.lines.append(f"renumbered      {shown[baseline.relpath]}: {done}")
        if len(kept) > MAX_VARIANTS:
            fixes.lines.append(f"variants        {why}")
            fixes.problems.append(first)
    return fixes


def _artifact_of(config: Config, store: BaselineStore, path: Path) -> str:
    try:
        rel = path.relative_to(store.root).as_posix()
    except ValueError:
        rel = path.name
    baseline = parse_relpath(rel, config.known_artifacts)
    return baseline.artifact if baseline else path.name
