"""Wald's sequential probability ratio test on a task's candidate passes, in rounds.

0.4's `check --run` no longer runs it (the sequential check of
:mod:`silo_regress.stats.groupsequential` decides the suite at each look); bench/bisection.py
compares against it, and merge reads the per-task decisions 0.3 reports carry.

The test weighs H0 "the candidate passes at the baseline's rate p0" against H1 "it
passes at p1 = p0 - drop". After each round it adds the log likelihood ratio of the
rollouts so far and stops at Wald's boundaries: ``regression`` at or above
log((1 - beta) / alpha), ``stable`` at or below log(beta / (1 - alpha)). At ``max_rollouts``
an undecided task stays undecided (the gate calls it ``suspect``; it never fails).

What is guaranteed, for a candidate whose rollouts pass independently at rate p: a
design from :func:`calibrated_design` has, computed exactly by
:func:`operating_characteristic` (not by simulation), a chance of ``regression`` of at
most alpha at p = p0 and at least 1 - beta at p = p1, with its rounds and its cap. p0
is the baseline's rate as recorded: the guarantee is relative to it (a baseline tally's
own noise is not in it), so the gate asks for a large baseline tally before it tests
sequentially.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass


class Decision(enum.StrEnum):
    REGRESSION = "regression"
    STABLE = "stable"
    CONTINUE = "continue"


@dataclass(frozen=True)
class Design:
    p0: float  # the baseline's pass rate
    p1: float  # the rate a regression has dropped to
    alpha: float = 0.05
    beta: float = 0.2
    round_size: int = 1  # rollouts run between two looks
    max_rollouts: int = 100

    def __post_init__(self) -> None:
        if not 0.0 < self.p1 < self.p0 < 1.0:
            raise ValueError(f"need 0 < p1 < p0 < 1, not p0={self.p0}, p1={self.p1}")
        if not (0.0 < self.alpha < 1.0 and 0.0 < self.beta < 1.0):
            raise ValueError("alpha and beta must be in (0, 1)")
        if self.round_size < 1 or self.max_rollouts < self.round_size:
            raise ValueError("need 1 <= round_size <= max_rollouts")

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    def log_ratio(self, passed: int, rollouts: int) -> float:
        """log L(H1) / L(H0) of ``passed`` passes in ``rollouts``."""
        fails = rollouts - passed
        return passed * math.log(self.p1 / self.p0) + fails * math.log(
            (1 - self.p1) / (1 - self.p0)
        )

    def decide(self, passed: int, rollouts: int) -> Decision:
        """The decision at a look after ``rollouts`` rollouts with ``passed`` passes."""
        ratio = self.log_ratio(passed, rollouts)
        if ratio >= self.upper:
            return Decision.REGRESSION
        if ratio <= self.lower:
            return Decision.STABLE
        return Decision.CONTINUE

    def looks(self) -> tuple[int, ...]:
        """The rollout counts after which the test looks: each round, and the cap."""
        points = list(range(self.round_size, self.max_rollouts + 1, self.round_size))
        if points[-1] != self.max_rollouts:
            points.append(self.max_rollouts)
        return tuple(points)


@dataclass(frozen=True)
class Characteristic:
    """Exact chances of each end, and the mean rollouts used, at one true pass rate."""

    regression: float
    stable: float
    undecided: float
    mean_rollouts: float


def operating_characteristic(design: Design, *, rate: float) -> Characteristic:
    """Exact, by dynamic programming over the passes of the paths still running."""
    alive = {0: 1.0}  # passes so far -> probability, among paths not yet stopped
    done = 0
    regression = stable = mean = 0.0
    for look in design.looks():
        step = look - done
        grown: dict[int, float] = {}
        for passes, mass in alive.items():
            for extra in range(step + 1):
                weight = math.comb(step, extra) * rate**extra * (1 - rate) ** (step - extra)
                grown[passes + extra] = grown.get(passes + extra, 0.0) + mass * weight
        done = look
        alive = {}
        for passes, mass in grown.items():
            decision = design.decide(passes, look)
            if decision is Decision.REGRESSION:
                regression += mass
                mean += mass * look
            elif decision is Decision.STABLE:
                stable += mass
                mean += mass * look
            else:
                alive[passes] = mass
    undecided = math.fsum(alive.values())
    mean += undecided * design.max_rollouts
    return Characteristic(regression, stable, undecided, mean)


def calibrated_design(
    p0: float,
    p1: float,
    *,
    alpha: float = 0.05,
    beta: float = 0.2,
    round_size: int = 1,
    max_rollouts: int = 100,
) -> Design:
    """A design whose exact error rates meet the targets: regression at p0 at most
    ``alpha``, and at p1 at least ``1 - beta`` (undecided counts as missed).

    Wald's boundaries only approximate the targets (overshoot, rounds and the cap move
    them either way); the nominal alpha and beta shrink by a tenth at a time until the
    exact operating characteristic meets both.
    """
    nominal_alpha, nominal_beta = alpha, beta
    for _ in range(60):
        design = Design(p0, p1, nominal_alpha, nominal_beta, round_size, max_rollouts)
        size = operating_characteristic(design, rate=p0).regression
        power = operating_characteristic(design, rate=p1).regression
        if size <= alpha and power >= 1 - beta:
            return design
        if size > alpha:
            nominal_alpha *= 0.9
        if power < 1 - beta:
            nominal_beta *= 0.9
    raise ValueError(f"no design meets alpha={alpha}, beta={beta} within {max_rollouts} rollouts")


def size_calibrated_design(
    p0: float, p1: float, *, alpha: float, beta: float, round_size: int, max_rollouts: int
) -> Design:
    """A design whose exact false-alarm rate at p0 is at most ``alpha``, whatever its
    power: for a cap too small to reach 1 - beta (undecided tasks end ``suspect``)."""
    nominal = alpha
    for _ in range(200):
        design = Design(p0, p1, nominal, beta, round_size, max_rollouts)
        if operating_characteristic(design, rate=p0).regression <= alpha:
            return design
        nominal *= 0.8
    raise ValueError(f"no design keeps alpha={alpha} within {max_rollouts} rollouts")


def binomial_cdf(k: int, n: int, rate: float) -> float:
    """P(Bin(n, rate) <= k)."""
    return math.fsum(math.comb(n, x) * rate**x * (1 - rate) ** (n - x) for x in range(k + 1))


@dataclass(frozen=True)
class FixedDesign:
    """The fixed-size exact binomial test with the same error rates: M rollouts,
    ``regression`` when at most ``critical`` pass."""

    rollouts: int
    critical: int
    size: float  # exact chance of regression at p0
    power: float  # exact chance of regression at p1


def fixed_design(
    p0: float, p1: float, *, alpha: float, beta: float, limit: int = 2000
) -> FixedDesign:
    """The smallest M whose one-sided exact binomial test has size <= alpha at p0 and
    power >= 1 - beta at p1."""
    for n in range(1, limit + 1):
        critical = -1
        while binomial_cdf(critical + 1, n, p0) <= alpha:
            critical += 1
        if critical >= 0:
            power = binomial_cdf(critical, n, p1)
            if power >= 1 - beta:
                return FixedDesign(n, critical, binomial_cdf(critical, n, p0), power)
    raise ValueError(f"no fixed design up to {limit} rollouts")
