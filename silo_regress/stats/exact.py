"""Exact conditional tests on pass counts: Fisher's, the stratified (exact CMH) one, the sign test.

Every p-value is one-sided. For one task, baseline ``a`` of ``n1`` and candidate ``c``
of ``n2`` passes: given the ``t = a + c`` passes of both sides, the candidate's passes
are hypergeometric under "no change", whatever the task's pass rate, so the test is
exact with no rate to estimate. Single-table tails are sums of integers divided once
(``int / int`` is correctly rounded), so they are exact to the last bit of the double.

The stratified test sums the candidate's passes over tasks; given each task's total,
the sum's null distribution is the convolution of the per-task hypergeometrics (the
exact form of the Cochran-Mantel-Haenszel test). A task at 0 or all passes on both
sides has a one-point distribution and moves nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Table:
    """One task's 2x2 table: passes of rollouts on each side."""

    base_passed: int
    base_rollouts: int
    cand_passed: int
    cand_rollouts: int

    def __post_init__(self) -> None:
        if not (0 <= self.base_passed <= self.base_rollouts) or not (
            0 <= self.cand_passed <= self.cand_rollouts
        ):
            raise ValueError(f"counts out of range: {self}")

    @property
    def total_passed(self) -> int:
        return self.base_passed + self.cand_passed

    @property
    def informative(self) -> bool:
        """False when the candidate's passes are fixed by the totals (nothing can move)."""
        low, high = _support(self.base_rollouts, self.cand_rollouts, self.total_passed)
        return low < high


def _support(base_rollouts: int, cand_rollouts: int, total: int) -> tuple[int, int]:
    return max(0, total - base_rollouts), min(total, cand_rollouts)


def hypergeometric_pmf(k: int, *, population: int, successes: int, draws: int) -> float:
    """P(X = k) for X the successes among ``draws`` taken from ``population`` holding
    ``successes``: an exact ratio of integers, rounded once."""
    if k < 0 or k > draws or k > successes or draws - k > population - successes:
        return 0.0
    ways = math.comb(successes, k) * math.comb(population - successes, draws - k)
    return ways / math.comb(population, draws)


def _tail_ways(table: Table, *, upper: bool) -> float:
    n1, n2, t = table.base_rollouts, table.cand_rollouts, table.total_passed
    low, high = _support(n1, n2, t)
    xs = range(table.cand_passed, high + 1) if upper else range(low, table.cand_passed + 1)
    ways = sum(math.comb(t, x) * math.comb(n1 + n2 - t, n2 - x) for x in xs)
    return min(1.0, ways / math.comb(n1 + n2, n2))


@lru_cache(maxsize=65536)
def decline_p(table: Table) -> float:
    """One-sided Fisher exact p that the candidate passes less often than the baseline:
    P(C <= c). scipy: ``fisher_exact([[c, n2 - c], [a, n1 - a]], alternative="less")``."""
    return _tail_ways(table, upper=False)


@lru_cache(maxsize=65536)
def increase_p(table: Table) -> float:
    """One-sided Fisher exact p that the candidate passes more often: P(C >= c)."""
    return _tail_ways(table, upper=True)


def smallest_p_at(base_passed: int, base_rollouts: int, cand_rollouts: int) -> float:
    """The decline p of the strongest evidence ``cand_rollouts`` rollouts can give: 0 passes."""
    return decline_p(Table(base_passed, base_rollouts, 0, cand_rollouts))


@lru_cache(maxsize=16384)
def _distribution(
    base_rollouts: int, cand_rollouts: int, total: int
) -> tuple[int, tuple[float, ...]]:
    """The null distribution of the candidate's passes: (lowest value, probabilities)."""
    low, high = _support(base_rollouts, cand_rollouts, total)
    population = base_rollouts + cand_rollouts
    return low, tuple(
        hypergeometric_pmf(x, population=population, successes=total, draws=cand_rollouts)
        for x in range(low, high + 1)
    )


def _lower_tail(dists: Sequence[tuple[float, ...]], threshold: int) -> float:
    """P(sum of independent variables on 0.. <= threshold), each given by its pmf.

    The convolution is cut at ``threshold``: mass beyond it can never come back down,
    as every variable is non-negative. All terms are positive, so small tails keep
    their relative precision (no 1 - x cancellation).
    """
    if threshold < 0:
        return 0.0
    acc = [1.0]
    for dist in sorted(dists, key=len):
        size = min(len(acc) + len(dist) - 1, threshold + 1)
        new = [0.0] * size
        for j, weight in enumerate(dist):
            if j >= size or weight == 0.0:
                continue
            span = min(len(acc), size - j)
            new[j : j + span] = [
                old + weight * mass for old, mass in zip(new[j : j + span], acc, strict=False)
            ]
        acc = new
    return min(1.0, math.fsum(acc))


@lru_cache(maxsize=16384)
def _selected_distribution(
    base_rollouts: int, cand_rollouts: int, total: int
) -> tuple[int, tuple[float, ...]]:
    """The null distribution of the candidate's passes given its total *and* that the
    baseline passed at least once (C <= total - 1): the hypergeometric cut there and
    renormalized. A check that runs only the tasks whose baseline passed selects on it,
    and the uncut distribution would then overstate the candidate's passes."""
    low, dist = _distribution(base_rollouts, cand_rollouts, total)
    high = low + len(dist) - 1
    if total - 1 < low:
        raise ValueError(f"a baseline with passes cannot have a total of {total}")
    if high <= total - 1:
        return low, dist
    kept = dist[: total - low]
    mass = math.fsum(kept)
    return low, tuple(p / mass for p in kept)


def decline_p_given_baseline_passed(table: Table) -> float:
    """:func:`decline_p` for a task chosen because its baseline passed at least once:
    P(C <= c | C <= t - 1), which is never below the plain p."""
    if table.base_passed == 0:
        raise ValueError("the baseline never passed")
    low, dist = _selected_distribution(table.base_rollouts, table.cand_rollouts, table.total_passed)
    return min(1.0, math.fsum(dist[: table.cand_passed - low + 1]))


def stratified_decline_p(tables: Sequence[Table], *, given_baseline_passed: bool = False) -> float:
    """Exact one-sided p of the stratified test that the candidate passes less often
    across tasks: P(sum C_i <= sum c_i), each task conditioned on its own total (and,
    with ``given_baseline_passed``, on its baseline having passed at least once)."""
    dists, threshold = [], 0
    pick = _selected_distribution if given_baseline_passed else _distribution
    for table in tables:
        low, dist = pick(table.base_rollouts, table.cand_rollouts, table.total_passed)
        threshold += table.cand_passed - low
        if len(dist) > 1:
            dists.append(dist)
    return _lower_tail(dists, threshold)


def stratified_increase_p(tables: Sequence[Table]) -> float:
    """Exact one-sided p that the candidate passes more often across tasks:
    P(sum C_i >= sum c_i)."""
    dists, threshold = [], 0
    for table in tables:
        low, dist = _distribution(table.base_rollouts, table.cand_rollouts, table.total_passed)
        high = low + len(dist) - 1
        threshold += high - table.cand_passed  # the upper tail is the lower one of high - C
        if len(dist) > 1:
            dists.append(dist[::-1])
    return _lower_tail(dists, threshold)


def sign_test_p(down: int, up: int) -> float:
    """Exact one-sided sign test that tasks move down more than up: P(Bin(down + up, 1/2) >= down).

    Ties (tasks that did not move) carry no sign and are left out, as usual."""
    if down < 0 or up < 0:
        raise ValueError("negative counts")
    n = down + up
    if n == 0:
        return 1.0
    ways = sum(math.comb(n, k) for k in range(down, n + 1))
    return min(1.0, ways / (1 << n))
