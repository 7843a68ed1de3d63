"""The per-task sequential probability ratio test (stats/sequential.py) that bisect's bench
compares against: its designs refuse what has no test, and its binomial sums are exact.

(0.3's --repeat-until-decided alpha split over per-task SPRTs is gone: the group-sequential
check spends alpha on the closed test's global step instead, and
tests/unit/test_stats_groupsequential.py holds that split.)"""

from __future__ import annotations

import math

import pytest

from silo_regress.stats.sequential import Design, binomial_cdf


def _binomial(n: int, rate: float) -> list[float]:
    return [math.comb(n, x) * rate**x * (1 - rate) ** (n - x) for x in range(n + 1)]


@pytest.mark.parametrize(
    "arguments",
    [
        {"p0": 1.0, "p1": 0.8},
        {"p0": 0.8, "p1": 0.8},
        {"p0": 0.8, "p1": 0.0},
        {"p0": 0.9, "p1": 0.8, "round_size": 0},
        {"p0": 0.9, "p1": 0.8, "round_size": 5, "max_rollouts": 4},
        {"p0": 0.9, "p1": 0.8, "alpha": 0.0},
        {"p0": 0.9, "p1": 0.8, "beta": 1.0},
    ],
)
def test_a_design_refuses_what_has_no_test(arguments: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        Design(**arguments)  # type: ignore[arg-type]


def test_binomial_cdf_is_the_sum_of_the_binomial_terms() -> None:
    for n in range(0, 12):
        for k in range(-1, n + 1):
            expected = math.fsum(_binomial(n, 0.3)[: k + 1])
            assert binomial_cdf(k, n, 0.3) == pytest.approx(expected, abs=1e-15)
