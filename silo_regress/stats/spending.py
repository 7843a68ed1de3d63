"""Group-sequential boundaries: alpha spent over a few looks at a statistic that grows
like a Brownian motion in its information.

A test looked at after each of K rounds rejects at look k when its one-sided p-value is
at most the look's *nominal level*. The nominal levels are chosen so that, for a
normal statistic with independent increments (the score of a stratified comparison of
pass counts is one, in the information ``n1 n2 / (n1 + n2)`` summed over tasks), the
chance of rejecting at some look under "no change" is exactly the alpha to spend, and
the share spent by look k is the spending function at that look's information
fraction t_k (Lan and DeMets). The family is Hwang, Shih and DeCani's:
``f(t) = (1 - exp(-gamma t)) / (1 - exp(-gamma))``; gamma = -4 spends like O'Brien and
Fleming (little early), gamma = 1 like Pocock (evenly).

The levels are computed by numerical integration of the statistic's density over the
region where no look has rejected yet (Armitage, McPherson and Rowe's recursion), on a
grid fine enough that the spent alpha is right to about 1e-5. A futility bound is not
part of the computation (it is *non-binding*): stopping early for futility only lowers
the chance of a false rejection, so a design may ignore it without losing its level.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import lru_cache

_SQRT2 = math.sqrt(2.0)
_STEP = 0.05  # grid step in standard deviations of the current look's statistic
_LOW = -7.0  # the grid's lower end, in the same units: mass below is under 1e-11


def normal_tail(z: float) -> float:
    """P(Z > z) for a standard normal Z."""
    return 0.5 * math.erfc(z / _SQRT2)


def normal_quantile(p: float) -> float:
    """The z with P(Z > z) = p, for 0 < p < 1 (bisection on erfc: exact to 1e-12)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), not {p}")
    low, high = -40.0, 40.0
    for _ in range(100):
        middle = (low + high) / 2
        if normal_tail(middle) > p:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def spent(fraction: float, *, gamma: float) -> float:
    """The share of alpha spent by information fraction ``fraction`` (0..1)."""
    fraction = min(1.0, max(0.0, fraction))
    if abs(gamma) < 1e-9:
        return fraction
    return (1 - math.exp(-gamma * fraction)) / (1 - math.exp(-gamma))


def _grid(low: float, high: float, step: float) -> list[float]:
    count = max(2, math.ceil((high - low) / step))
    width = (high - low) / count
    return [low + i * width for i in range(count + 1)]


def _weights(points: int) -> list[float]:
    """Trapezoid weights (the grid is equally spaced)."""
    weights = [1.0] * points
    weights[0] = weights[-1] = 0.5
    return weights


def _convolve(
    points: list[float], density: list[float], new_points: list[float], *, shift: float, sd: float
) -> list[float]:
    """The density at ``new_points`` of S + N(shift, sd^2), S with ``density`` on ``points``."""
    width = points[1] - points[0]
    weighted = [w * d * width for w, d in zip(_weights(len(points)), density, strict=True)]
    norm = 1 / (sd * math.sqrt(2 * math.pi))
    out = []
    for u in new_points:
        acc = 0.0
        for w, s in zip(weighted, points, strict=True):
            x = (u - s - shift) / sd
            if -9.0 < x < 9.0:
                acc += w * math.exp(-0.5 * x * x)
        out.append(acc * norm)
    return out


def _masses(points: list[float], density: list[float]) -> list[float]:
    """The probability each grid point stands for (trapezoid rule)."""
    if not points:
        return []
    width = points[1] - points[0]
    return [w * d * width for w, d in zip(_weights(len(points)), density, strict=True)]


def _above(
    points: list[float], masses: list[float], bound: float, *, shift: float, sd: float
) -> float:
    """P(S + N(shift, sd^2) > bound), S on the grid with ``masses`` (S = 0 with no grid)."""
    if not points:
        return normal_tail((bound - shift) / sd)
    return math.fsum(
        m * normal_tail((bound - s - shift) / sd) for m, s in zip(masses, points, strict=True)
    )


def _start(new_points: list[float], *, shift: float, sd: float) -> list[float]:
    norm = 1 / (sd * math.sqrt(2 * math.pi))
    return [norm * math.exp(-0.5 * ((u - shift) / sd) ** 2) for u in new_points]


@lru_cache(maxsize=256)
def nominal_levels(
    fractions: tuple[float, ...], *, alpha: float, gamma: float
) -> tuple[float, ...]:
    """The one-sided nominal p-value level of each look, for increasing information
    ``fractions`` (the last one 1), spending ``alpha`` by the function above."""
    if not fractions or fractions[0] <= 0 or any(b <= a for a, b in itertools.pairwise(fractions)):
        raise ValueError(f"information fractions must increase from above 0: {fractions}")
    levels: list[float] = []
    # The score S_k = Z_k sqrt(t_k) has independent increments of variance t_k - t_(k-1).
    points: list[float] = []
    density: list[float] = []
    previous_t = previous_spent = 0.0
    for t in fractions:
        target = alpha * (spent(t, gamma=gamma) - previous_spent)
        previous_spent = spent(t, gamma=gamma)
        sd = math.sqrt(t - previous_t)
        masses = _masses(points, density)
        if target <= 0.0:
            bound = math.inf
        else:
            low, high = -10.0 * math.sqrt(t), 12.0 * math.sqrt(t)
            for _ in range(60):
                middle = (low + high) / 2
                if _above(points, masses, middle, shift=0.0, sd=sd) > target:
                    low = middle
                else:
                    high = middle
            bound = (low + high) / 2
        levels.append(normal_tail(bound / math.sqrt(t)) if math.isfinite(bound) else 0.0)
        # The density of S_k where no look has rejected yet, for the next look.
        new_points = _grid(
            _LOW * math.sqrt(t), min(bound, 9.0 * math.sqrt(t)), _STEP * math.sqrt(t)
        )
        if points:
            density = _convolve(points, density, new_points, shift=0.0, sd=sd)
        else:
            density = _start(new_points, shift=0.0, sd=sd)
        points, previous_t = new_points, t
    return tuple(levels)


def rejection_chances(
    fractions: Sequence[float],
    levels: Sequence[float],
    *,
    drift: float,
    futility: Sequence[float] | None = None,
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """For a statistic whose z at the last look has mean ``drift``: the chance of
    rejecting at each look, and of stopping for futility at each look before the last (a
    futility level is the p-value at or above which the design stops). By the same
    recursion; for planning, not for a guarantee."""
    rejects: list[float] = []
    stops: list[float] = []
    points: list[float] = []
    density: list[float] = []
    previous_t = 0.0
    for k, (t, level) in enumerate(zip(fractions, levels, strict=True)):
        shift, sd = drift * (t - previous_t), math.sqrt(t - previous_t)  # E S_k = drift t
        upper = normal_quantile(level) * math.sqrt(t) if level > 0 else math.inf
        lower = -math.inf
        if futility is not None and k < len(fractions) - 1:
            lower = normal_quantile(futility[k]) * math.sqrt(t)
        masses = _masses(points, density)
        reached = 1.0 if not points else _above(points, masses, -math.inf, shift=shift, sd=sd)
        rejects.append(
            _above(points, masses, upper, shift=shift, sd=sd) if upper < math.inf else 0.0
        )
        stops.append(
            reached - _above(points, masses, lower, shift=shift, sd=sd)
            if lower > -math.inf
            else 0.0
        )
        low = lower if lower > -math.inf else drift * t + _LOW * math.sqrt(t)
        high = upper if upper < math.inf else drift * t + 9.0 * math.sqrt(t)
        if high <= low:
            break
        new_points = _grid(low, high, _STEP * math.sqrt(t))
        if points:
            density = _convolve(points, density, new_points, shift=shift, sd=sd)
        else:
            density = _start(new_points, shift=shift, sd=sd)
        points, previous_t = new_points, t
    rejects += [0.0] * (len(fractions) - len(rejects))
    stops += [0.0] * (len(fractions) - len(stops))
    return tuple(rejects), tuple(stops)
