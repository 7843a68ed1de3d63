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

from silo_regress.baselines import FORMAT_FILE, BaselineStore, parse_relpath
from silo_regress.canonical import FORMAT_VERSION, canonicalize
from silo_regress.config import Config
from silo_regress.errors import InputError
from silo_regress.fsio import FileError, read_regular
from silo_regress.volatile import Clock, might_be_volatile, scan_volatile


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
    files = given or [store.root / b.relpath for b in store.entries()]
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
        artifact = _artifact_of(config, store, path)
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
    if writes:
        store.write(writes, command="fmt")
    return FormatResult(
        lines=tuple(lines),
        problems=tuple(dict.fromkeys(problems)),
        total=len(files),
        written=len(writes),
        reformattable=fixable,
    )


def _shown(config: Config, path: Path) -> str:
    return config.relative(path)


def _artifact_of(config: Config, store: BaselineStore, path: Path) -> str:
    try:
        rel = path.relative_to(store.root).as_posix()
    except ValueError:
        rel = path.name
    baseline = parse_relpath(rel, config.artifacts)
    return baseline.artifact if baseline else path.name
