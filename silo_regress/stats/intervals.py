"""Wilson score intervals for a pass rate: honest at 0 and at all passes, unlike rate +- 2 SE."""

from __future__ import annotations

import math
from dataclasses import dataclass

# The standard normal's 0.975 quantile (scipy.stats.norm.ppf(0.975)), for 95% intervals.
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


def wilson(passed: int, rollouts: int, *, z: float = Z95) -> Interval:
    """The Wilson score interval of ``passed`` in ``rollouts``; [0, 1] with no rollouts."""
    if not 0 <= passed <= rollouts:
        raise ValueError(f"{passed} passes of {rollouts} rollouts")
    if rollouts == 0:
        return Interval(0.0, 1.0)
    n, z2 = rollouts, z * z
    centre = (passed + z2 / 2) / (n + z2)
    half = z / (n + z2) * math.sqrt(passed * (n - passed) / n + z2 / 4)
    # The formula gives exactly 0 (or 1) at the ends only up to rounding.
    low = 0.0 if passed == 0 else max(0.0, centre - half)
    high = 1.0 if passed == n else min(1.0, centre + half)
    return Interval(low, high)
