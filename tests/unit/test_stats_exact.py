"""The exact tests of the stats gate against brute-force enumeration (always run) and
against scipy/statsmodels (test-only oracles): agreement to 1e-12.

The oracles are a test extra, so CI has them: a test that needs one skips without it
only outside CI (no ``CI`` variable); in CI a missing oracle fails the test. The
brute-force oracles never depend on them."""

from __future__ import annotations

import importlib
import itertools
import math
import os
import random
from fractions import Fraction
from types import ModuleType

import pytest

from silo_regress.stats.exact import (
    Table,
    decline_p,
    hypergeometric_pmf,
    increase_p,
    sign_test_p,
    stratified_decline_p,
    stratified_increase_p,
)
from silo_regress.stats.intervals import wilson
from silo_regress.stats.multiplicity import holm_adjust
from silo_regress.stats.passk import pass_hat_k, suite_curve, suite_pass_hat_k

TOLERANCE = 1e-12


def _oracle(name: str) -> ModuleType:
    """A test-only oracle module: a skip outside CI when it is missing, a failure in CI."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is in the [test] extra and CI installs it: {exc}")
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")


def _fisher(table: Table, alternative: str) -> float:
    scipy_stats = _oracle("scipy.stats")
    # scipy's table: rows candidate then baseline, columns passes then fails; "less"
    # is P(candidate's passes <= observed) given the margins.
    rows = [
        [table.cand_passed, table.cand_rollouts - table.cand_passed],
        [table.base_passed, table.base_rollouts - table.base_passed],
    ]
    return float(scipy_stats.fisher_exact(rows, alternative=alternative).pvalue)


def _tables(most: int) -> list[Table]:
    return [
        Table(a, n1, c, n2)
        for n1 in range(1, most + 1)
        for n2 in range(1, most + 1)
        for a in range(n1 + 1)
        for c in range(n2 + 1)
    ]


def _brute_fisher(table: Table) -> tuple[Fraction, Fraction]:
    """Fisher's p both ways from its definition: of every way to place the t passes among
    the n1 + n2 rollouts, the share giving the candidate at most (at least) c of them."""
    n1, n2, t = table.base_rollouts, table.cand_rollouts, table.total_passed
    at_most = at_least = total = 0
    for placed in itertools.combinations(range(n1 + n2), t):
        cand = sum(1 for i in placed if i >= n1)
        total += 1
        at_most += cand <= table.cand_passed
        at_least += cand >= table.cand_passed
    return Fraction(at_most, total), Fraction(at_least, total)


def test_fisher_agrees_with_brute_force_on_every_table_up_to_6_a_side() -> None:
    for table in _tables(6):
        lower, upper = _brute_fisher(table)
        assert abs(decline_p(table) - float(lower)) <= TOLERANCE, table
        assert abs(increase_p(table) - float(upper)) <= TOLERANCE, table


def test_fisher_agrees_with_scipy_on_every_table_up_to_20_a_side() -> None:
    """Every table by scipy's hypergeometric tails (vectorised), and a seeded sample of
    them by scipy's fisher_exact itself."""
    scipy_stats = _oracle("scipy.stats")
    np = _oracle("numpy")
    tables = _tables(20)
    n1 = np.array([t.base_rollouts for t in tables])
    n2 = np.array([t.cand_rollouts for t in tables])
    c = np.array([t.cand_passed for t in tables])
    total = np.array([t.total_passed for t in tables])
    less = scipy_stats.hypergeom.cdf(c, n1 + n2, total, n2)
    greater = scipy_stats.hypergeom.sf(c - 1, n1 + n2, total, n2)
    ours_less = np.array([decline_p(t) for t in tables])
    ours_greater = np.array([increase_p(t) for t in tables])
    assert float(np.max(np.abs(ours_less - less))) <= TOLERANCE
    assert float(np.max(np.abs(ours_greater - greater))) <= TOLERANCE
    for table in random.Random(20).sample(tables, 600):
        assert decline_p(table) == pytest.approx(_fisher(table, "less"), abs=TOLERANCE)
        assert increase_p(table) == pytest.approx(_fisher(table, "greater"), abs=TOLERANCE)


def test_fisher_agrees_with_scipy_on_tables_up_to_60_a_side() -> None:
    rng = random.Random(22)
    for _ in range(1000):
        n1, n2 = rng.randint(1, 60), rng.randint(1, 60)
        table = Table(rng.randint(0, n1), n1, rng.randint(0, n2), n2)
        assert decline_p(table) == pytest.approx(_fisher(table, "less"), abs=TOLERANCE)
        assert increase_p(table) == pytest.approx(_fisher(table, "greater"), abs=TOLERANCE)
    # the corners of the largest tables, where tails are smallest
    for a, c in itertools.product((0, 1, 59, 60), repeat=2):
        table = Table(a, 60, c, 60)
        assert decline_p(table) == pytest.approx(_fisher(table, "less"), abs=TOLERANCE)
        assert increase_p(table) == pytest.approx(_fisher(table, "greater"), abs=TOLERANCE)


def test_the_issue_example_4_of_4_to_0_of_4_is_1_in_70() -> None:
    assert decline_p(Table(4, 4, 0, 4)) == pytest.approx(1 / 70, abs=1e-15)
    assert increase_p(Table(4, 4, 0, 4)) == 1.0


def test_hypergeometric_pmf_is_the_exact_ratio() -> None:
    for population, successes, draws in [(10, 4, 5), (60, 30, 20), (7, 0, 3), (7, 7, 3)]:
        total = math.fsum(
            hypergeometric_pmf(k, population=population, successes=successes, draws=draws)
            for k in range(-1, draws + 2)
        )
        assert total == pytest.approx(1.0, abs=1e-15)
    assert hypergeometric_pmf(2, population=10, successes=4, draws=5) == 120 / 252


def _brute_force(tables: list[Table]) -> tuple[Fraction, Fraction]:
    """P(S <= s) and P(S >= s) by enumerating every candidate count of every task."""
    observed = sum(t.cand_passed for t in tables)
    lower = upper = Fraction(0)
    ranges = [range(t.cand_rollouts + 1) for t in tables]
    for counts in itertools.product(*ranges):
        weight = Fraction(1)
        for table, x in zip(tables, counts, strict=True):
            n1, n2, total = table.base_rollouts, table.cand_rollouts, table.total_passed
            ways = math.comb(total, x) * math.comb(n1 + n2 - total, n2 - x) if x <= total else 0
            weight *= Fraction(ways, math.comb(n1 + n2, n2))
        if weight:
            if sum(counts) <= observed:
                lower += weight
            if sum(counts) >= observed:
                upper += weight
    return lower, upper


def test_stratified_test_agrees_with_brute_force_enumeration() -> None:
    rng = random.Random(28)
    for _ in range(400):
        tables = []
        for _ in range(rng.randint(1, 4)):
            n1, n2 = rng.randint(1, 6), rng.randint(1, 6)
            tables.append(Table(rng.randint(0, n1), n1, rng.randint(0, n2), n2))
        lower, upper = _brute_force(tables)
        assert abs(stratified_decline_p(tables) - float(lower)) <= TOLERANCE, tables
        assert abs(stratified_increase_p(tables) - float(upper)) <= TOLERANCE, tables


def test_stratified_test_of_one_task_is_fishers() -> None:
    for table in _tables(8):
        assert stratified_decline_p([table]) == pytest.approx(decline_p(table), abs=TOLERANCE)
        assert stratified_increase_p([table]) == pytest.approx(increase_p(table), abs=TOLERANCE)


def test_stratified_test_where_nothing_can_move_is_one() -> None:
    """Every task at 0/M or M/M on both sides: the sum is fixed, p = 1 both ways."""
    tables = [Table(0, 4, 0, 4), Table(8, 8, 4, 4), Table(0, 5, 0, 3)]
    assert stratified_decline_p(tables) == 1.0
    assert stratified_increase_p(tables) == 1.0
    assert stratified_decline_p([]) == 1.0


def test_stratified_test_is_exact_against_scipy_with_two_tasks() -> None:
    """Two tasks by scipy's hypergeometric pmfs, convolved in numpy: an independent route."""
    scipy_stats = _oracle("scipy.stats")
    np = _oracle("numpy")
    rng = random.Random(5)
    for _ in range(200):
        tables = []
        for _ in range(2):
            n1, n2 = rng.randint(1, 12), rng.randint(1, 12)
            tables.append(Table(rng.randint(0, n1), n1, rng.randint(0, n2), n2))
        pmfs = [
            scipy_stats.hypergeom.pmf(
                np.arange(t.cand_rollouts + 1),
                t.base_rollouts + t.cand_rollouts,
                t.total_passed,
                t.cand_rollouts,
            )
            for t in tables
        ]
        joint = np.convolve(pmfs[0], pmfs[1])
        observed = sum(t.cand_passed for t in tables)
        assert stratified_decline_p(tables) == pytest.approx(
            float(joint[: observed + 1].sum()), abs=TOLERANCE
        )


def test_sign_test_agrees_with_brute_force() -> None:
    """P(at least `down` of n fair signs point down), by counting all 2^n sign vectors."""
    for n in range(0, 13):
        for down in range(n + 1):
            hits = sum(1 for signs in itertools.product((0, 1), repeat=n) if sum(signs) >= down)
            assert sign_test_p(down, n - down) == pytest.approx(hits / 2**n, abs=TOLERANCE)
    with pytest.raises(ValueError):
        sign_test_p(-1, 2)


def test_sign_test_agrees_with_scipy_binomtest() -> None:
    scipy_stats = _oracle("scipy.stats")
    for n in range(0, 61):
        for down in range(n + 1):
            expected = (
                1.0 if n == 0 else scipy_stats.binomtest(down, n, 0.5, alternative="greater").pvalue
            )
            assert sign_test_p(down, n - down) == pytest.approx(expected, abs=TOLERANCE)


def test_wilson_agrees_with_statsmodels() -> None:
    proportion = _oracle("statsmodels.stats.proportion")
    for n in range(1, 101):
        for x in range(n + 1):
            low, high = proportion.proportion_confint(x, n, alpha=0.05, method="wilson")
            interval = wilson(x, n)
            assert interval.low == pytest.approx(low, abs=TOLERANCE)
            assert interval.high == pytest.approx(high, abs=TOLERANCE)
    assert wilson(0, 0).low == 0.0 and wilson(0, 0).high == 1.0


def _holm_by_closed_testing(p_values: list[float]) -> list[float]:
    """Holm's adjusted p as the closed test of Bonferroni tests defines it: the largest,
    over every subset S holding i, of min(1, |S| x the smallest p in S)."""
    m = len(p_values)
    adjusted = []
    for i in range(m):
        others = [j for j in range(m) if j != i]
        worst = 0.0
        for size in range(m):
            for chosen in itertools.combinations(others, size):
                subset = [i, *chosen]
                worst = max(worst, min(1.0, len(subset) * min(p_values[j] for j in subset)))
        adjusted.append(worst)
    return adjusted


def test_holm_agrees_with_the_closed_test_it_shortcuts() -> None:
    rng = random.Random(4)
    for size in range(1, 9):
        for _ in range(20):
            values = [rng.random() ** 3 for _ in range(size)]
            values[rng.randrange(size)] = values[0]  # ties
            expected = _holm_by_closed_testing(values)
            assert holm_adjust(values) == pytest.approx(expected, abs=TOLERANCE), values
    assert holm_adjust([]) == ()
    assert holm_adjust([0.01, 0.04, 0.03]) == pytest.approx((0.03, 0.06, 0.06))


def test_holm_agrees_with_statsmodels() -> None:
    multitest = _oracle("statsmodels.stats.multitest")
    rng = random.Random(3)
    for size in range(1, 30):
        values = [rng.random() ** 3 for _ in range(size)]
        _, expected, _, _ = multitest.multipletests(values, method="holm")
        assert holm_adjust(values) == pytest.approx(list(expected), abs=TOLERANCE)


def test_pass_hat_k_is_unbiased_and_never_rate_to_the_k() -> None:
    """E[C(c,k)/C(n,k)] over c ~ Bin(n, p) is p**k exactly; (c/n)**k is biased."""
    n, p = 8, 0.7
    for k in range(1, n + 1):
        mean = math.fsum(
            math.comb(n, c) * p**c * (1 - p) ** (n - c) * pass_hat_k(c, n, k) for c in range(n + 1)
        )
        assert mean == pytest.approx(p**k, abs=1e-12)
    assert pass_hat_k(3, 4, 3) == 0.25  # (3/4)**3 would be 0.42
    with pytest.raises(ValueError):
        pass_hat_k(3, 4, 5)


def test_suite_pass_hat_k_is_the_mean_over_tasks_with_enough_rollouts() -> None:
    counts = [(4, 4), (2, 4), (0, 4), (1, 2)]
    point = suite_pass_hat_k(counts, 3)
    assert point.tasks == 3 and point.rollouts == 12
    assert point.value == pytest.approx((1 + 0 + 0) / 3)
    curve = suite_curve(counts, up_to=4)
    assert [p.k for p in curve] == [1, 2, 3, 4]
    assert curve[0].value == pytest.approx((1 + 0.5 + 0 + 0.5) / 4)
    assert suite_pass_hat_k([], 1).value is None
