"""Holm's step-down correction: family-wise error at most alpha, never weaker than Bonferroni."""

from __future__ import annotations

from collections.abc import Sequence


def holm_adjust(p_values: Sequence[float]) -> tuple[float, ...]:
    """Holm-adjusted p-values, in the order given: reject where adjusted <= alpha.

    The i-th smallest (from 0) is multiplied by m - i, made monotone with the ones
    before it and capped at 1 (statsmodels ``multipletests(method="holm")``)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return tuple(adjusted)
