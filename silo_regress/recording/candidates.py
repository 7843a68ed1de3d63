"""Candidate tallies: what ``check --run --repeat M`` counted, kept for ``review`` to accept.

A stats task is judged on the rollouts one check just made; nothing else names them
afterwards (the newest run is one rollout, not the M). So a check with repeated
rollouts keeps, per stats task it judged, the candidate tally it computed, the runs it
counted with the SHA-256 of each one's ``result.json`` as it counted it, and a digest of
the baseline tally it judged them against, in ``<runs dir>/.silo-regress-candidates.json``
(beside the run cache: local, never committed). ``review`` offers each one whose tier is
not ``stable``.

The file lies where an agent writes (the runs directory), so it is evidence of nothing:
it is read and written without following a symbolic link (a link, FIFO, device or
directory there is refused, never written through), and accepting a candidate trusts
none of its numbers. :func:`accept_candidate` counts the tally again from the run
directories it names: each still there, of that task and environment (its ``run.json``),
its ``result.json`` the very bytes the check counted, at least two of them, one per
rollout; only a recount equal to the kept tally is written, to
``baselines/[ENV/]TASK.tally.json`` under the baselines' writer lock, in one
all-or-nothing batch, and only while the baseline tally is the one the check saw.
Anything else is refused in one sentence.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from silo_regress.canon.canonical import serialize
from silo_regress.errors import InputError
from silo_regress.judging.tallying import count_results, read_result
from silo_regress.project.taskref import TaskRef, parse_ref
from silo_regress.runs.index import RunIndex
from silo_regress.stats.tally import (
    MAX_ROLLOUTS,
    Tally,
    TallyError,
    parse_tally,
    serialize_tally,
)
from silo_regress.stats.verdicts import StatsJudgement, Tier
from silo_regress.store.baselinenames import tally_relpath
from silo_regress.store.baselines import BaselineStore
from silo_regress.system.fsio import FileError, read_regular, write_atomic

CANDIDATES_FILE = ".silo-regress-candidates.json"
# 2: each run carries the digest of the result.json it was counted from. A file of
# another format is ignored (format 1 named runs only: nothing to recount against).
CANDIDATES_FORMAT = 2
# Run names of up to MAX_ROLLOUTS rollouts for a few hundred tasks fit well inside this;
# a longer file is not read (it is only a convenience: check --run writes it again).
CANDIDATES_LIMIT = 64 << 20
MIN_ROLLOUTS = 2  # a candidate of one rollout is never a tally (--repeat 1 is refused too)


@dataclass(frozen=True)
class Candidate:
    """One stats task's candidate tally, as the check that judged it counted it."""

    task: TaskRef
    tier: str
    tally: Tally
    runs: tuple[str, ...]  # the rollouts counted, by run name
    baseline_digest: str | None  # sha256 of the baseline tally's bytes; None: there was none
    # Per run (as ``runs``): sha256 of the result.json bytes counted; None: it left no
    # result, counted as a failed rollout. () only in a Candidate made by hand.
    results: tuple[str | None, ...] = ()


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
    """The kept candidates by task; a missing, unreadable, forged or older file keeps
    none (it is a local convenience: ``check --run`` makes it again). Never read
    through a symbolic link."""
    path = _path(runs_dir)
    try:
        data = read_regular(path, shown=str(path), follow=False, limit=CANDIDATES_LIMIT)
        value = json.loads(data)
        if not isinstance(value, dict) or value.get("format") is True:
            return {}
        if value.get("format") != CANDIDATES_FORMAT:
            return {}
        found = {}
        for name, item in value["tasks"].items():
            tally = parse_tally(serialize(item["tally"]), source=f"{path}: {name}")
            runs, results = _runs(item["runs"])
            base = item["baseline"]
            if base is not None and not _is_digest(base):
                continue
            found[name] = Candidate(
                parse_ref(name), str(item["tier"]), tally, runs, base, results=results
            )
        return found
    except (OSError, InputError, TallyError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _is_digest(value: object) -> bool:
    return (
        isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)
    )


def _runs(items: Any) -> tuple[tuple[str, ...], tuple[str | None, ...]]:
    """(run names, result digests) of a kept entry; ValueError for anything malformed."""
    if not isinstance(items, list) or len(items) > MAX_ROLLOUTS:
        raise ValueError("runs")
    names: list[str] = []
    digests: list[str | None] = []
    for item in items:
        name, result = item["name"], item["result"]
        if not isinstance(name, str) or not (result is None or _is_digest(result)):
            raise ValueError("run")
        names.append(name)
        digests.append(result)
    return tuple(names), tuple(digests)


def _save(runs_dir: Path, kept: Mapping[str, Candidate]) -> str | None:
    document: dict[str, Any] = {
        "format": CANDIDATES_FORMAT,
        "tasks": {
            name: {
                "tier": c.tier,
                "tally": c.tally.to_json(),
                "runs": [
                    {"name": run, "result": result}
                    for run, result in zip(c.runs, c.results, strict=True)
                ],
                "baseline": c.baseline_digest,
            }
            for name, c in sorted(kept.items())
        },
    }
    # Never through a link planted there; a refused write is the caller's to mention.
    path = _path(runs_dir)
    try:
        write_atomic(path, serialize(document), follow=False)
    except FileError as exc:
        return exc.message
    except OSError as exc:
        return f"{path}: cannot write: {exc.strerror or exc}"
    return None


def keep_candidates(
    runs_dir: Path,
    stats: StatsJudgement,
    *,
    runs_of: Mapping[str, Sequence[tuple[str, str | None]]],
    baselines: Mapping[str, bytes | None],
) -> str | None:
    """Keep the candidate tally of every judged task that has one (and ``runs_of`` names
    its rollouts: (run name, sha256 of its result.json as counted, None for none)), over
    what an earlier check kept for the same tasks. Returns why the file could not be
    written (a link or FIFO planted there), or None: a check goes on without it."""
    kept = load_candidates(runs_dir)
    for task in stats.tasks:
        if task.candidate is None or task.task not in runs_of:
            continue
        pairs = tuple(runs_of[task.task])
        kept[task.task] = Candidate(
            parse_ref(task.task),
            task.tier.value,
            task.candidate,
            tuple(name for name, _ in pairs),
            digest(baselines.get(task.task)),
            results=tuple(result for _, result in pairs),
        )
    return _save(runs_dir, kept)


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
    store: BaselineStore,
    index: RunIndex,
    candidate: Candidate,
    *,
    runs_dir: Path,
    environment: str | None = None,
) -> AcceptedTally:
    """Write the candidate's tally as the task's baseline tally, or refuse (InputError).

    ``environment`` is where an unqualified task's runs must lie (the project's
    environment); the tally is written only when :func:`recount` agrees with it."""
    relpath = tally_relpath(candidate.task)
    shown = f"{store.display_root}/{relpath}"
    recount(index, candidate, shown=shown, environment=environment)
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


def recount(
    index: RunIndex, candidate: Candidate, *, shown: str, environment: str | None = None
) -> Tally:
    """The candidate's tally counted again from the runs it names; InputError naming
    ``shown`` and the first thing that does not hold (the file is not evidence)."""
    again = f"make new ones with `silo-regress check --run --repeat N {candidate.task}`"
    runs, named = candidate.runs, len(candidate.runs)
    if named < MIN_ROLLOUTS or len(candidate.results) != named:
        raise InputError(
            f"{shown}: the candidate names {named} rollouts with their results, not the "
            f"{MIN_ROLLOUTS} or more a tally is counted from; {again}"
        )
    if len(set(runs)) != named:
        raise InputError(f"{shown}: the candidate names a run twice; {again}")
    if candidate.tally.rollouts != named:
        raise InputError(
            f"{shown}: the candidate tally counts {candidate.tally.rollouts} rollouts but "
            f"names {named} runs; {again}"
        )
    task_env = candidate.task.environment or environment
    counted = []
    for name, expected in zip(runs, candidate.results, strict=True):
        run = index.find(name)
        if run is None:
            raise InputError(
                f"{shown}: run {name}, one of the {named} rollouts this tally counts, is "
                f"gone now; {again}"
            )
        if run.task_id != candidate.task.task_id or (
            task_env is not None and run.environment != task_env
        ):
            raise InputError(
                f"{shown}: run {name} is a rollout of {run.environment}/{run.task_id}, not of "
                f"{candidate.task}; {again}"
            )
        result = read_result(run)
        if result.digest != expected:
            raise InputError(
                f"{shown}: run {name}'s result.json is not the one the check counted; {again}"
            )
        counted.append(result)
    # Variants say which accepted variant each rollout matched: the check judged that
    # against the baselines; the recount keeps them, bounded by the tally's own reading.
    variants = {artifact: list(counts) for artifact, counts in candidate.tally.variants}
    tally = count_results(counted, variants=variants).tally
    if tally != candidate.tally:
        raise InputError(
            f"{shown}: the candidate tally says {candidate.tally.passed}/"
            f"{candidate.tally.rollouts} but its {named} runs count {tally.passed}/"
            f"{tally.rollouts} (or other counts differ); {again}"
        )
    return tally


def forget_candidate(runs_dir: Path, task: TaskRef) -> None:
    """Drop an accepted candidate, so a second review does not offer it again."""
    kept = load_candidates(runs_dir)
    if kept.pop(str(task), None) is not None:
        _save(runs_dir, kept)  # a refused write leaves the entry: its runs still recount
