"""Candidate tallies: what ``check --run --repeat M`` counted, kept for ``review`` to accept.

A stats task is judged on the rollouts one check just made; nothing else names them
afterwards (the newest run is one rollout, not the M). So a check with repeated
rollouts keeps, per stats task it judged, the candidate tally it computed, the runs it
counted and a digest of the baseline tally it judged them against, in
``<runs dir>/.silo-regress-candidates.json`` (beside the run cache: local, never
committed). ``review`` offers each one whose tier is not ``stable``; accepting it
writes that tally to ``baselines/[ENV/]TASK.tally.json`` under the baselines' writer
lock, in one all-or-nothing batch, and only while the runs are all still there and the
baseline tally is the one the check saw (else it is refused: check again).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from silo_regress.canon.canonical import serialize
from silo_regress.errors import InputError
from silo_regress.project.taskref import TaskRef, parse_ref
from silo_regress.runs.index import RunIndex
from silo_regress.stats.tally import Tally, TallyError, parse_tally, serialize_tally
from silo_regress.stats.verdicts import StatsJudgement, Tier
from silo_regress.store.baselinenames import tally_relpath
from silo_regress.store.baselines import BaselineStore
from silo_regress.system.fsio import FileError, read_regular, write_atomic

CANDIDATES_FILE = ".silo-regress-candidates.json"
CANDIDATES_FORMAT = 1


@dataclass(frozen=True)
class Candidate:
    """One stats task's candidate tally, as the check that judged it counted it."""

    task: TaskRef
    tier: str
    tally: Tally
    runs: tuple[str, ...]  # the rollouts counted, by run name
    baseline_digest: str | None  # sha256 of the baseline tally's bytes; None: there was none


@dataclass(frozen=True)
class AcceptedTally:
    task: TaskRef
    path: str  # as shown: baselines/TASK.tally.json
    before: Tally | None
    after: Tally


def digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _path(runs_dir: Path) -> Path:
    return runs_dir / CANDIDATES_FILE


def load_candidates(runs_dir: Path) -> dict[str, Candidate]:
    """The kept candidates by task; a missing or unreadable file keeps none (it is a
    local convenience: ``check --run`` makes it again)."""
    path = _path(runs_dir)
    try:
        value = json.loads(read_regular(path, shown=str(path)))
        if value.get("format") != CANDIDATES_FORMAT:
            return {}
        found = {}
        for name, item in value["tasks"].items():
            tally = parse_tally(serialize(item["tally"]), source=f"{path}: {name}")
            runs = tuple(str(r) for r in item["runs"])
            base = item["baseline"]
            found[name] = Candidate(parse_ref(name), str(item["tier"]), tally, runs, base)
        return found
    except (OSError, InputError, TallyError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _save(runs_dir: Path, kept: Mapping[str, Candidate]) -> None:
    document: dict[str, Any] = {
        "format": CANDIDATES_FORMAT,
        "tasks": {
            name: {
                "tier": c.tier,
                "tally": c.tally.to_json(),
                "runs": list(c.runs),
                "baseline": c.baseline_digest,
            }
            for name, c in sorted(kept.items())
        },
    }
    # A runs directory that cannot be written: review cannot offer them, no more.
    with contextlib.suppress(FileError, OSError):
        write_atomic(_path(runs_dir), serialize(document))


def keep_candidates(
    runs_dir: Path,
    stats: StatsJudgement,
    *,
    runs_of: Mapping[str, Sequence[str]],
    baselines: Mapping[str, bytes | None],
) -> None:
    """Keep the candidate tally of every judged task that has one (and ``runs_of`` names
    its rollouts), over what an earlier check kept for the same tasks."""
    kept = load_candidates(runs_dir)
    for task in stats.tasks:
        if task.candidate is None or task.task not in runs_of:
            continue
        kept[task.task] = Candidate(
            parse_ref(task.task),
            task.tier.value,
            task.candidate,
            tuple(runs_of[task.task]),
            digest(baselines.get(task.task)),
        )
    _save(runs_dir, kept)


def reviewable_candidates(runs_dir: Path, refs: Sequence[TaskRef]) -> list[Candidate]:
    """The kept candidates review offers: those not ``stable``, of ``refs`` (all without)."""
    found = []
    for candidate in load_candidates(runs_dir).values():
        if candidate.tier == Tier.STABLE.value:
            continue
        if refs and not any(
            ref == candidate.task or (not ref.qualified and ref.task_id == candidate.task.task_id)
            for ref in refs
        ):
            continue
        found.append(candidate)
    return sorted(found, key=lambda c: TaskRef.sort_key(c.task))


def accept_candidate(
    store: BaselineStore, index: RunIndex, candidate: Candidate, *, runs_dir: Path
) -> AcceptedTally:
    """Write the candidate's tally as the task's baseline tally, or refuse (InputError)."""
    relpath = tally_relpath(candidate.task)
    shown = f"{store.display_root}/{relpath}"
    # A rollout that left no result was not counted, but it is still one of the M: a
    # run rejected (moved out) since the check means the tally counts runs now gone.
    gone = [n for n in candidate.runs if index.find(n) is None]
    if gone:
        raise InputError(
            f"{shown}: run {gone[0]}, one of the {len(candidate.runs)} rollouts this tally "
            f"counts, is gone now; make new ones with "
            f"`silo-regress check --run --repeat N {candidate.task}`"
        )
    path = store.root / relpath
    with store.locked("review"):
        try:
            current: bytes | None = read_regular(path, shown=shown, follow=False)
        except FileNotFoundError:
            current = None
        if digest(current) != candidate.baseline_digest:
            raise InputError(
                f"{shown}: changed since the check that counted these rollouts; "
                f"run `silo-regress check --run --repeat N {candidate.task}` again"
            )
        before = parse_tally(current, source=shown) if current is not None else None
        store.write([(path, serialize_tally(candidate.tally))], command="review")
    forget_candidate(runs_dir, candidate.task)
    return AcceptedTally(candidate.task, shown, before, candidate.tally)


def forget_candidate(runs_dir: Path, task: TaskRef) -> None:
    """Drop an accepted candidate, so a second review does not offer it again."""
    kept = load_candidates(runs_dir)
    if kept.pop(str(task), None) is not None:
        _save(runs_dir, kept)
