"""Counting a task's rollouts into a tally: passes, per-check passes, rewards, variants.

Both sides of the stats gate are counted here: ``record --repeat N`` writes the count
of the recorded rollouts as the baseline tally, and ``check --run --repeat M`` counts
the candidate's rollouts the same way. Only runs with a complete ``result.json``
object count: a rollout that left no result is neither a pass nor a fail.
"""

from __future__ import annotations

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
class Counted:
    """A tally of the runs that had a result, and the runs that had none."""

    tally: Tally
    without_result: tuple[str, ...]  # run names


def _result(run: Run) -> dict[str, Any] | None:
    try:
        data = read_artifact(run, RESULT)
    except UnreadableArtifactError:
        return None
    if data is None:
        return None
    try:
        value = parse(data, source=str(run.path / RESULT))
    except InputError:
        return None
    return value if isinstance(value, dict) else None


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


def count_runs(runs: Sequence[Run], *, variants: Mapping[str, Sequence[int]]) -> Counted:
    """The tally of ``runs``; ``variants`` gives, per artifact, the rollouts that matched
    accepted variant 1, 2, ... (the caller knows which variant each run matched)."""
    passed = 0
    rewards: list[float] = []
    labels: dict[str, int] = {}
    missing: list[str] = []
    counted = 0
    for run in runs:
        result = _result(run)
        if result is None:
            missing.append(run.name)
            continue
        counted += 1
        passed += result.get("passed") is True
        reward = result.get("reward")
        value = 0.0  # a result without a numeric reward counts 0
        if isinstance(reward, int | float) and not isinstance(reward, bool):
            value = float(reward)
        rewards.append(value if math.isfinite(value) else 0.0)
        for label, ok_check in _check_passes(result.get("checks")).items():
            labels[label] = labels.get(label, 0) + ok_check
    tally = Tally(
        rollouts=counted,
        passed=passed,
        checks=tuple(sorted(labels.items())),
        # fsum: correctly rounded, so the bytes do not depend on the rollouts' order
        reward_sum=_whole(math.fsum(rewards)),
        reward_squares=_whole(math.fsum(r * r for r in rewards)),
        variants=tuple(sorted((a, tuple(c)) for a, c in variants.items())),
    )
    return Counted(tally, tuple(missing))


def _whole(value: float) -> float:
    return int(value) if value.is_integer() else value
