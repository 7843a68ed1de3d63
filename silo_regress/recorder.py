"""Turn chosen runs into baselines: validate everything first, then write atomically.

A record either writes every file it was asked for or none: canonicalization and
the volatile scan run for all artifacts before the first byte is written, so a
refused record leaves every old baseline as it was.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, replace

from silo_regress.baselines import FORMAT_FILE, BaselineStore
from silo_regress.canonical import (
    FORMAT_VERSION,
    apply_ignores,
    canonicalize,
    serialize,
)
from silo_regress.config import Config
from silo_regress.errors import InputError, TaskRefError, VolatileContentError
from silo_regress.runclock import clock_of
from silo_regress.runs import Run, RunIndex, newest_complete, read_artifact, result_is_complete
from silo_regress.targets import ref_for_run
from silo_regress.taskref import TaskRef
from silo_regress.toolpath import IncompleteTraceError
from silo_regress.volatile import Clock, might_be_volatile, scan_volatile


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


@dataclass(frozen=True)
class RecordedFile:
    ref: TaskRef
    artifact: str
    path: str
    state: FileState
    data: bytes


@dataclass(frozen=True)
class Recording:
    ref: TaskRef
    run: Run
    files: tuple[RecordedFile, ...]
    passed_over: tuple[str, ...] = ()


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
            raise InputError(
                f"{config.relative(newest.path)}: task {ref} has no complete run to record "
                f"(its newest run has no parseable result.json); run the task again"
            )
        choices.append(Choice(ref=ref, run=run, passed_over=_newer_than(index, key, run)))
    return choices


def _newer_than(index: RunIndex, key: tuple[str, str], run: Run) -> tuple[str, ...]:
    return tuple(r.name for r in index.runs_of(*key) if r.order > run.order)


def _require_key(config: Config, index: RunIndex, ref: TaskRef) -> tuple[str, str]:
    key = index.resolve(ref, default_environment=config.environment)
    if key is None or not index.runs_of(*key):
        if not index.exists:
            raise TaskRefError(
                f"{config.relative(index.runs_dir)}: runs directory does not exist "
                f"(set runs-dir in [tool.silo-regress] or run Silo first)"
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
        raise TaskRefError("--run records one run: give at most one task ref with it")
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
        raise InputError(
            f"{config.relative(run.path / 'result.json')}: missing or incomplete, "
            "so this run has no result to record"
        )
    return Choice(ref=ref, run=run)


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


def prepare(config: Config, store: BaselineStore, choices: Sequence[Choice]) -> list[Recording]:
    """Canonicalize and vet every artifact of every choice; write nothing."""
    version = store.format_version()
    if version is not None and version != str(FORMAT_VERSION):
        raise InputError(
            f"{config.relative(store.root / FORMAT_FILE)}: baselines are in format {version!r}, "
            f"this silo-regress writes format {FORMAT_VERSION}; run `silo-regress fmt` first"
        )
    recordings: list[Recording] = []
    problems: list[str] = []
    for choice in choices:
        files: list[RecordedFile] = []
        clock: Clock | None = None
        for artifact in config.artifacts:
            source = config.relative(choice.run.path / artifact)
            try:
                data = read_artifact(choice.run, artifact, trace_events=config.trace_events)
            except IncompleteTraceError as exc:
                gap = exc.incomplete
                raise InputError(
                    f"{gap.describe(config.relative(gap.path))}, "
                    f"so run {choice.run.name} cannot be recorded"
                ) from None
            if data is None:
                raise InputError(f"{source}: missing, so run {choice.run.name} cannot be recorded")
            doc = canonicalize(data, source=source)
            value = apply_ignores(doc.value, artifact=artifact, ignore=config.ignore)
            text = doc.text if value is doc.value else serialize(value)
            if might_be_volatile(text):
                clock = clock or clock_of(choice.run)
                for finding in scan_volatile(
                    value, artifact=artifact, clock=clock, exempt=config.scan_exempt
                ):
                    problems.append(f"{source} at {finding.pointer}: {finding.reason}")
            path = store.path_for(choice.ref, artifact)
            state = _state(store.read_existing(choice.ref, artifact), text)
            files.append(RecordedFile(choice.ref, artifact, config.relative(path), state, text))
        recordings.append(
            Recording(
                ref=choice.ref, run=choice.run, files=tuple(files), passed_over=choice.passed_over
            )
        )
    if problems:
        shown = "; ".join(problems[:10])
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise VolatileContentError(
            f"refusing to record volatile content: {shown}{more}. Exempt the path with "
            "volatile-exempt or ignore it with ignore in [tool.silo-regress]"
        )
    return recordings


def record(config: Config, store: BaselineStore, choices: Sequence[Choice]) -> list[Recording]:
    """Vet and write the choices under the writer lock, so no other writer interleaves.

    Holding the lock from the read of the old baselines to the last rename is
    what keeps a racing ``fmt`` from putting a just-recorded baseline back.
    """
    recordings = prepare(config, store, choices)  # refuses before anything is created
    with store.locked("record"):
        recordings = [_restated(store, recording) for recording in recordings]
        write(config, store, recordings)
    return recordings


def _restated(store: BaselineStore, recording: Recording) -> Recording:
    """The recording with each file's state as the baselines stand now, under the lock."""
    files = tuple(
        replace(file, state=_state(store.read_existing(file.ref, file.artifact), file.data))
        for file in recording.files
    )
    return replace(recording, files=files)


def _state(old: bytes | None, new: bytes) -> FileState:
    if old is None:
        return FileState.NEW
    return FileState.UNCHANGED if old == new else FileState.CHANGED


def write(config: Config, store: BaselineStore, recordings: Sequence[Recording]) -> None:
    """Write every new or changed file in one go: all of them, or (on failure) none."""
    store.prepare()
    files = [
        (store.path_for(file.ref, file.artifact), file.data)
        for recording in recordings
        for file in recording.files
        if file.state is not FileState.UNCHANGED
    ]
    if store.format_version() is None:
        files.append((store.root / FORMAT_FILE, f"{FORMAT_VERSION}\n".encode()))
    store.write(files, command="record")
