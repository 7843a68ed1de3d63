"""Counting a task's rollouts into a tally: passes, per-check passes, rewards, variants.

Both sides of the stats gate are counted here: ``record --repeat N`` writes the count
of the recorded rollouts as the baseline tally, and ``check --run --repeat M`` counts
the candidate's rollouts the same way.

Every rollout that was started and left a run counts (DESIGN.md, "Counting rollouts"):
one without a complete ``result.json`` object (the agent crashed, the verifier threw, a
timeout killed it) is a *failed* rollout, as Silo's own exit status counts it, and is
named; it is never left out, or 5 crashes in 5 would pass any gate.

What a rollout counts for is fixed when it ends: :func:`read_result` reads its
``result.json`` once and keeps the SHA-256 of those bytes beside what it counted, and
:func:`changed_results` reads them again before a verdict, so a run rewritten in between
(an agent that edits finished run directories while later rollouts run) is named.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from silo_regress.canon.canonical import parse
from silo_regress.errors import InputError
from silo_regress.runs.index import Run, UnreadableArtifactError, read_artifact
from silo_regress.stats.tally import Tally

RESULT = "result.json"


@dataclass(frozen=True)
class RolloutResult:
    """What one rollout counts for, read once: its pass, reward and checks, and the digest
    of the ``result.json`` bytes they were read from (None: it left no complete result,
    which counts as a failed rollout)."""

    run: str  # the run directory's name
    digest: str | None
    passed: bool = False
    reward: float = 0.0
    checks: tuple[tuple[str, bool], ...] = ()  # per label: did every check of it pass

    @property
    def has_result(self) -> bool:
        return self.digest is not None


@dataclass(frozen=True)
class Counted:
    """A tally of every rollout (those without a result counted as failures), the runs
    that had no result, and what each rollout counted for."""

    tally: Tally
    without_result: tuple[str, ...]  # run names
    results: tuple[RolloutResult, ...] = ()


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _result_bytes(run: Run) -> bytes | None:
    try:
        return read_artifact(run, RESULT)
    except (UnreadableArtifactError, OSError):
        return None


def _parsed(data: bytes, run: Run) -> dict[str, Any] | None:
    try:
        value = parse(data, source=str(run.path / RESULT))
    except InputError:
        return None
    return value if isinstance(value, dict) else None


def read_result(run: Run) -> RolloutResult:
    """Read the run's ``result.json`` once: what it counts for, and the digest of its bytes."""
    data = _result_bytes(run)
    result = _parsed(data, run) if data is not None else None
    if data is None or result is None:
        return RolloutResult(run.name, None)
    reward = result.get("reward")
    value = 0.0  # a result without a numeric reward counts 0
    if isinstance(reward, int | float) and not isinstance(reward, bool):
        try:
            value = float(reward)
        except OverflowError:  # an integer of hundreds of digits: no reward anyone scored
            value = 0.0
    return RolloutResult(
        run=run.name,
        digest=_digest(data),
        passed=result.get("passed") is True,
        reward=value if math.isfinite(value) else 0.0,
        checks=tuple(sorted(_check_passes(result.get("checks")).items())),
    )


def _check_passes(checks: Any) -> dict[str, bool]:
    """Per label: did every check of that label pass in this rollout."""
    passes: dict[str, bool] = {}
    if not isinstance(checks, list):
        return passes
    for check in checks:
        if isinstance(check, dict) and isinstance(check.get("label"), str):
            label = check["label"]
            passes[label] = passes.get(label, True) and check.get("passed") is True
    return passes


def count_results(
    results: Sequence[RolloutResult], *, variants: Mapping[str, Sequence[int]]
) -> Counted:
    """The tally of ``results``; ``variants`` gives, per artifact, the rollouts that matched
    accepted variant 1, 2, ... (the caller knows which variant each run matched)."""
    passed = 0
    rewards: list[float] = []
    labels: dict[str, int] = {}
    for result in results:
        passed += result.passed
        rewards.append(result.reward)
        for label, ok_check in result.checks:
            labels[label] = labels.get(label, 0) + ok_check
    tally = Tally(
        rollouts=len(results),
        passed=passed,
        checks=tuple(sorted(labels.items())),
        # fsum: correctly rounded, so the bytes do not depend on the rollouts' order
        reward_sum=_whole(math.fsum(rewards)),
        reward_squares=_whole(math.fsum(r * r for r in rewards)),
        variants=tuple(sorted((a, tuple(c)) for a, c in variants.items())),
    )
    missing = tuple(r.run for r in results if not r.has_result)
    return Counted(tally, missing, tuple(results))


def count_runs(runs: Sequence[Run], *, variants: Mapping[str, Sequence[int]]) -> Counted:
    """The tally of ``runs``, each read now (a plain check, a record)."""
    return count_results([read_result(run) for run in runs], variants=variants)


def changed_results(runs: Sequence[Run], results: Mapping[str, RolloutResult]) -> list[str]:
    """The runs whose ``result.json`` is no longer the bytes counted when their rollout
    ended (rewritten, removed, or written after the rollout left none)."""
    changed = []
    for run in runs:
        counted = results.get(run.name)
        if counted is None:
            continue
        data = _result_bytes(run)
        now = _digest(data) if data is not None and _parsed(data, run) is not None else None
        if now != counted.digest:
            changed.append(run.name)
    return changed


def _whole(value: float) -> float:
    return int(value) if value.is_integer() else value
