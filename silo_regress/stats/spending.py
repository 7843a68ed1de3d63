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


# nominal_levels of the default design (looks after 2, 4, 6 and 8 rollouts, 0.9 of
# alpha = 0.05, gamma -1) for suites whose baselines all hold n = 3..32 rollouts: the
# first look of such a suite would otherwise spend about 25 ms computing them (issue
# 32's speed target). Made by the function below; tests/unit/test_stats_spending_table.py
# recomputes every entry and requires the same numbers.
_PRECOMPUTED: dict[tuple[tuple[float, ...], float, float], tuple[float, ...]] = {
    ((0.55, 0.7857, 0.9167, 1.0), 0.045000000000000005, -1.0): (
        0.019203127948820797,
        0.021735179773518715,
        0.023929391414586405,
        0.025593371531407706,
    ),
    ((0.5, 0.75, 0.9, 1.0), 0.045000000000000005, -1.0): (
        0.01698933009591655,
        0.02042317245287053,
        0.023509541975938117,
        0.025997556425091474,
    ),
    ((0.4643, 0.7222, 0.8864, 1.0), 0.045000000000000005, -1.0): (
        0.015475056047515576,
        0.019421553966730967,
        0.0231632383294204,
        0.026336654087503755,
    ),
    ((0.4375, 0.7, 0.875, 1.0), 0.045000000000000005, -1.0): (
        0.01437329024231408,
        0.018635502699258025,
        0.022862780422893834,
        0.02662306505036677,
    ),
    ((0.4167, 0.6818, 0.8654, 1.0), 0.045000000000000005, -1.0): (
        0.013538309510872815,
        0.017998378242231286,
        0.02260691443296116,
        0.026864349206606013,
    ),
    ((0.4, 0.6667, 0.8571, 1.0), 0.045000000000000005, -1.0): (
        0.012880373305062082,
        0.017477511169149137,
        0.022378320952243975,
        0.0270720554454368,
    ),
    ((0.3864, 0.6538, 0.85, 1.0), 0.045000000000000005, -1.0): (
        0.012352627290706977,
        0.01703404225700664,
        0.02218549366258907,
        0.027249505987155132,
    ),
    ((0.375, 0.6429, 0.8438, 1.0), 0.045000000000000005, -1.0): (
        0.011915748230999269,
        0.016665633675272636,
        0.022012773941432983,
        0.027403539938616304,
    ),
    ((0.3654, 0.6333, 0.8382, 1.0), 0.045000000000000005, -1.0): (
        0.011551693369884536,
        0.016340629771208745,
        0.021853841551749194,
        0.027542005469571397,
    ),
    ((0.3571, 0.625, 0.8333, 1.0), 0.045000000000000005, -1.0): (
        0.011239742402270847,
        0.016063872918952962,
        0.02171449989771237,
        0.02766270081045432,
    ),
    ((0.35, 0.6176, 0.8289, 1.0), 0.045000000000000005, -1.0): (
        0.010974939834874737,
        0.01581609812985407,
        0.02158932317173132,
        0.02777076009425829,
    ),
    ((0.3438, 0.6111, 0.825, 1.0), 0.045000000000000005, -1.0): (
        0.010745236522765307,
        0.015600448966952571,
        0.02147818664347315,
        0.02786619577453586,
    ),
    ((0.3382, 0.6053, 0.8214, 1.0), 0.045000000000000005, -1.0): (
        0.010538983116652502,
        0.015410970045957253,
        0.02137277699730137,
        0.02795377810278495,
    ),
    ((0.3333, 0.6, 0.8182, 1.0), 0.045000000000000005, -1.0): (
        0.010359456435088874,
        0.01523630404655932,
        0.02128220073734584,
        0.028031778962348403,
    ),
    ((0.3289, 0.5952, 0.8152, 1.0), 0.045000000000000005, -1.0): (
        0.010198996709086501,
        0.01507888681621075,
        0.02119466191618489,
        0.028104465568363452,
    ),
    ((0.325, 0.5909, 0.8125, 1.0), 0.045000000000000005, -1.0): (
        0.010057360080815007,
        0.014938317987312912,
        0.021115917462610035,
        0.028169743554190618,
    ),
    ((0.3214, 0.587, 0.81, 1.0), 0.045000000000000005, -1.0): (
        0.009927107952514464,
        0.014812612869540392,
        0.021041962473475728,
        0.028229951135398418,
    ),
    ((0.3182, 0.5833, 0.8077, 1.0), 0.045000000000000005, -1.0): (
        0.009811721278419042,
        0.014690938621927368,
        0.020976065650591375,
        0.028285469048103966,
    ),
    ((0.3152, 0.58, 0.8056, 1.0), 0.045000000000000005, -1.0): (
        0.009703881100303725,
        0.014585187821837538,
        0.020914911480706566,
        0.02833596591946014,
    ),
    ((0.3125, 0.5769, 0.8036, 1.0), 0.045000000000000005, -1.0): (
        0.009607101163157229,
        0.014484628635010674,
        0.020855967263988796,
        0.028383903319105865,
    ),
    ((0.31, 0.5741, 0.8017, 1.0), 0.045000000000000005, -1.0): (
        0.00951772280023144,
        0.014395147498113211,
        0.020797586711783347,
        0.028429110589976117,
    ),
    ((0.3077, 0.5714, 0.8, 1.0), 0.045000000000000005, -1.0): (
        0.009435691820418689,
        0.014307611981661975,
        0.020748999471407164,
        0.02846990059670954,
    ),
    ((0.3056, 0.569, 0.7984, 1.0), 0.045000000000000005, -1.0): (
        0.009360958566178086,
        0.014230934897245787,
        0.020700871550503944,
        0.028507957131997188,
    ),
    ((0.3036, 0.5667, 0.7969, 1.0), 0.045000000000000005, -1.0): (
        0.009289929797872043,
        0.014157566398483546,
        0.020656817412564633,
        0.028543727018043592,
    ),
    ((0.3017, 0.5645, 0.7955, 1.0), 0.045000000000000005, -1.0): (
        0.009222583921661061,
        0.01408745352352212,
        0.0206167904149403,
        0.02857719649078624,
    ),
    ((0.3, 0.5625, 0.7941, 1.0), 0.045000000000000005, -1.0): (
        0.009162435451604027,
        0.01402352717728304,
        0.02057314374059921,
        0.028610218127712996,
    ),
    ((0.2984, 0.5606, 0.7929, 1.0), 0.045000000000000005, -1.0): (
        0.009105918457638995,
        0.013962765839432258,
        0.020539235726364326,
        0.02863888867164674,
    ),
    ((0.2969, 0.5588, 0.7917, 1.0), 0.045000000000000005, -1.0): (
        0.009053015839121983,
        0.013905138895193816,
        0.020503544663204927,
        0.02866732845119196,
    ),
    ((0.2955, 0.5571, 0.7905, 1.0), 0.045000000000000005, -1.0): (
        0.009003711605431059,
        0.013850617444283711,
        0.02046604325905428,
        0.0286954946863566,
    ),
    ((0.2941, 0.5556, 0.7895, 1.0), 0.045000000000000005, -1.0): (
        0.008954476349371675,
        0.013805105438895867,
        0.02043664334326205,
        0.028719198871462175,
    ),
}


def nominal_levels(
    fractions: tuple[float, ...], *, alpha: float, gamma: float
) -> tuple[float, ...]:
    """The one-sided nominal p-value level of each look, for increasing information
    ``fractions`` (the last one 1), spending ``alpha`` by the function above (from
    the table above when it holds the design)."""
    known = _PRECOMPUTED.get((fractions, alpha, gamma))
    return known if known is not None else _nominal_levels(fractions, alpha=alpha, gamma=gamma)


@lru_cache(maxsize=256)
def _nominal_levels(
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
