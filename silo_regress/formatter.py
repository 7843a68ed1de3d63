"""``fmt``: bring baseline files back to canonical form without changing a value."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from silo_regress.baselines import FORMAT_FILE, BaselineStore, parse_relpath, write_atomic
from silo_regress.canonical import FORMAT_VERSION, canonicalize
from silo_regress.config import Config
from silo_regress.errors import InputError
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
    lines: list[str] = []
    problems: list[str] = []
    written = 0
    fixable = True
    # A baseline alone has no run whose clock could tell wall-clock time from
    # simulated time: only today's times are judged (DESIGN.md, "Canonical form").
    clock = Clock.of_machine()
    if paths:
        files = [p if p.is_absolute() else Path.cwd() / p for p in paths]
    else:
        files = [store.root / b.relpath for b in store.entries()]
        version = store.format_version()
        if version != str(FORMAT_VERSION) and (files or version is not None):
            shown = config.relative(store.root / FORMAT_FILE)
            if check_only:
                lines.append(f"format-version  {shown}: holds {version!r}, expected '1'")
                problems.append(shown)
            else:
                write_atomic(store.root / FORMAT_FILE, f"{FORMAT_VERSION}\n".encode())
                lines.append(f"rewrote         {shown}")
                written += 1
    for path in files:
        shown = config.relative(path.resolve()) if path.exists() else str(path)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise InputError(f"{shown}: no such file") from None
        except OSError as exc:
            raise InputError(f"{shown}: cannot read: {exc.strerror}") from None
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
            write_atomic(path, doc.text)
            lines.append(f"reformatted     {shown}")
            written += 1
    return FormatResult(
        lines=tuple(lines),
        problems=tuple(dict.fromkeys(problems)),
        total=len(files),
        written=written,
        reformattable=fixable,
    )


def _artifact_of(config: Config, store: BaselineStore, path: Path) -> str:
    try:
        rel = path.resolve().relative_to(store.root.resolve()).as_posix()
    except ValueError:
        rel = path.name
    baseline = parse_relpath(rel, config.artifacts)
    return baseline.artifact if baseline else path.name
