"""The stats gate's math at the documented bound (MAX_ROLLOUTS a side): milliseconds, and
as exact as docs/statistics.md says, against integer arithmetic (no scipy needed)."""

from __future__ import annotations

import json
import math
import random
import time

import pytest

from silo_regress.stats import exact
from silo_regress.stats.exact import (
    Table,
    decline_p,
    increase_p,
    stratified_decline_p,
    stratified_increase_p,
)
from silo_regress.stats.passk import EXACT_UP_TO, MAX_CURVE_K, pass_hat_k, suite_curve
from silo_regress.stats.tally import MAX_ROLLOUTS, MAX_TALLY_BYTES, TallyError, parse_tally


def _tail(table: Table, *, upper: bool) -> float:
    """The one-sided Fisher tail as a ratio of integers, rounded once (the definition)."""
    n1, n2, t = table.base_rollouts, table.cand_rollouts, table.total_passed
    low, high = max(0, t - n1), min(t, n2)
    xs = range(table.cand_passed, high + 1) if upper else range(low, table.cand_passed + 1)
    ways = sum(math.comb(t, x) * math.comb(n1 + n2 - t, n2 - x) for x in xs)
    return min(1.0, ways / math.comb(n1 + n2, n2))


def _close(got: float, want: float, *, rel: float) -> bool:
    return abs(got - want) <= rel * want or abs(got - want) <= 1e-300


def test_fisher_past_the_integer_sums_agrees_with_them_to_1e_10() -> None:
    rng = random.Random(31)
    checked = 0
    while checked < 100:
        n1, n2 = rng.randint(2, 1200), rng.randint(2, 1200)
        if n1 + n2 <= exact.EXACT_UP_TO:
            continue
        a = rng.randint(0, n1)
        # near the baseline's rate, where tails are neither 0 nor 1, and far from it
        c = max(0, min(n2, round(a / n1 * n2) - rng.randint(-40, 400)))
        table = Table(a, n1, c, n2)
        assert _close(decline_p(table), _tail(table, upper=False), rel=1e-10), table
        assert _close(increase_p(table), _tail(table, upper=True), rel=1e-10), table
        checked += 1


def test_the_stratified_test_past_the_integer_sums_agrees_with_them() -> None:
    rng = random.Random(32)
    for _ in range(8):
        tables = []
        for _ in range(rng.randint(1, 3)):
            n1, n2 = rng.randint(500, 700), rng.randint(400, 600)
            a = rng.randint(0, n1)
            c = max(0, min(n2, round(a / n1 * n2) - rng.randint(-20, 60)))
            tables.append(Table(a, n1, c, n2))
        got = stratified_decline_p(tables), stratified_increase_p(tables)
        exact._distribution.cache_clear()
        exact._scaled_terms.cache_clear()  # its terms came from the walk
        saved = exact.EXACT_UP_TO, exact.CONVOLUTION_BUDGET
        exact.EXACT_UP_TO, exact.CONVOLUTION_BUDGET = 10**9, 10**12
        try:
            want = stratified_decline_p(tables), stratified_increase_p(tables)
        finally:
            exact.EXACT_UP_TO, exact.CONVOLUTION_BUDGET = saved
            exact._distribution.cache_clear()
            exact._scaled_terms.cache_clear()
        for g, w in zip(got, want, strict=True):
            assert _close(g, w, rel=1e-9), tables


def test_past_the_budget_the_stratified_p_is_the_normal_approximation_close_to_exact() -> None:
    # two such tasks now convolve within the budget; twelve do not
    tables = [Table(50_000, 100_000, 49_800 + i, 100_000) for i in range(12)]
    approximate = stratified_decline_p(tables)
    saved = exact.CONVOLUTION_BUDGET
    exact.CONVOLUTION_BUDGET = 10**12
    try:
        convolved = stratified_decline_p(tables)
    finally:
        exact.CONVOLUTION_BUDGET = saved
    assert approximate != convolved  # the approximation was taken, as documented
    assert approximate == pytest.approx(convolved, rel=1e-3)


def test_every_p_value_takes_milliseconds_at_the_bound() -> None:
    n = MAX_ROLLOUTS
    tables = [Table(n // 2 - i, n, n // 2 - 900, n) for i in range(20)]
    tables += [Table(n - 1, n, 0, n), Table(n, n, 3, 10), Table(7, n, n - 7, n)]
    started = time.perf_counter()
    for table in tables:
        decline_p.__wrapped__(table)
        increase_p.__wrapped__(table)
    stratified_decline_p(tables)
    stratified_increase_p(tables)
    took = time.perf_counter() - started
    assert took < 1.0, f"{took:.2f} s"  # about 0.1 s; a hang guard on a shared machine
    assert decline_p(Table(n - 1, n, 0, n)) == 0.0  # beyond any double: underflows, no error


def test_pass_hat_k_past_the_integer_ratio_agrees_with_it_and_is_quick() -> None:
    rng = random.Random(33)
    for _ in range(200):
        n = rng.randint(EXACT_UP_TO + 1, 12_000)
        c, k = rng.randint(0, n), rng.randint(1, n)
        want = math.comb(c, k) / math.comb(n, k)
        assert _close(pass_hat_k(c, n, k), want, rel=1e-8), (c, n, k)
    started = time.perf_counter()
    for k in range(1, 200):
        pass_hat_k.__wrapped__(MAX_ROLLOUTS - 1, MAX_ROLLOUTS, k * 500)
        pass_hat_k.__wrapped__(MAX_ROLLOUTS // 2, MAX_ROLLOUTS, k)
    assert time.perf_counter() - started < 1.0


def test_the_suite_curve_stops_at_k_100() -> None:
    curve = suite_curve([(MAX_ROLLOUTS // 2, MAX_ROLLOUTS)], up_to=MAX_ROLLOUTS)
    assert [p.k for p in curve] == list(range(1, MAX_CURVE_K + 1))
    assert curve[0].value == 0.5


BASE = {
    "checks": {},
    "format": 1,
    "passed": 1,
    "reward": {"sum": 1, "sum-of-squares": 1},
    "rollouts": 2,
    "variants": {},
}


def _tally(**changes: object) -> bytes:
    return (json.dumps({**BASE, **changes}, indent=2, sort_keys=True) + "\n").encode()


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (_tally(format=True), "/format must be 1, not true"),
        (_tally(rollouts=MAX_ROLLOUTS + 1), "/rollouts is 100001, more than the 100000"),
        (_tally(rollouts=10**400), "/rollouts is a 401-digit number"),
        (_tally(passed=-1), "/passed must not be negative"),
        (_tally(reward={"sum": 10**400, "sum-of-squares": 1}), "/reward/sum is a 401-digit"),
        (_tally(reward={"sum": 1, "sum-of-squares": 1e300}), "/reward/sum-of-squares is 1e+300"),
        (_tally(reward={"sum": 5, "sum-of-squares": 1}, rollouts=0, passed=0), "/reward/sum is 5"),
        (b" " * (MAX_TALLY_BYTES + 1), f"more than the {MAX_TALLY_BYTES} a tally may be"),
    ],
)
def test_an_out_of_range_tally_is_a_named_error(data: bytes, said: str) -> None:
    with pytest.raises(TallyError, match=r"^t\.json: ") as caught:
        parse_tally(data, source="t.json")
    assert said in str(caught.value)


def test_a_tally_at_the_bound_reads() -> None:
    tally = parse_tally(_tally(rollouts=MAX_ROLLOUTS, passed=MAX_ROLLOUTS), source="t.json")
    assert tally.rollouts == MAX_ROLLOUTS
