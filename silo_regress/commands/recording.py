"""``record``: chosen runs made baselines; with ``--repeat N``, each task run N times first
and recorded as the gate it is under asks.

The options' rules (which combine, which exclude each other) are checked here, before
anything is read or started. The policy of ``--repeat``: a task judged only by its
bytes is recorded only when its N rollouts agree (or with ``--force``, its newest
complete run); a task judged statistically is recorded however its bytes differ, with
the tally of every rollout that left a run (one without a result counts as failed);
with ``variants`` every distinct result is an accepted variant. Nothing is written
when a rollout left no run at all (an infrastructure error).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from silo_regress.commands.rollouts import RolloutFlags, Watcher, execute_tasks, report_problems
from silo_regress.commands.sources import working_tree
from silo_regress.errors import InputError, UsageError

if TYPE_CHECKING:
    from silo_regress.judging.tallying import Counted
    from silo_regress.project.config import Config
    from silo_regress.project.taskref import TaskRef
    from silo_regress.recording.recorder import Recording
    from silo_regress.runner import Stability
    from silo_regress.stats.tally import Tally
    from silo_regress.store.baselines import BaselineStore


class RecordEnd(enum.Enum):
    RECORDED = "recorded"
    DISAGREED = "disagreed"  # byte-gated rollouts differ and --force was not given
    NO_RUN = "no-run"  # a rollout left no run at all: nothing was recorded


@dataclass(frozen=True)
class RepeatedRecord:
    """What ``record --repeat`` did: how the rollouts agreed, and what it wrote."""

    end: RecordEnd
    stabilities: tuple[Stability, ...] = ()
    # Per stats task (by label): the tally of every rollout, shown beside its stability.
    counted: tuple[tuple[str, Tally], ...] = ()
    recordings: tuple[Recording, ...] = ()
    tallies: tuple[tuple[Path, bytes], ...] = ()
    stats_tasks: frozenset[TaskRef] = frozenset()
    disagreeing: tuple[str, ...] = ()  # byte-gated tasks whose rollouts differ (labels)
    variants: bool = False


_NO_FLAGS = RolloutFlags()


@dataclass(frozen=True)
class RecordRequest:
    """What ``record`` was asked for."""

    refs: tuple[str, ...] = ()  # task refs, or baseline paths as reports print them
    all_tasks: bool = False
    run_id: str | None = None
    old_run_id: str | None = None  # --run, the deprecated spelling of --run-id
    repeat: int | None = None
    force: bool = False
    variants: bool = False
    add_variant: bool = False
    paths: tuple[str, ...] = ()  # --path POINTER...
    dry_run: bool = False
    flags: RolloutFlags = _NO_FLAGS


@dataclass(frozen=True)
class Recorded:
    """What a ``record`` of existing runs wrote (or, with ``dry_run``, would write)."""

    recordings: tuple[Recording, ...]
    dry_run: bool


def check_request(request: RecordRequest, *, named: bool) -> None:
    """Refuse options that do not go together (exit 2); ``named``: tasks were given."""
    asked = request
    if (asked.paths or asked.dry_run) and asked.repeat is not None:
        raise UsageError("--path and --dry-run record existing runs: give no --repeat with them")
    if asked.paths and asked.add_variant:
        raise UsageError("--path edits the baseline in place: give no --add-variant with it")
    if asked.run_id is not None and asked.old_run_id is not None:
        raise UsageError("give --run-id once (--run is its deprecated spelling)")
    run = asked.run_id or asked.old_run_id
    asked.flags.require(asked.repeat is not None, needs="--repeat")
    if asked.all_tasks and (named or run):
        raise UsageError("--all records every task: give no task refs and no --run-id with it")
    if not (asked.all_tasks or named or run):
        raise UsageError("name the tasks to record (TASK-002, ENV/TASK-002), or use --all")
    if asked.repeat is not None and run:
        raise UsageError("--repeat makes new runs to record: give no --run-id with it")
    if asked.force and asked.repeat is None:
        raise UsageError("--force only applies with --repeat N")
    if asked.variants and asked.repeat is None:
        raise UsageError(
            "--variants only applies with --repeat N (record TASK --add-variant adds one)"
        )
    if asked.variants and asked.force:
        raise UsageError("--variants records every result, --force only the newest: choose one")
    if asked.add_variant and asked.repeat is not None:
        raise UsageError("--add-variant adds one run: use --repeat N --variants for several")


def record(
    config: Config, request: RecordRequest, *, watcher: Watcher
) -> Recorded | RepeatedRecord:
    """Record what ``request`` names: existing runs, or (``--repeat``) new rollouts."""
    from silo_regress.commands.sources import parse_refs
    from silo_regress.recording import recorder
    from silo_regress.recording.acceptance import PathAcceptance, parse_path_choice, read_target
    from silo_regress.runs.cache import index_runs

    targets = [read_target(text, config) for text in request.refs]
    only = {t.ref: t.artifact for t in targets if t is not None and t.artifact is not None}
    parsed = [
        t.ref if t is not None else parse_refs([text])[0]
        for t, text in zip(targets, request.refs, strict=True)
    ]
    check_request(request, named=bool(parsed))
    # Said as they are found (through the watcher), before anything can fail: a skipped
    # run may be why a task has no run to record.
    if request.old_run_id is not None:
        watcher.warn("record --run is deprecated (check --run starts Silo): use --run-id RUN_ID")
    if request.repeat is not None:
        return record_repeated(
            config,
            parsed,
            all_tasks=request.all_tasks,
            repeat=request.repeat,
            force=request.force,
            variants=request.variants,
            flags=request.flags,
            watcher=watcher,
        )
    index = index_runs(config.runs_dir)
    for skipped in index.unidentified:  # e.g. a run.json naming "../x": never a path
        watcher.warn(f"{config.relative(skipped.path)}: skipped, {skipped.reason}")
    store = working_tree(config)
    run = request.run_id or request.old_run_id
    choices = recorder.choose_runs(config, index, parsed, all_tasks=request.all_tasks, run_name=run)
    choices = [replace(c, artifacts=(only[c.ref],)) if only.get(c.ref) else c for c in choices]
    narrow = None
    if request.paths:
        narrow = PathAcceptance(
            tuple(parse_path_choice(p, config.known_artifacts) for p in request.paths)
        )
    add = request.add_variant
    # The dry run and the --path check see what record would write, before the lock.
    recordings = recorder.prepare(config, store, choices, add_variant=add, narrow=narrow)
    if narrow is not None and narrow.unused():
        missing = ", ".join(str(c) for c in narrow.unused())
        raise InputError(
            f"--path {missing}: in no artifact of "
            + ", ".join(str(c.ref) for c in choices)
            + " (neither in the baseline nor in the run); nothing was written"
        )
    if not request.dry_run:
        recordings = recorder.record(config, store, choices, add_variant=add, narrow=narrow)
    return Recorded(tuple(recordings), request.dry_run)


def record_repeated(
    config: Config,
    refs: Sequence[TaskRef],
    *,
    all_tasks: bool,
    repeat: int,
    force: bool,
    variants: bool = False,
    flags: RolloutFlags,
    watcher: Watcher,
) -> RepeatedRecord:
    """Run each task ``repeat`` times and record it as its gate asks (module docstring)."""
    from silo_regress import runner
    from silo_regress.recording import recorder
    from silo_regress.runs.cache import index_runs

    index = index_runs(config.runs_dir)
    store = working_tree(config)
    tasks = runner.plan_tasks(config, index, store, refs, include_run_tasks=all_tasks)
    batch = execute_tasks(config, tasks, repeat=repeat, flags=flags, watcher=watcher)
    if report_problems(batch, watcher):
        return RepeatedRecord(RecordEnd.NO_RUN)
    stabilities = tuple(runner.assess(config, batch, tasks, repeat=repeat))
    stats = frozenset(s.task.ref for s in stabilities if _gated(config, s))
    counted = count_stats_tasks(config, stabilities)
    seen = RepeatedRecord(
        RecordEnd.RECORDED, stabilities, counted, stats_tasks=stats, variants=variants
    )
    if variants:
        return _record_variants(config, store, seen)
    # A task judged statistically is recorded however its rollouts differ: its bytes
    # do not gate it, its tally does.
    disagreeing = tuple(
        s.task.label for s in stabilities if not s.stable and s.task.ref not in stats
    )
    if disagreeing and not force:
        return replace(seen, end=RecordEnd.DISAGREED, disagreeing=disagreeing)
    choices = []
    for stability in stabilities:
        if not stability.runs:
            raise InputError(
                f"{config.relative(config.runs_dir)}: no rollout of {stability.task.label} left "
                "a complete run to record"
            )
        choices.append(recorder.Choice(ref=stability.task.ref, run=stability.runs[-1]))
    tallies: list[tuple[Path, bytes]] = []

    def with_tallies(recordings: Sequence[Recording]) -> Sequence[tuple[Path, bytes]]:
        tallies[:] = _tallies(config, store, stabilities, recordings, repeat=repeat)
        return tallies

    recordings = recorder.record(config, store, choices, extra=with_tallies)
    return replace(
        seen, recordings=tuple(recordings), tallies=tuple(tallies), disagreeing=disagreeing
    )


def count_stats_tasks(
    config: Config, stabilities: Sequence[Stability]
) -> tuple[tuple[str, Tally], ...]:
    """Per stats task (by label), the tally of every rollout that left a run: what its
    stability line shows instead of the bytes that varied."""
    return tuple((s.task.label, _count_every(s).tally) for s in stabilities if _gated(config, s))


def _gated(config: Config, stability: Stability) -> bool:
    from silo_regress.project.config import Gate

    settings = config.task_settings(stability.task.ref, environment=stability.task.key[0])
    return settings.gate is not Gate.EXACT


def _count_every(stability: Stability, variants: dict[str, list[int]] | None = None) -> Counted:
    """Every rollout that left a run counts: one without a result is a failed rollout."""
    from silo_regress.judging.tallying import count_runs

    every = sorted((*stability.runs, *stability.broken), key=lambda r: r.order)
    return count_runs(every, variants=variants or {})


def _tallies(
    config: Config,
    store: BaselineStore,
    stabilities: Sequence[Stability],
    recordings: Sequence[Recording],
    *,
    repeat: int,
) -> list[tuple[Path, bytes]]:
    """The tally of each task's recorded rollouts, beside its baselines (--repeat 2 or more)."""
    from silo_regress.recording import recorder
    from silo_regress.stats.tally import serialize_tally
    from silo_regress.store.baselinenames import tally_relpath

    if repeat < 2:
        return []
    files = []
    for stability, recording in zip(stabilities, recordings, strict=True):
        texts = recorder.rollout_texts(config, recording.ref, stability.runs)
        matches = recorder.count_matches(texts, recording.files)
        counted = _count_every(stability, matches)
        files.append((store.root / tally_relpath(recording.ref), serialize_tally(counted.tally)))
    return files


def _record_variants(config: Config, store: BaselineStore, seen: RepeatedRecord) -> RepeatedRecord:
    from silo_regress.recording import recorder

    recordings = []
    for stability in seen.stabilities:
        if stability.broken or len(stability.runs) < stability.expected:
            raise InputError(
                f"{config.relative(config.runs_dir)}: {len(stability.broken)} of "
                f"{stability.expected} rollouts of {stability.task.label} left no complete "
                "result, so its variants are not known; nothing was recorded"
            )
        recordings.append(
            recorder.prepare_variants(config, store, stability.task.ref, stability.runs)
        )
    repeat = max((s.expected for s in seen.stabilities), default=1)
    tallies = _tallies(config, store, seen.stabilities, recordings, repeat=repeat)
    recorder.write(config, store, recordings, extra=tallies)
    return replace(seen, recordings=tuple(recordings), tallies=tuple(tallies))
