"""How many rollouts a check needs: per task exactly, for the suite by the normal
approximation of the stratified test, for a fixed M and for the sequential check.

Per task, against its recorded baseline tally ``a`` of ``n1``: the check's one-sided
Fisher test at alpha flags ``c`` of ``M`` candidate passes when ``c`` is at most the
largest count whose p is at most alpha; with candidate rollouts that pass
independently at ``rate``, its power is the binomial chance of that, computed exactly.
The rate a task drops from is its tally's rate (the tally is the baseline every check
compares with, so it is the rate the plan is for).

For the suite, the stratified test's score over the tasks is close to normal with mean
``sum w_i d_i`` and variance ``sum w_i v_i`` (``w = n1 M / (n1 + M)``, ``d`` the drop,
``v = p (1 - p)`` at the pooled rate): the power at level ``l`` is
``P(Z > z_l - mean / sd)``. The sequential check's power, rollouts and rounds come from
the same drift through :func:`silo_regress.stats.spending.rejection_chances`.

Hints stay practical: a count above :data:`PRACTICAL_ROLLOUTS` is not suggested (None),
as no team runs an agent 219 times a task to settle one check.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from silo_regress.stats.exact import Table, decline_p, stratified_decline_p
from silo_regress.stats.spending import (
    nominal_levels,
    normal_quantile,
    normal_tail,
    rejection_chances,
)

PRACTICAL_ROLLOUTS = 50  # the most rollouts a task a hint or a plan suggests
_SEARCH = 1000  # the search for a count gives up here


def _binomial_cdf(k: int, n: int, rate: float) -> float:
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return math.fsum(math.comb(n, x) * rate**x * (1 - rate) ** (n - x) for x in range(k + 1))


@lru_cache(maxsize=65536)
def critical_passes(
    base_passed: int, base_rollouts: int, cand_rollouts: int, *, alpha: float
) -> int:
    """The most candidate passes of ``cand_rollouts`` that the test still flags (-1: none)."""
    critical = -1
    for c in range(cand_rollouts + 1):  # the p-value rises with c
        if decline_p(Table(base_passed, base_rollouts, c, cand_rollouts)) > alpha:
            break
        critical = c
    return critical


def task_power(
    base_passed: int, base_rollouts: int, cand_rollouts: int, *, rate: float, alpha: float
) -> float:
    """The exact chance that ``cand_rollouts`` rollouts at ``rate`` are flagged."""
    critical = critical_passes(base_passed, base_rollouts, cand_rollouts, alpha=alpha)
    return _binomial_cdf(critical, cand_rollouts, rate)


def rollouts_to_detect(
    base_passed: int,
    base_rollouts: int,
    *,
    rate: float,
    alpha: float,
    power: float,
    limit: int = PRACTICAL_ROLLOUTS,
) -> int | None:
    """The fewest candidate rollouts whose test flags a candidate at ``rate`` with at
    least ``power``; None above ``limit``."""
    if base_passed == 0:
        return None
    for m in range(1, limit + 1):
        if task_power(base_passed, base_rollouts, m, rate=rate, alpha=alpha) >= power:
            return m
    return None


def smallest_task_drop(
    base_passed: int, base_rollouts: int, cand_rollouts: int, *, alpha: float, power: float
) -> float | None:
    """The smallest drop in pass rate ``cand_rollouts`` rollouts detect with ``power``
    (to 0.005), None when even a drop to 0 is not."""
    start = base_passed / base_rollouts
    if task_power(base_passed, base_rollouts, cand_rollouts, rate=0.0, alpha=alpha) < power:
        return None
    low, high = 0.0, start
    while high - low > 0.005:
        middle = (low + high) / 2
        rate = start - middle
        if task_power(base_passed, base_rollouts, cand_rollouts, rate=rate, alpha=alpha) >= power:
            high = middle
        else:
            low = middle
    return high


def rollouts_at_rate(table: Table, *, alpha: float, limit: int = PRACTICAL_ROLLOUTS) -> int | None:
    """The fewest candidate rollouts at which the candidate's rate seen so far would be
    significant at ``alpha`` (raw); None when none up to ``limit`` would be."""
    rate = table.cand_passed / table.cand_rollouts
    if rate * table.base_rollouts >= table.base_passed:
        return None
    for rollouts in range(table.cand_rollouts, limit + 1):
        passed = round(rate * rollouts)
        if decline_p(Table(table.base_passed, table.base_rollouts, passed, rollouts)) <= alpha:
            return rollouts
    return None


# --- the suite -------------------------------------------------------------------


@dataclass(frozen=True)
class SuiteTask:
    """A task as the suite plan sees it: its baseline tally and its rate after the drop."""

    base_passed: int
    base_rollouts: int
    rate_after: float


def _drift(tasks: Sequence[SuiteTask], cand_rollouts: int) -> float:
    """The stratified score's mean over its standard deviation, at ``cand_rollouts``."""
    mean = spread = 0.0
    for task in tasks:
        if task.base_passed == 0:
            continue  # cannot decline; the sequential check runs none of it
        before = task.base_passed / task.base_rollouts
        n1, m = task.base_rollouts, cand_rollouts
        weight = n1 * m / (n1 + m)
        pooled = (n1 * before + m * task.rate_after) / (n1 + m)
        # a baseline at all passes still varies: at least half a failure in its tally
        pooled = min(pooled, 1 - 0.5 / (n1 + m))
        mean += weight * (before - task.rate_after)
        spread += weight * pooled * (1 - pooled)
    return mean / math.sqrt(spread) if spread > 0 else 0.0


def suite_power(tasks: Sequence[SuiteTask], cand_rollouts: int, *, level: float) -> float:
    """The fixed check's chance of rejecting the suite at ``level`` (its stratified
    branch) against these baseline tallies, by a normal approximation of the test given
    the tallies: its statistic ``sum (n1 C - M a) / N`` is linear in the candidate's
    passes C (binomial at the rate after the drop), and it rejects below ``-z sd0``,
    sd0 from the hypergeometric variance at the expected totals (with a continuity
    correction, as the exact test is discrete)."""
    m = cand_rollouts
    mean = spread = null = step = 0.0
    live = 0
    for task in tasks:
        if task.base_passed == 0:
            continue
        n1, a, rate = task.base_rollouts, task.base_passed, task.rate_after
        total = n1 + m
        mean += (n1 * m * rate - m * a) / total
        spread += (n1 / total) ** 2 * m * rate * (1 - rate)
        passes = a + m * rate
        null += m * n1 * passes * (total - passes) / (total * total * max(1, total - 1))
        step += n1 / total
        live += 1
    if not live or null <= 0:
        return 0.0
    bound = -normal_quantile(level) * math.sqrt(null) + 0.5 * step / live
    if spread <= 0:
        return 1.0 if mean <= bound else 0.0
    return 1 - normal_tail((bound - mean) / math.sqrt(spread))


SIMULATED_CHECKS = 300  # the suite M is confirmed on this many seeded simulated checks
_SIMULATED_TASKS = 200  # above this many tasks the approximation alone decides


def simulated_suite_power(
    tasks: Sequence[SuiteTask], cand_rollouts: int, *, level: float, checks: int, seed: int = 32
) -> float:
    """The share of ``checks`` seeded simulated checks in which the exact stratified
    test rejects at ``level``: candidates drawn at each task's rate after the drop."""
    rng = random.Random(seed)
    live = [t for t in tasks if t.base_passed > 0]
    hits = 0
    for _ in range(checks):
        tables = [
            Table(
                t.base_passed,
                t.base_rollouts,
                sum(rng.random() < t.rate_after for _ in range(cand_rollouts)),
                cand_rollouts,
            )
            for t in live
        ]
        hits += stratified_decline_p(tables, given_baseline_passed=True) <= level
    return hits / checks


def suite_rollouts(
    tasks: Sequence[SuiteTask], *, level: float, power: float, limit: int = PRACTICAL_ROLLOUTS
) -> int | None:
    """The fewest rollouts a task at which the suite's stratified test detects the drop
    with ``power``: the normal approximation's M, confirmed (and moved up where the
    discrete exact test falls short) on seeded simulated checks for suites of up to
    200 tasks; None above ``limit``."""
    approx = next(
        (m for m in range(1, limit + 1) if suite_power(tasks, m, level=level) >= power), None
    )
    if approx is None or len(tasks) > _SIMULATED_TASKS:
        return approx
    for m in range(max(1, approx - 1), min(limit, approx + 12) + 1):
        if simulated_suite_power(tasks, m, level=level, checks=SIMULATED_CHECKS) >= power:
            return m
    return None


@dataclass(frozen=True)
class SequentialPlan:
    """The sequential check with these looks, for one drop: power, and expected
    rollouts a task (of the tasks it runs) and rounds, with no change and with the drop."""

    looks: tuple[int, ...]
    power: float
    rollouts_no_change: float
    rollouts_with_drop: float
    rounds_no_change: float
    rounds_with_drop: float


def plan_sequential(
    tasks: Sequence[SuiteTask],
    looks: tuple[int, ...],
    *,
    alpha: float,
    suite_share: float,
    gamma: float,
    futility: Sequence[float],
    fractions: tuple[float, ...],
) -> SequentialPlan:
    """Power and costs of the sequential check by the normal approximation."""
    levels = nominal_levels(fractions, alpha=suite_share * alpha, gamma=gamma)
    drift = _drift(tasks, looks[-1])

    def costs(shift: float) -> tuple[float, float, float]:
        rejects, stops = rejection_chances(fractions, levels, drift=shift, futility=futility)
        going, rollouts, rounds = 1.0, 0.0, 0.0
        for k, look in enumerate(looks):
            rollouts += going * (look - (looks[k - 1] if k else 0))
            rounds += going
            going -= rejects[k] + stops[k]
        return math.fsum(rejects), rollouts, rounds

    power, with_drop, rounds_drop = costs(drift)
    _, no_change, rounds_none = costs(0.0)
    return SequentialPlan(looks, power, no_change, with_drop, rounds_none, rounds_drop)


# --- a plan, as `silo-regress plan` shows it -----------------------------------------


@dataclass(frozen=True)
class TaskPlan:
    task: str
    tally_path: str
    base_passed: int | None  # None: no tally
    base_rollouts: int | None
    rollouts: int | None  # fixed M to detect the drop; None: not within the practical limit
    smallest_drop: float | None  # at the configured M; None: not even a drop to 0
    cannot_decline: bool  # its baseline never passed


@dataclass(frozen=True)
class SuitePlan:
    tasks: int  # tasks that can decline
    rollouts: int | None
    smallest_drop: float | None
    sequential: SequentialPlan | None
    cap_needed: int | None  # the smallest cap (looks scaled) reaching the power


@dataclass(frozen=True)
class Plan:
    detect: float
    power: float
    alpha: float
    configured_m: int
    looks: tuple[int, ...]
    looks_configured: bool
    tasks: tuple[TaskPlan, ...]
    suite: SuitePlan
    limit: int
