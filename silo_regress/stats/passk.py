"""pass^k: the chance that k rollouts of a task all pass, estimated without bias.

From c passes in n rollouts, C(c, k) / C(n, k) is the unbiased estimate (the share of
k-subsets of the rollouts that all passed); (c / n) ** k is biased upwards for k > 1
and is never used. The suite's pass^k is the mean over its tasks, as tau-bench publishes it.

Time is bounded at any count a tally may hold (:data:`~silo_regress.stats.tally.MAX_ROLLOUTS`):
up to :data:`EXACT_UP_TO` rollouts the ratio of the two binomial coefficients is computed
in integers and rounded once (exact to the last bit); beyond, ``math.comb`` of a 100,000
rollouts tally takes a second, so the ratio is a product of at most :data:`PRODUCT_UP_TO`
factors (relative error below 1e-13) or, past that, ``exp`` of a difference of
``lgamma`` values (relative error below 1e-8): milliseconds either way. The suite's
curve stops at k = :data:`MAX_CURVE_K`: pass^k past it is of no use to a gate
(a floor's own k is computed at any k).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

EXACT_UP_TO = 2_000  # rollouts up to which pass^k is the exact ratio, rounded once
PRODUCT_UP_TO = 512  # factors a product takes before lgamma does the work instead
MAX_CURVE_K = 100  # the suite curve's largest k


@lru_cache(maxsize=65536)
def pass_hat_k(passed: int, rollouts: int, k: int) -> float:
    """C(passed, k) / C(rollouts, k); needs 1 <= k <= rollouts."""
    if not 0 <= passed <= rollouts:
        raise ValueError(f"{passed} passes of {rollouts} rollouts")
    if not 1 <= k <= rollouts:
        raise ValueError(f"pass^{k} needs at least {k} rollouts, not {rollouts}")
    if k > passed:
        return 0.0
    if rollouts <= EXACT_UP_TO:
        return math.comb(passed, k) / math.comb(rollouts, k)
    return _large_ratio(passed, rollouts, k)


def _large_ratio(passed: int, rollouts: int, k: int) -> float:
    """C(passed, k) / C(rollouts, k) for large counts, without their huge integers.

    The ratio is the product of k factors (passed - i) / (rollouts - i), and equally
    of the ``rollouts - passed`` factors (rollouts - k - j) / (rollouts - j): the
    shorter product is taken, each factor and step rounded (relative error below
    2 x 512 x 2**-53); a longer one is exp of lgamma differences instead."""
    fails = rollouts - passed
    if min(k, fails) <= PRODUCT_UP_TO:
        value = 1.0
        if k <= fails:
            for i in range(k):
                value *= (passed - i) / (rollouts - i)
        else:
            for j in range(fails):
                value *= (rollouts - k - j) / (rollouts - j)
        return value
    log_ratio = (
        math.lgamma(passed + 1)
        - math.lgamma(passed - k + 1)
        - math.lgamma(rollouts + 1)
        + math.lgamma(rollouts - k + 1)
    )
    return math.exp(log_ratio)


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
    """pass^1 .. pass^up_to of the suite, up_to at most :data:`MAX_CURVE_K`."""
    return tuple(suite_pass_hat_k(counts, k) for k in range(1, min(up_to, MAX_CURVE_K) + 1))
