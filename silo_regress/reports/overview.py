"""One row per task for ``status``: baselines, newest run, verdict, and loose ends."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from silo_regress.judging.judge import check
from silo_regress.judging.outcome import Report, Verdict
from silo_regress.judging.targets import Target, ref_for_run, select_targets
from silo_regress.project.config import Config
from silo_regress.project.fingerprint import InputSnapshot
from silo_regress.project.taskref import TaskRef
from silo_regress.runs.index import RunIndex
from silo_regress.store.baselines import BaselineSource

# The verdict a task shows is its worst artifact's: the one that needs action first.
_SEVERITY = [
    Verdict.MATCH,
    Verdict.CHANGED,
    Verdict.MISSING_BASELINE,
    Verdict.MISSING_RUN,
    Verdict.INCOMPLETE_RUN,
    Verdict.STALE_RUN,
    Verdict.VOLATILE,
    Verdict.NOT_CANONICAL,
    Verdict.FORMAT_VERSION,
]


class RowNote(enum.StrEnum):
    """A task's loose end, in words no other column uses (GIT says "untracked")."""

    NONE = ""
    NO_BASELINE = "no baseline"  # runs, but no baseline: check does not judge it
    NO_RUN = "no run"  # baselines, but no run here to judge
    AMBIGUOUS = "ambiguous"  # an unqualified baseline, runs in several environments
    REFUSED = "refused"  # files named like baselines whose name maps to no task
    VARIES = "varies"  # recorded with --force from rollouts that differ: bytes cannot gate it


@dataclass(frozen=True)
class StatusRow:
    task: TaskRef
    environment: str | None
    baselines: tuple[str, ...]  # artifacts with a baseline
    newest_run: str | None
    run_age_seconds: float | None
    verdict: Verdict | None
    note: RowNote
    git_state: str = ""
    variants: tuple[int, ...] = ()  # accepted variants per artifact in ``baselines``
    agent: str | None = None  # the agent that made the newest run, from its record
    # gate = "stats" or "both": the task is judged by pass counts (its tally, when
    # recorded: passed of rollouts); its byte verdict alone decides nothing
    gate: str = ""
    tally: tuple[int, int] | None = None


@dataclass(frozen=True)
class DiscardedRow:
    """A run taken out of judging by `discard`: its directory name and its task, if known."""

    name: str
    task: str | None


@dataclass(frozen=True)
class Status:
    rows: tuple[StatusRow, ...]
    report: Report
    discarded: tuple[DiscardedRow, ...] = ()

    @property
    def refused(self) -> tuple[str, ...]:
        """Why each file named like a baseline names no task, as check words it."""
        spelt = {r.task for r in self.rows if r.note is RowNote.REFUSED}
        return tuple(o.detail or "" for o in self.report.outcomes if o.task in spelt)

    def counts(self) -> tuple[tuple[str, int], ...]:
        """Tasks per verdict (each task its worst artifact's), then per loose end: every
        count in tasks, so the numbers add up to the rows."""
        verdicts: dict[str, int] = {}
        for row in sorted(self.rows, key=lambda r: _rank(r.verdict)):
            if row.verdict is not None:
                verdicts[row.verdict.value] = verdicts.get(row.verdict.value, 0) + 1
        notes: dict[str, int] = {}
        for row in self.rows:
            if row.verdict is None and row.note:
                notes[row.note.value] = notes.get(row.note.value, 0) + 1
        return (*verdicts.items(), *notes.items())


def build_status(
    config: Config,
    index: RunIndex,
    source: BaselineSource,
    *,
    now: datetime | None = None,
    inputs: InputSnapshot | None = None,
) -> Status:
    targets = select_targets(config, index, source)
    report = check(config, index, source, targets=targets, inputs=inputs)
    by_task: dict[TaskRef, list[Verdict]] = {}
    for outcome in report.outcomes:
        by_task.setdefault(outcome.task, []).append(outcome.verdict)
    rows = [_tracked_row(t, index, by_task.get(t.ref, []), now) for t in targets]
    if config.gates_statistically or _has_tallies(config):
        rows = _with_gates(config, source, targets, rows)
    covered = {t.key for t in targets if t.key is not None}
    covered |= {(e, t.ref.task_id) for t in targets for e in t.ambiguous}  # one row says it
    for environment, task_id in index.task_keys():
        if (environment, task_id) in covered:
            continue
        newest = index.newest(environment, task_id)
        ref = ref_for_run(config, index, environment, task_id)
        rows.append(
            StatusRow(
                task=ref,
                environment=environment,
                baselines=(),
                newest_run=newest.name if newest else None,
                run_age_seconds=newest.age_seconds(now) if newest else None,
                verdict=None,
                note=RowNote.NO_BASELINE,
                agent=_agent_of(newest.path) if newest else None,
            )
        )
    rows.sort(key=lambda r: (r.task.task_id, r.environment or ""))
    return Status(rows=tuple(rows), report=report, discarded=_discarded(index))


def _discarded(index: RunIndex) -> tuple[DiscardedRow, ...]:
    from silo_regress.runs.discards import list_discarded

    return tuple(
        DiscardedRow(d.name, f"{d.run.environment}/{d.run.task_id}" if d.run else None)
        for d in list_discarded(index.runs_dir)
    )


def _with_gates(
    config: Config, source: BaselineSource, targets: Sequence[Target], rows: list[StatusRow]
) -> list[StatusRow]:
    """Mark the tasks the stats gate judges, with their tally's counts."""
    from dataclasses import replace

    from silo_regress.judging.statsgate import gated_targets, read_baseline_tally

    gated = {t.ref: t for t in gated_targets(config, targets)}
    marked = []
    for row in rows:
        target = gated.get(row.task)
        if target is not None and target.key is not None:
            gate = config.task_settings(target.ref, environment=target.key[0]).gate.value
            tally = read_baseline_tally(source, target.ref)
            counts = (tally.passed, tally.rollouts) if tally is not None else None
            marked.append(replace(row, gate=gate, tally=counts))
            continue
        tally = read_baseline_tally(source, row.task) if row.baselines else None
        if tally is not None and tally.varied:
            # recorded with --force: a byte baseline of a task whose rollouts differ
            marked.append(
                replace(row, note=row.note or RowNote.VARIES, tally=(tally.passed, tally.rollouts))
            )
        else:
            marked.append(row)
    return marked


def _has_tallies(config: Config) -> bool:
    """Whether any tally lies in the baselines directory (a cheap look, no parse)."""
    import os

    def names(directory: Path) -> list[str]:
        try:
            return os.listdir(directory)
        except OSError:  # not there, not a directory, not readable: no tally to show
            return []

    top = names(config.baselines_dir)
    folders = [config.baselines_dir / n for n in top if not n.startswith(".") and "." not in n]
    return any(n.endswith(".tally.json") for n in top) or any(
        m.endswith(".tally.json") for folder in folders for m in names(folder)
    )


def _tracked_row(
    target: Target, index: RunIndex, verdicts: Sequence[Verdict], now: datetime | None
) -> StatusRow:
    newest = index.newest(*target.key) if target.key else None
    verdict = max(verdicts, key=_SEVERITY.index) if verdicts else None
    artifacts = [b.artifact for b in target.baselines] + [r.artifact for r in target.refused]
    note = (
        RowNote.AMBIGUOUS
        if target.ambiguous
        else RowNote.NO_RUN
        if newest is None
        else RowNote.NONE
    )
    return StatusRow(
        task=target.ref,
        environment=target.key[0] if target.key else target.ref.environment,
        baselines=tuple(dict.fromkeys(artifacts)),
        variants=tuple(artifacts.count(artifact) for artifact in dict.fromkeys(artifacts)),
        newest_run=newest.name if newest else None,
        run_age_seconds=newest.age_seconds(now) if newest else None,
        verdict=verdict,
        note=RowNote.REFUSED if target.refused else note,
        agent=_agent_of(newest.path) if newest else None,
    )


def _rank(verdict: Verdict | None) -> int:
    return _SEVERITY.index(verdict) if verdict is not None else len(_SEVERITY)


def _agent_of(run_dir: Path) -> str | None:
    """The agent the run's provenance record names; None for a run Silo made alone."""
    from silo_regress.runs.provenance import read_provenance

    record = read_provenance(run_dir)
    return record.agent if record is not None else None
