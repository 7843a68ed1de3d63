"""The change point engine of ``bisect``: exact posterior, exact one-step information,
the stop's two conditions, credible intervals; scipy is the oracle."""

from __future__ import annotations

import math
import random
import time
from typing import Any

import pytest

from silo_regress.stats.changepoint import (
    Counts,
    assess,
    beta_cdf,
    beta_quantile,
    choose,
    entropy,
    expected_entropies,
    posterior,
    side_rates,
    stop_threshold,
)

scipy_integrate: Any = pytest.importorskip("scipy.integrate")
stats: Any = pytest.importorskip("scipy.stats")


def random_counts(rng: random.Random, n: int) -> Counts:
    counts = Counts.empty(n + 1)
    for j in range(n + 1):
        r = rng.randint(0, 5)
        counts = counts.add(j, passed=rng.randint(0, r), rollouts=r)
    return counts


def likelihood(counts: Counts, k: int) -> float:
    """The marginal likelihood of culprit k by numeric integration over both rates."""
    sb = sum(counts.passed[:k])
    fb = sum(counts.rollouts[:k]) - sb
    sa = sum(counts.passed[k:])
    fa = sum(counts.rollouts[k:]) - sa
    good: float = scipy_integrate.quad(lambda p: p**sb * (1 - p) ** fb, 0, 1)[0]
    bad: float = scipy_integrate.quad(lambda p: p**sa * (1 - p) ** fa, 0, 1)[0]
    return good * bad


def test_posterior_is_the_integrated_likelihood_normalised() -> None:
    counts = random_counts(random.Random(3), 6)
    raw = [likelihood(counts, k) for k in range(1, 7)]
    expected = [0.0] + [x / sum(raw) for x in raw]
    assert posterior(counts) == pytest.approx(expected, rel=1e-7)


def test_expected_entropy_matches_enumerating_every_outcome() -> None:
    rng = random.Random(5)
    counts = random_counts(rng, 7)
    r = 3
    fast = expected_entropies(counts, round_size=r)
    for j in range(8):
        raw_now = sum(likelihood(counts, k) for k in range(1, 8))
        total = 0.0
        for x in range(r + 1):
            after = counts.add(j, passed=x, rollouts=r)
            chance = math.comb(r, x) * sum(likelihood(after, k) for k in range(1, 8)) / raw_now
            total += chance * entropy(posterior(after))
        assert fast[j] == pytest.approx(total, rel=1e-6)


def test_a_prior_from_blame_weighs_the_culprits() -> None:
    counts = Counts.empty(5)
    assert posterior(counts) == pytest.approx([0, 0.25, 0.25, 0.25, 0.25])
    assert posterior(counts, prior=[0, 1, 3, 0, 0]) == pytest.approx([0, 0.25, 0.75, 0, 0])
    with pytest.raises(ValueError, match="non-negative"):
        posterior(counts, prior=[0, 1, 1])


def test_the_stop_needs_the_posterior_and_both_sides_of_the_culprit() -> None:
    assert stop_threshold(0.95) == pytest.approx(0.975)
    with pytest.raises(ValueError):
        stop_threshold(1.0)
    # Strong evidence either side of commit 3, but nothing at 2: not named yet.
    counts = Counts((40, 40, 0, 0, 0), (40, 40, 0, 40, 40))
    found = assess(counts, confidence=0.95)
    assert not found.both_sides and not found.decided
    # The same with commit 2 tested (all pass): commit 3 is named.
    counts = counts.add(2, passed=40, rollouts=40)
    found = assess(counts, confidence=0.95)
    assert (found.culprit, found.both_sides, found.decided) == (3, True, True)
    assert found.probability > 0.999


def test_the_next_commit_splits_what_is_unknown() -> None:
    # Both ends known: the middle of 16 commits is worth the most.
    counts = Counts((20,) + (0,) * 15 + (0,), (20,) + (0,) * 15 + (20,))
    assert choose(counts, round_size=5) in (7, 8, 9)
    # A skipped position is never chosen.
    testable = [True] * 17
    for j in (7, 8, 9):
        testable[j] = False
    assert choose(counts, round_size=5, testable=testable) not in (7, 8, 9)


def test_rates_either_side_have_beta_credible_intervals() -> None:
    counts = Counts((18, 9, 3), (20, 10, 10))
    before, after = side_rates(counts, 2)
    assert (before.passed, before.rollouts, after.passed, after.rollouts) == (27, 30, 3, 10)
    oracle = stats.beta(28, 4)
    assert before.mean == pytest.approx(28 / 32)
    assert before.low == pytest.approx(oracle.ppf(0.025), abs=1e-9)
    assert before.high == pytest.approx(oracle.ppf(0.975), abs=1e-9)


@pytest.mark.parametrize(("a", "b"), [(1, 1), (2, 30), (300, 4), (0.5, 0.5), (40, 40)])
def test_beta_cdf_and_quantile_agree_with_scipy(a: float, b: float) -> None:
    for x in (0.001, 0.1, 0.5, 0.9, 0.999):
        assert beta_cdf(x, a, b) == pytest.approx(stats.beta.cdf(x, a, b), abs=1e-10)
    for q in (0.025, 0.5, 0.975):
        assert beta_quantile(q, a, b) == pytest.approx(stats.beta.ppf(q, a, b), abs=1e-9)


def test_a_round_on_128_commits_is_chosen_fast() -> None:
    counts = random_counts(random.Random(9), 128)
    began = time.process_time()
    choose(counts, round_size=5)
    assert time.process_time() - began < 0.25  # measured ~10 ms; a bisect waits on it
