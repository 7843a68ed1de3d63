"""Turn chosen runs into baselines: validate everything first, then write atomically.

A record either writes every file it was asked for or none: canonicalization and
the volatile scan run for all artifacts before the first byte is written, so a
refused record leaves every old baseline as it was.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from silo_regress.canon.canonical import (
    FORMAT_VERSION,
    apply_ignores,
    canonicalize,
    parse,
    serialize,
)
from silo_regress.canon.jsondiff import diff_values
from silo_regress.canon.volatile import Clock, might_be_volatile, scan_volatile
from silo_regress.errors import InputError, TaskRefError, VolatileContentError
from silo_regress.judging.targets import ref_for_run
from silo_regress.project.config import Config, TaskSettings
from silo_regress.project.taskref import TaskRef
from silo_regress.runs.clock import clock_of
from silo_regress.runs.index import (
    RESULT_FILE,
    Run,
    RunIndex,
    UnreadableArtifactError,
    newest_complete,
    read_artifact,
    result_is_complete,
)
from silo_regress.runs.toolpath import IncompleteTraceError
from silo_regress.store.baselines import (
    FORMAT_FILE,
    MAX_VARIANTS,
    Baseline,
    BaselineStore,
    layout_problem,
)


class TooManyVariantsError(InputError):
    """More distinct behaviours than a task may accept (DESIGN.md: at most 10)."""


class FileState(enum.StrEnum):
    NEW = "new"
    CHANGED = "changed"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class Choice:
    """The run chosen for a task and the ref its baselines are written under."""

    ref: TaskRef
    run: Run
    # Newer runs of the task that crashed or are still being written: recording an
    # older run is right, but it must never happen silently.
    passed_over: tuple[str, ...] = ()
    # Only these artifacts (a baseline path given to record); empty: every artifact.
    artifacts: tuple[str, ...] = ()


@dataclass(frozen=True)
class RecordedFile:
    ref: TaskRef
    artifact: str
    path: str
    state: FileState
    data: bytes
    variant: int = 1
    previous: bytes | None = None  # the baseline it replaces, for the behaviour summary


class Narrowing(Protocol):
    """The value to record instead of the run's: record --path keeps the baseline
    except for the chosen paths."""

    def __call__(
        self, ref: TaskRef, *, artifact: str, run_value: Any, previous: bytes | None, source: str
    ) -> Any: ...


@dataclass(frozen=True)
class Recording:
    ref: TaskRef
    run: Run
    files: tuple[RecordedFile, ...]
    passed_over: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()  # variants a reset removes, as shown to the user


def choose_runs(
    config: Config,
    index: RunIndex,
    refs: Sequence[TaskRef],
    *,
    all_tasks: bool = False,
    run_name: str | None = None,
) -> list[Choice]:
    """Pick the run to record for each task: the named one or the newest complete one."""
    if run_name is not None:
        return [_choose_named(config, index, refs, run_name)]
    if all_tasks:
        return _choose_all(config, index)
    choices: list[Choice] = []
    for ref in refs:
        key = _require_key(config, index, ref)
        run = newest_complete(index, *key)
        if run is None:
            newest = index.runs_of(*key)[0]
            why, fix = "its newest run has no parseable result.json", "run the task again"
            try:
                read_artifact(newest, RESULT_FILE)
            except UnreadableArtifactError as exc:
                # "Permission denied" is fixed with chmod, not by running the task again.
                why = f"{config.relative(newest.path / RESULT_FILE)} {exc.reason}"
                fix = "make it readable, or run the task again"
            raise InputError(
                f"{config.relative(newest.path)}: task {ref} has no complete run to record "
                f"({why}); {fix}"
            )
        choices.append(Choice(ref=ref, run=run, passed_over=_newer_than(index, key, run)))
    return choices


def _newer_than(index: RunIndex, key: tuple[str, str], run: Run) -> tuple[str, ...]:
    return tuple(r.name for r in index.runs_of(*key) if r.order > run.order)


def _require_key(config: Config, index: RunIndex, ref: TaskRef) -> tuple[str, str]:
    key = index.resolve(ref, default_environment=config.environment, config=config.location)
    if key is None or not index.runs_of(*key):
        if not index.exists:
            raise TaskRefError(
                f"{config.relative(index.runs_dir)}: runs directory does not exist "
                f"(set {config.location.key('runs-dir')}, or run Silo first)"
            )
        known = ", ".join(f"{e}/{t}" for e, t in index.task_keys()[:10]) or "none"
        raise TaskRefError(
            f"{config.relative(index.runs_dir)}: no run of task {ref} (tasks with runs: {known})"
        )
    return key


def _choose_named(config: Config, index: RunIndex, refs: Sequence[TaskRef], name: str) -> Choice:
    run = index.find(name)
    if run is None:
        raise InputError(
            f"{config.relative(index.runs_dir / name)}: no such run (or its run.json is unreadable)"
        )
    if len(refs) > 1:
        raise TaskRefError("--run-id records one run: give at most one task ref with it")
    if refs:
        key = _require_key(config, index, refs[0])
        if key != run.key:
            raise TaskRefError(
                f"{config.relative(run.path)} is a run of {run.environment}/{run.task_id}, "
                f"not of {refs[0]}"
            )
        ref = refs[0]
    else:
        ref = ref_for_run(config, index, run.environment, run.task_id)
    if not result_is_complete(run):
        raise InputError(f"{_why_incomplete(config, run)}, so this run has no result to record")
    return Choice(ref=ref, run=run)


def _why_incomplete(config: Config, run: Run) -> str:
    """The exact reason, JSON Pointer included, that a run's result.json is unusable."""
    shown = config.relative(run.path / "result.json")
    try:
        data = read_artifact(run, "result.json")
        if data is None:
            return f"{shown}: missing"
        value = canonicalize(data, source=shown).value
    except InputError as exc:
        return exc.message
    except (OSError, ValueError):
        return f"{shown}: missing or incomplete"
    return f"{shown}: not a JSON object" if not isinstance(value, dict) else f"{shown}: incomplete"


def _choose_all(config: Config, index: RunIndex) -> list[Choice]:
    choices = []
    for environment, task_id in index.task_keys():
        run = newest_complete(index, environment, task_id)
        if run is not None:
            ref = ref_for_run(config, index, environment, task_id)
            newer = _newer_than(index, (environment, task_id), run)
            choices.append(Choice(ref=ref, run=run, passed_over=newer))
    if not choices:
        raise InputError(
            f"{config.relative(index.runs_dir)}: no complete run to record"
            + ("" if index.exists else " (the runs directory does not exist)")
        )
    return sorted(choices, key=lambda c: c.ref.sort_key())


def prepare(
    config: Config,
    store: BaselineStore,
    choices: Sequence[Choice],
    *,
    add_variant: bool = False,
    narrow: Narrowing | None = None,
    expected: Mapping[tuple[TaskRef, str], bytes] | None = None,
) -> list[Recording]:
    """Canonicalize and vet every artifact of every choice; write nothing.

    By default each artifact is reset to one variant (its other variants are
    removed); ``add_variant`` keeps them and adds the run as the next variant
    unless it equals one already. ``expected`` holds, per (task, artifact), the
    canonical run text a reviewer was shown: a run that reads otherwise now is
    refused rather than recorded unseen.
    """
    _require_format(config, store)
    recordings: list[Recording] = []
    problems: list[str] = []
    for choice in choices:
        files: list[RecordedFile] = []
        removed: list[str] = []
        texts = _vetted(
            config,
            choice.run,
            problems,
            ref=choice.ref,
            artifacts=choice.artifacts,
            narrowed=(narrow, store, choice.ref) if narrow is not None else None,
            expected={a: t for (r, a), t in (expected or {}).items() if r == choice.ref},
        )
        for artifact, text in texts.items():
            existing = store.variants_of(choice.ref, artifact)
            if add_variant:
                files.append(_added(config, store, choice.ref, artifact, text, existing))
            else:
                files.append(_file(config, store, choice.ref, artifact, text, 1))
                removed += [_shown(config, store, b) for b in existing if b.variant != 1]
        recordings.append(
            Recording(
                ref=choice.ref,
                run=choice.run,
                files=tuple(files),
                passed_over=choice.passed_over,
                removed=tuple(removed),
            )
        )
    _refuse_volatile(problems, config=config)
    return recordings


def prepare_variants(
    config: Config, store: BaselineStore, ref: TaskRef, runs: Sequence[Run]
) -> Recording:
    """``record --repeat N --variants``: every distinct result of ``runs`` as a variant.

    Per artifact the most frequent result is variant 1, then the others by how
    often (then how early) they appeared. The task's old variants are replaced.
    """
    _require_format(config, store)
    problems: list[str] = []
    results = [_vetted(config, run, problems, ref=ref) for run in runs]
    _refuse_volatile(problems, config=config)
    files: list[RecordedFile] = []
    removed: list[str] = []
    for artifact in _settings(config, ref, runs[-1]).artifacts:
        seen: dict[bytes, int] = {}
        for texts in results:
            seen[texts[artifact]] = seen.get(texts[artifact], 0) + 1
        distinct = sorted(seen, key=lambda t: -seen[t])  # stable: earlier first on a tie
        if len(distinct) > MAX_VARIANTS:
            raise TooManyVariantsError(_too_many(config, runs, artifact, distinct))
        for number, text in enumerate(distinct, start=1):
            files.append(_file(config, store, ref, artifact, text, number))
        stale = store.variants_of(ref, artifact)
        removed += [_shown(config, store, b) for b in stale if not 1 <= b.variant <= len(distinct)]
    return Recording(ref=ref, run=runs[-1], files=tuple(files), removed=tuple(removed))


def _require_format(config: Config, store: BaselineStore) -> None:
    version = store.format_version()
    if version is not None and version != str(FORMAT_VERSION):
        raise InputError(
            f"{config.relative(store.root / FORMAT_FILE)}: baselines are in format {version!r}, "
            f"this silo-regress writes format {FORMAT_VERSION}; run `silo-regress fmt` first"
        )


def _vetted(
    config: Config,
    run: Run,
    problems: list[str],
    *,
    ref: TaskRef,
    artifacts: Sequence[str] = (),
    narrowed: tuple[Narrowing, BaselineStore, TaskRef] | None = None,
    expected: Mapping[str, bytes] | None = None,
) -> dict[str, bytes]:
    """The canonical text of each artifact of ``run``; volatile findings go to ``problems``.

    With ``narrowed``, each value is what the narrowing makes of it and the old
    baseline, and only that is scanned: record --path writes nothing else.
    """
    texts: dict[str, bytes] = {}
    clock: Clock | None = None
    settings = _settings(config, ref, run)
    for artifact in artifacts or settings.artifacts:
        source = config.relative(run.path / artifact)
        try:
            data = read_artifact(run, artifact, trace_events=config.trace_events)
        except IncompleteTraceError as exc:
            gap = exc.incomplete
            raise InputError(
                f"{gap.describe(config.relative(gap.path))}, so run {run.name} cannot be recorded"
            ) from None
        if data is None:
            raise InputError(f"{source}: missing, so run {run.name} cannot be recorded")
        doc = canonicalize(data, source=source)
        value = apply_ignores(doc.value, artifact=artifact, ignore=settings.ignore)
        if expected and artifact in expected:
            seen = doc.text if value is doc.value else serialize(value)
            if seen != expected[artifact]:
                raise InputError(
                    f"{source}: changed since it was shown, so it was not accepted (nothing "
                    "was written); run `silo-regress review` again to see it as it is now"
                )
        if narrowed is not None:
            narrow, store, ref = narrowed
            old = store.read_existing(ref, artifact)
            value = narrow(ref, artifact=artifact, run_value=value, previous=old, source=source)
        text = doc.text if value is doc.value else serialize(value)
        if might_be_volatile(text):
            clock = clock or clock_of(run)
            for finding in scan_volatile(
                value, artifact=artifact, clock=clock, exempt=settings.scan_exempt
            ):
                problems.append(f"{source} at {finding.pointer}: {finding.reason}")
        texts[artifact] = text
    return texts


def _settings(config: Config, ref: TaskRef, run: Run) -> TaskSettings:
    """The task's own table (artifacts, ignore, volatile-exempt), as ``check`` judges it."""
    return config.task_settings(ref, environment=run.environment)


def _refuse_volatile(problems: Sequence[str], *, config: Config) -> None:
    if problems:
        shown = "; ".join(problems[:10])
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise VolatileContentError(
            f"refusing to record volatile content: {shown}{more}. Exempt the path with "
            f"volatile-exempt or ignore it with ignore in {config.location} (or in the "
            'task\'s own [tasks."ENV/TASK"] table)'
        )


def _file(
    config: Config, store: BaselineStore, ref: TaskRef, artifact: str, text: bytes, variant: int
) -> RecordedFile:
    path = store.path_for(ref, artifact, variant)
    old = store.read_existing(ref, artifact, variant)
    state = (
        FileState.NEW if old is None else FileState.UNCHANGED if old == text else FileState.CHANGED
    )
    return RecordedFile(ref, artifact, config.relative(path), state, text, variant, previous=old)


def _added(
    config: Config,
    store: BaselineStore,
    ref: TaskRef,
    artifact: str,
    text: bytes,
    existing: Sequence[Baseline],
) -> RecordedFile:
    problem = layout_problem(existing, shown=lambda b: _shown(config, store, b))
    if problem is not None:
        raise InputError(f"{problem} before a variant can be added")
    for baseline in existing:
        if store.read_existing(ref, artifact, baseline.variant) == text:
            return _file(config, store, ref, artifact, text, baseline.variant)
    number = len(existing) + 1
    if number > MAX_VARIANTS:
        raise TooManyVariantsError(
            f"{_shown(config, store, existing[0])}: already has {MAX_VARIANTS} accepted "
            "variants; ignore the paths that vary (ignore in config), or reset the task "
            f"with `silo-regress record {ref}`"
        )
    return _file(config, store, ref, artifact, text, number)


def _shown(config: Config, store: BaselineStore, baseline: Baseline) -> str:
    return config.relative(store.root / baseline.relpath)


def _too_many(config: Config, runs: Sequence[Run], artifact: str, distinct: Sequence[bytes]) -> str:
    values = [parse(text, source=artifact) for text in distinct]
    paths: dict[str, None] = {}
    for other in values[1:]:
        for change in diff_values(values[0], other):
            paths.setdefault(change.path or "(whole document)", None)
    named = ", ".join(list(paths)[:10]) + (
        f" and {len(paths) - 10} more" if len(paths) > 10 else ""
    )
    return (
        f"refusing to record {len(distinct)} variants of {artifact} from {len(runs)} rollouts "
        f"(at most {MAX_VARIANTS}); the paths that vary: {named}. Ignore them (ignore in "
        "config) so the task has fewer behaviours. Nothing was recorded"
    )


def rollout_texts(config: Config, ref: TaskRef, runs: Sequence[Run]) -> list[dict[str, bytes]]:
    """Each run's canonical artifacts as they would be recorded (ignores applied), for
    counting which rollouts match which recorded variant. Volatile content is refused
    where the baselines are written, not here."""
    return [_vetted(config, run, [], ref=ref) for run in runs]


def count_matches(
    texts: Sequence[dict[str, bytes]], recorded: Sequence[RecordedFile]
) -> dict[str, list[int]]:
    """Per artifact, how many of the rollouts (``texts``) equal variant 1, 2, ..."""
    counts: dict[str, list[int]] = {}
    for file in recorded:
        numbers = counts.setdefault(file.artifact, [])
        numbers.extend([0] * (file.variant - len(numbers)))
        numbers[file.variant - 1] += sum(1 for t in texts if t.get(file.artifact) == file.data)
    return counts


def record(
    config: Config,
    store: BaselineStore,
    choices: Sequence[Choice],
    *,
    add_variant: bool = False,
    narrow: Narrowing | None = None,
    expected: Mapping[tuple[TaskRef, str], bytes] | None = None,
    extra: Callable[[Sequence[Recording]], Sequence[tuple[Path, bytes]]] | None = None,
) -> list[Recording]:
    """Vet and write the choices under the writer lock, so no other writer interleaves.

    The new bytes are computed under the lock, from the baselines as they stand
    then: ``--add-variant`` numbers its variant and ``--path`` splices into the old
    baseline, so bytes computed before it would undo a writer that finished in
    between (a lost variant). Holding it to the last rename is also what keeps a
    racing ``fmt`` from putting a just-recorded baseline back.
    """

    def prepared() -> list[Recording]:
        return prepare(
            config, store, choices, add_variant=add_variant, narrow=narrow, expected=expected
        )

    if not store.root.is_dir():
        prepared()  # refuses before the lock creates the baselines directory
    with store.locked("record"):
        recordings = prepared()
        # Tallies (record --repeat) from the recordings as written: one batch with them.
        write(config, store, recordings, extra=extra(recordings) if extra else ())
    return recordings


def write(
    config: Config,
    store: BaselineStore,
    recordings: Sequence[Recording],
    *,
    extra: Sequence[tuple[Path, bytes]] = (),
) -> None:
    """Write every new or changed file in one go: all of them, or (on failure) none.

    Variants a reset leaves behind are removed only once every new file is in
    place (and under the same writer lock), so an interrupted record never leaves
    a task with fewer behaviours than it had before.
    """
    store.prepare()
    files = [
        (store.path_for(file.ref, file.artifact, file.variant), file.data)
        for recording in recordings
        for file in recording.files
        if file.state is not FileState.UNCHANGED
    ]
    files += extra  # tallies (record --repeat): in the same all-or-nothing batch
    if store.format_version() is None:
        files.append((store.root / FORMAT_FILE, f"{FORMAT_VERSION}\n".encode()))
    with store.locked("record"):
        store.write(files, command="record")
        for recording in recordings:
            for shown in recording.removed:
                try:
                    (config.project / shown).unlink(missing_ok=True)
                except OSError as exc:
                    message = f"{shown}: cannot remove the old variant: {exc.strerror}"
                    raise InputError(message) from None
