"""pass^k: the chance that k rollouts of a task all pass, estimated without bias.

From c passes in n rollouts, C(c, k) / C(n, k) is the unbiased estimate (the share of
k-subsets of the rollouts that all passed); (c / n) ** k is biased upwards for k > 1
and is never used. The suite's pass^k is the mean over its tasks, as tau-bench publishes it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache


@lru_cache(maxsize=65536)
def pass_hat_k(passed: int, rollouts: int, k: int) -> float:
    """C(passed, k) / C(rollouts, k); needs 1 <= k <= rollouts."""
    if not 0 <= passed <= rollouts:
        raise ValueError(f"{passed} passes of {rollouts} rollouts")
    if not 1 <= k <= rollouts:
        raise ValueError(f"pass^{k} needs at least {k} rollouts, not {rollouts}")
    return math.comb(passed, k) / math.comb(rollouts, k)


@dataclass(frozen=True)
class SuitePoint:
    """The suite's pass^k: the mean over the ``tasks`` with at least k rollouts."""

    k: int
    value: float | None  # None when no task has k rollouts
    tasks: int
    rollouts: int  # behind the tasks counted


def suite_pass_hat_k(counts: Sequence[tuple[int, int]], k: int) -> SuitePoint:
    """The suite's pass^k from (passed, rollouts) per task; tasks with fewer than k are left out."""
    used = [(c, n) for c, n in counts if n >= k]
    if not used:
        return SuitePoint(k=k, value=None, tasks=0, rollouts=0)
    value = math.fsum(pass_hat_k(c, n, k) for c, n in used) / len(used)
    return SuitePoint(k=k, value=value, tasks=len(used), rollouts=sum(n for _, n in used))


def suite_curve(counts: Sequence[tuple[int, int]], *, up_to: int) -> tuple[SuitePoint, ...]:
    """pass^1 .. pass^up_to of the suite."""
    return tuple(suite_pass_hat_k(counts, k) for k in range(1, up_to + 1))
