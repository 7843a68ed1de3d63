"""How many rollouts a check needs: per task exactly; for the suite, the fewest
rollouts spread M or M + 1 a task, with powers from seeded simulated checks of the
check's own suite decision; a normal approximation as a first guess and for the
smallest drops (and, for the sequential check, in commands/planning.py's cap search).

Per task, against its recorded baseline tally ``a`` of ``n1``: the check's one-sided
Fisher test at alpha flags ``c`` of ``M`` candidate passes when ``c`` is at most the
largest count whose p is at most alpha; with candidate rollouts that pass
independently at ``rate``, its power is the binomial chance of that, computed exactly.
The rate a task drops from is its tally's rate (the tally is the baseline every check
compares with, so it is the rate the plan is for).

For the suite the exact test is discrete: one rollout a task more can move its power
from 0.79 to 0.97, so the plan searches allocations (:func:`suite_allocation`) and
measures each on the same seeded simulated rollouts (:class:`SeededRollouts`), judged
by :func:`suite_declines`, the check's global step. The normal approximation (the
stratified score close to normal with mean ``sum w_i d_i`` and variance
``sum w_i v_i``, ``w = n1 M / (n1 + M)``) gives the search its first guess, decides
alone above :data:`SIMULATED_TASKS` tasks, and gives the smallest drops.

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


def suite_power(
    tasks: Sequence[SuiteTask], cand_rollouts: int | Sequence[int], *, level: float
) -> float:
    """The fixed check's chance of rejecting the suite at ``level`` (its stratified
    branch) against these baseline tallies, by a normal approximation of the test given
    the tallies: its statistic ``sum (n1 C - M a) / N`` is linear in the candidate's
    passes C (binomial at the rate after the drop), and it rejects below ``-z sd0``,
    sd0 from the hypergeometric variance at the expected totals (with a continuity
    correction, as the exact test is discrete). ``cand_rollouts``: one count for every
    task, or one a task."""
    counts = [cand_rollouts] * len(tasks) if isinstance(cand_rollouts, int) else list(cand_rollouts)
    mean = spread = null = step = 0.0
    live = 0
    for task, m in zip(tasks, counts, strict=True):
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


SIMULATED_CHECKS = 1000  # a suite power is the share of this many seeded simulated checks
SIMULATED_TASKS = 200  # above this many tasks the normal approximation alone decides
LEAST_ROLLOUTS = 2  # check --run refuses a stats task fewer (commands/checking.py)
SUITE_SHARE = 0.9  # of alpha, to the stratified branch of the check's global step


def suite_declines(tables: Sequence[Table], *, alpha: float) -> bool:
    """The fixed check's global step (stats/verdicts.py ``decide_suite``): the exact
    stratified test at 0.9 alpha, or the smallest task p times the number of tasks at
    0.1 alpha. (Repeated here as verdicts imports this module; a unit test holds the
    two together.)"""
    if not tables:
        return False
    if stratified_decline_p(tables) <= SUITE_SHARE * alpha:
        return True
    smallest = min(decline_p(t) for t in tables)
    return min(1.0, len(tables) * smallest) <= (1 - SUITE_SHARE) * alpha


class SeededRollouts:
    """Seeded candidate passes, the same rollouts for every allocation tried (common
    random numbers): the k-th rollout of a task in a simulated check passes or not
    whatever else the allocation gives, so allocations compare on the same luck and
    the search's power rises with the rollouts, not with the noise."""

    def __init__(self, rates: Sequence[float], *, checks: int, seed: int) -> None:
        self._rates = tuple(rates)
        self._rngs = [random.Random(seed * 1_000_003 + c) for c in range(checks)]
        self._passes = [[[0] for _ in rates] for _ in range(checks)]

    @property
    def checks(self) -> int:
        return len(self._rngs)

    def passes(self, check: int, task: int, rollouts: int) -> int:
        made = self._passes[check][task]
        rate, rng = self._rates[task], self._rngs[check]
        while len(made) <= rollouts:
            made.append(made[-1] + (rng.random() < rate))
        return made[rollouts]


def _simulated_power(
    tasks: Sequence[SuiteTask], counts: Sequence[int], draws: SeededRollouts, *, alpha: float
) -> float:
    """The share of the simulated checks whose global step rejects."""
    hits = 0
    seen: dict[tuple[Table, ...], bool] = {}
    for check in range(draws.checks):
        tables = tuple(
            Table(t.base_passed, t.base_rollouts, draws.passes(check, i, m), m)
            for i, (t, m) in enumerate(zip(tasks, counts, strict=True))
        )
        key = tuple(sorted(tables, key=lambda t: (t.base_passed, t.base_rollouts, t.cand_passed)))
        if key not in seen:
            seen[key] = suite_declines(tables, alpha=alpha)
        hits += seen[key]
    return hits / draws.checks


def simulated_suite_power(
    tasks: Sequence[SuiteTask],
    cand_rollouts: int | Sequence[int],
    *,
    alpha: float,
    checks: int,
    seed: int = 32,
) -> float:
    """The share of ``checks`` seeded simulated checks whose global step (the check's
    own tests, :func:`suite_declines`) finds the decline: candidates drawn at each
    task's rate after the drop, ``cand_rollouts`` a task (or one count per task)."""
    counts = [cand_rollouts] * len(tasks) if isinstance(cand_rollouts, int) else list(cand_rollouts)
    draws = SeededRollouts([t.rate_after for t in tasks], checks=checks, seed=seed)
    return _simulated_power(tasks, counts, draws, alpha=alpha)


def _information_gain(task: SuiteTask, rollouts: int) -> float:
    """What one more rollout (past ``rollouts``) adds to the stratified test's signal:
    the gain in the task's weight ``n1 M / (n1 + M)`` times its drop squared over the
    pass-rate variance, the drift squared it contributes."""
    n1 = task.base_rollouts
    before = task.base_passed / n1
    pooled = min(max((before + task.rate_after) / 2, 0.5 / (n1 + rollouts)), 1 - 0.5 / n1)
    gain = n1 * (rollouts + 1) / (n1 + rollouts + 1) - n1 * rollouts / (n1 + rollouts)
    return gain * (before - task.rate_after) ** 2 / (pooled * (1 - pooled))


def extra_order(tasks: Sequence[SuiteTask], rollouts: int) -> tuple[int, ...]:
    """The tasks (indices) in the order they get a rollout past ``rollouts``: the most
    informative first (:func:`_information_gain`), ties by the order given (callers
    give tasks by ref)."""
    live = [i for i, t in enumerate(tasks) if t.base_passed > 0]
    return tuple(sorted(live, key=lambda i: (-_information_gain(tasks[i], rollouts), i)))


@dataclass(frozen=True)
class Allocation:
    """Rollouts a task for one check (in the order of the tasks given) and the power
    its global step has against the drop."""

    rollouts: tuple[int, ...]
    power: float

    @property
    def total(self) -> int:
        return sum(self.rollouts)


@dataclass(frozen=True)
class SuiteAllocation:
    """The fewest rollouts, spread evenly, that reach the power: ``chosen`` gives every
    task that can decline ``low`` or ``low + 1`` (the ``extra`` most informative, in
    ``order``, the one more), a task that cannot decline the least a check runs.
    ``smaller`` is the same with one rollout fewer in all (None when ``chosen`` is the
    least a check runs); ``uniform`` the fewest equal rollouts a task that reach it.
    ``simulated``: the powers are shares of ``checks`` simulated checks of the check's
    own tests, else (large suites) the normal approximation's."""

    chosen: Allocation
    smaller: Allocation | None
    uniform: Allocation
    low: int
    extra: int
    order: tuple[int, ...]
    at_least: bool  # the least a check runs already reaches the power
    simulated: bool
    checks: int


def allocate(
    tasks: Sequence[SuiteTask], low: int, extra: int, order: Sequence[int]
) -> tuple[int, ...]:
    """``low`` rollouts for each task that can decline, one more for the first ``extra``
    of ``order``; the least a check runs for a task that cannot decline."""
    counts = [low if t.base_passed > 0 else LEAST_ROLLOUTS for t in tasks]
    for i in order[:extra]:
        counts[i] += 1
    return tuple(counts)


def suite_allocation(
    tasks: Sequence[SuiteTask],
    *,
    alpha: float,
    power: float,
    limit: int = PRACTICAL_ROLLOUTS,
    checks: int = SIMULATED_CHECKS,
    seed: int = 32,
) -> SuiteAllocation | None:
    """The fewest total rollouts, as even as they can be, at which the check's global
    step finds every task's drop (``rate_after``) with at least ``power``; None when
    ``limit`` a task does not (or no task can decline).

    The equal count M comes first (the normal approximation's guess, then simulated
    checks up and down to the fewest that reach the power); then, between M - 1 and M,
    the fewest tasks given the extra rollout, by bisection. Every power is measured on
    the same simulated rollouts, so the ones compared differ only by the allocation.
    """
    live = [t for t in tasks if t.base_passed > 0]
    if not live:
        return None
    simulated = len(tasks) <= SIMULATED_TASKS
    draws = SeededRollouts([t.rate_after for t in tasks], checks=checks, seed=seed)
    known: dict[tuple[int, ...], float] = {}

    def power_of(counts: tuple[int, ...]) -> float:
        if counts not in known:
            known[counts] = (
                _simulated_power(tasks, counts, draws, alpha=alpha)
                if simulated
                else suite_power(tasks, counts, level=SUITE_SHARE * alpha)
            )
        return known[counts]

    def uniform(m: int) -> tuple[int, ...]:
        return allocate(tasks, m, 0, ())

    guess = next(
        (
            m
            for m in range(LEAST_ROLLOUTS, limit + 1)
            if suite_power(tasks, m, level=SUITE_SHARE * alpha) >= power
        ),
        limit,
    )
    m = guess
    if power_of(uniform(m)) >= power:
        while m > LEAST_ROLLOUTS and power_of(uniform(m - 1)) >= power:
            m -= 1
    else:
        while m < limit and power_of(uniform(m)) < power:
            m += 1
        if power_of(uniform(m)) < power:
            return None
    top = Allocation(uniform(m), power_of(uniform(m)))
    if m == LEAST_ROLLOUTS:
        return SuiteAllocation(top, None, top, m, 0, (), True, simulated, checks)
    order = extra_order(tasks, m - 1)
    low_extra, high_extra = 0, len(order)  # below the power at 0, at it with all
    while high_extra - low_extra > 1:
        middle = (low_extra + high_extra) // 2
        if power_of(allocate(tasks, m - 1, middle, order)) >= power:
            high_extra = middle
        else:
            low_extra = middle
    chosen = allocate(tasks, m - 1, high_extra, order)
    smaller = allocate(tasks, m - 1, high_extra - 1, order)
    if high_extra == len(order):  # every task needs M: the smaller is M - 1 and extras
        chosen_alloc = top
        extra, low = 0, m
    else:
        chosen_alloc = Allocation(chosen, power_of(chosen))
        extra, low = high_extra, m - 1
    return SuiteAllocation(
        chosen=chosen_alloc,
        smaller=Allocation(smaller, power_of(smaller)),
        uniform=top,
        low=low,
        extra=extra,
        order=order,
        at_least=False,
        simulated=simulated,
        checks=checks if simulated else 0,
    )


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
    power: float | None = None  # of ``rollouts``, exact at the tally's rate
    power_fewer: float | None = None  # of one rollout fewer


@dataclass(frozen=True)
class Override:
    """A task whose configured ``repeat`` comes from its own or its environment's table,
    so the top-level key the plan suggests would not reach it."""

    task: str
    repeat: int


@dataclass(frozen=True)
class SuitePlan:
    tasks: int  # tasks that can decline
    rollouts: int | None  # the fewest equal rollouts a task that reach the power
    smallest_drop: float | None
    sequential: SequentialPlan | None
    cap_needed: int | None  # the smallest cap (looks scaled) reaching the power
    cap_power: float | None = None  # the sequential check's power at ``cap_needed``
    allocation: SuiteAllocation | None = None
    names: tuple[str, ...] = ()  # the tasks of ``allocation``, in its order
    overrides: tuple[Override, ...] = ()


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
    pyproject: bool = False  # the project's keys live in pyproject.toml [tool.silo-regress]
