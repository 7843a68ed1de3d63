"""The default design's precomputed nominal levels (stats/spending.py) are the numbers
the integration gives, and a default suite's first look uses them (issue 32's speed)."""

from __future__ import annotations

import math

from silo_regress.stats import spending
from silo_regress.stats.groupsequential import SequentialPolicy, fractions_of, levels_for


def test_every_precomputed_entry_is_what_the_integration_gives() -> None:
    assert len(spending._PRECOMPUTED) == 30
    for (fractions, alpha, gamma), levels in spending._PRECOMPUTED.items():
        again = spending._nominal_levels.__wrapped__(fractions, alpha=alpha, gamma=gamma)
        # bit for bit on glibc; a last-bit difference elsewhere would move no decision
        assert all(math.isclose(a, b, rel_tol=1e-13) for a, b in zip(again, levels, strict=True))


def test_a_default_suite_of_tallies_of_8_reads_the_table() -> None:
    policy = SequentialPolicy()
    spending._nominal_levels.cache_clear()
    levels = levels_for([8] * 1000, policy)
    assert spending._nominal_levels.cache_info().misses == 0  # not computed
    key = (fractions_of([8], policy.looks), policy.suite_share * policy.alpha, policy.gamma)
    assert levels.stratified == spending._PRECOMPUTED[key]
    levels_for([8] * 500 + [12] * 500, policy)  # a mixed suite is computed as before
    assert spending._nominal_levels.cache_info().misses == 1
