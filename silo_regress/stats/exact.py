"""Exact conditional tests on pass counts: Fisher's, the stratified (exact CMH) one, the sign test.

Every p-value is one-sided. For one task, baseline ``a`` of ``n1`` and candidate ``c``
of ``n2`` passes: given the ``t = a + c`` passes of both sides, the candidate's passes
are hypergeometric under "no change", whatever the task's pass rate, so the test is
exact with no rate to estimate. Single-table tails are sums of integers divided once
(``int / int`` is correctly rounded), so they are exact to the last bit of the double.

The stratified test sums the candidate's passes over tasks; given each task's total,
the sum's null distribution is the convolution of the per-task hypergeometrics (the
exact form of the Cochran-Mantel-Haenszel test). A task at 0 or all passes on both
sides has a one-point distribution and moves nothing.

Time is bounded at any count a tally may hold (100,000 rollouts a side,
:data:`~silo_regress.stats.tally.MAX_ROLLOUTS`), where integer sums of binomial
coefficients take minutes. Where exactness stops, and what replaces it:

- A table of at most :data:`EXACT_UP_TO` rollouts (both sides) is summed in integers,
  as above: exact to the last bit.
- A larger table's probabilities come from the ratio of consecutive hypergeometric
  terms, walked out from the mode in floating point and normalized by their own sum;
  the walk stops where a term falls below 2**-80 of the mode's (log-concavity bounds
  what is left by a geometric series). A tail is then right to a relative 1e-10 or
  better, and to 1e-20 in absolute terms; a tail beyond the walk (below about 1e-24)
  is one ``lgamma`` term times its short sum, right to a relative 1e-8.
- The stratified test's sum is convolved exactly as long as the convolution's
  estimated work is within :data:`CONVOLUTION_BUDGET` (see below); beyond, its
  p-value is the normal approximation with continuity correction (the classic
  Cochran-Mantel-Haenszel statistic), which is not exact.

The stratified convolution is polynomial multiplication by Kronecker substitution on
Python integers (CPython multiplies them in C: Karatsuba, or the decimal module's
number-theoretic transform for the longest). Each task's probabilities are scaled by
``2**bits`` and rounded *up* (up to :data:`EXACT_UP_TO` rollouts as
``ceil(ways * 2**bits / all ways)`` in integers; beyond, from the walked floats), a
distribution packed as one integer with a slot per value wide enough for any
coefficient of a product, the product unpacked, scaled back and rounded *up* again,
and cut after the threshold (all variables are non-negative, so mass past it never
returns). Tasks that share a distribution (a suite's tallies hold few shapes) are
powered by squaring; the partial products are merged shortest first, and the last one
is only summed, exactly (or, near "no change", where the fixed check asks for both
tails, multiplied out uncut once and both tails summed from it). Every rounding goes up, so:

- the stratified p is **never below the exact p** (of the tables up to
  :data:`EXACT_UP_TO` rollouts; of the walked distributions beyond): the test can only
  be more conservative;
- it is above it by at most ``2**-51`` (4.4e-16) plus one unit in the last place of
  the double: ``bits`` is chosen per call from a count of the roundings (each at most
  ``2**-bits``, counted as often as the product holds it), so this bound holds at any
  size (tests/unit/test_stats_exact_convolution.py checks it against the exact
  rational tail, brute-force enumeration and the float list convolution
  :func:`_lower_tail`, kept as the reference).

The budget is in units of the packed operands' bits, weighted by Karatsuba's growth
and summed over the multiplications (:func:`_plan`); 2e7 is about 0.1 s. Inside it:
1,000 tasks with tallies of 8 and up to 100 candidate rollouts a task (1.1e7 to
1.3e7 at M = 50), 440 tasks of 50 rollouts a side, 110 of 200, 49 of 500, 22 of 10,000,
8 of 100,000. The normal approximation takes over past that (suites of thousands of
rollouts a task, where the sum is close to normal); with the selection on the
baseline having passed it uses each task's selected (cut) distribution's mean and
variance.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

# Rollouts of both sides up to which a table's tails are sums of integers (exact).
EXACT_UP_TO = 1_000
# The stratified test's convolution work (:func:`_plan`'s units: bits of packed
# operands, weighted) up to which it is exact, about 0.1 s in CPython; past it the
# stratified p is the normal approximation.
CONVOLUTION_BUDGET = 20_000_000
_CUT = 2.0**-80  # a term this far below the mode's ends the walk out from the mode


@dataclass(frozen=True)
class Table:
    """One task's 2x2 table: passes of rollouts on each side."""

    base_passed: int
    base_rollouts: int
    cand_passed: int
    cand_rollouts: int

    def __post_init__(self) -> None:
        if not (0 <= self.base_passed <= self.base_rollouts) or not (
            0 <= self.cand_passed <= self.cand_rollouts
        ):
            raise ValueError(f"counts out of range: {self}")

    @property
    def total_passed(self) -> int:
        return self.base_passed + self.cand_passed

    @property
    def informative(self) -> bool:
        """False when the candidate's passes are fixed by the totals (nothing can move)."""
        low, high = _support(self.base_rollouts, self.cand_rollouts, self.total_passed)
        return low < high


def _support(base_rollouts: int, cand_rollouts: int, total: int) -> tuple[int, int]:
    return max(0, total - base_rollouts), min(total, cand_rollouts)


def hypergeometric_pmf(k: int, *, population: int, successes: int, draws: int) -> float:
    """P(X = k) for X the successes among ``draws`` taken from ``population`` holding
    ``successes``: an exact ratio of integers, rounded once."""
    if k < 0 or k > draws or k > successes or draws - k > population - successes:
        return 0.0
    ways = math.comb(successes, k) * math.comb(population - successes, draws - k)
    return ways / math.comb(population, draws)


def _tail_ways(table: Table, *, upper: bool) -> float:
    n1, n2, t = table.base_rollouts, table.cand_rollouts, table.total_passed
    if n1 + n2 > EXACT_UP_TO:
        if upper:  # the candidate's fails: hypergeometric too, with the fails' total
            return _large_lower_tail(n1 + n2, n1 + n2 - t, n2, n2 - table.cand_passed)
        return _large_lower_tail(n1 + n2, t, n2, table.cand_passed)
    low, high = _support(n1, n2, t)
    xs = range(table.cand_passed, high + 1) if upper else range(low, table.cand_passed + 1)
    ways = sum(math.comb(t, x) * math.comb(n1 + n2 - t, n2 - x) for x in xs)
    return min(1.0, ways / math.comb(n1 + n2, n2))


@lru_cache(maxsize=65536)
def decline_p(table: Table) -> float:
    """One-sided Fisher exact p that the candidate passes less often than the baseline:
    P(C <= c). scipy: ``fisher_exact([[c, n2 - c], [a, n1 - a]], alternative="less")``."""
    return _tail_ways(table, upper=False)


@lru_cache(maxsize=65536)
def increase_p(table: Table) -> float:
    """One-sided Fisher exact p that the candidate passes more often: P(C >= c)."""
    return _tail_ways(table, upper=True)


def _ratio(population: int, successes: int, draws: int, j: int) -> float:
    """P(X = j + 1) / P(X = j) of the hypergeometric X."""
    return ((successes - j) * (draws - j)) / ((j + 1) * (population - successes - draws + j + 1))


@lru_cache(maxsize=1024)
def _window(population: int, successes: int, draws: int) -> tuple[int, tuple[float, ...], float]:
    """(first value, weights relative to the mode's, their sum) of the hypergeometric's
    values that matter: walked out from the mode until a weight falls below ``_CUT``."""
    low = max(0, draws - (population - successes))
    high = min(successes, draws)
    mode = min(high, max(low, (draws + 1) * (successes + 1) // (population + 2)))
    up = [1.0]
    weight, j = 1.0, mode
    while j < high:
        weight *= _ratio(population, successes, draws, j)
        if weight < _CUT:
            break
        up.append(weight)
        j += 1
    down: list[float] = []
    weight, j = 1.0, mode
    while j > low:
        weight /= _ratio(population, successes, draws, j - 1)
        if weight < _CUT:
            break
        down.append(weight)
        j -= 1
    weights = tuple(down[::-1] + up)
    return mode - len(down), weights, math.fsum(weights)


def _log_pmf(population: int, successes: int, draws: int, j: int) -> float:
    def log_comb(n: int, k: int) -> float:
        return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)

    return (
        log_comb(successes, j)
        + log_comb(population - successes, draws - j)
        - log_comb(population, draws)
    )


def _large_lower_tail(population: int, successes: int, draws: int, x: int) -> float:
    """P(X <= x) of the hypergeometric X, in time that does not grow with the counts."""
    low = max(0, draws - (population - successes))
    if x < low:
        return 0.0
    if x >= min(successes, draws):
        return 1.0
    first, weights, total = _window(population, successes, draws)
    if x >= first:
        near = math.fsum(weights[: x - first + 1])
        # The terms below the window still count next to a tail that is itself tiny.
        below = _walk_down(population, successes, draws, first, weights[0], low=low)
        return min(1.0, (near + below - weights[0]) / total)
    # Far below every term that matters: the term at x, times its own tail walked down
    # (the ratios only shrink below the mode, so the walk is short).
    tail = _walk_down(population, successes, draws, x, 1.0, low=low)
    return min(1.0, math.exp(_log_pmf(population, successes, draws, x)) * tail)


def _walk_down(
    population: int, successes: int, draws: int, j: int, weight: float, *, low: int
) -> float:
    """weight(j) + weight(j - 1) + ... down to ``low``, each from the one above by the
    ratio, until a term is below 2**-60 of the sum (below the mode the ratios only
    fall, so the rest is less than a geometric series of that term)."""
    terms = [weight]
    while j > low:
        weight /= _ratio(population, successes, draws, j - 1)
        terms.append(weight)
        if weight < 2.0**-60 * terms[0]:
            break
        j -= 1
    return math.fsum(terms)


def smallest_p_at(base_passed: int, base_rollouts: int, cand_rollouts: int) -> float:
    """The decline p of the strongest evidence ``cand_rollouts`` rollouts can give: 0 passes."""
    return decline_p(Table(base_passed, base_rollouts, 0, cand_rollouts))


@lru_cache(maxsize=16384)
def _distribution(
    base_rollouts: int, cand_rollouts: int, total: int
) -> tuple[int, tuple[float, ...]]:
    """The null distribution of the candidate's passes: (lowest value, probabilities)."""
    low, high = _support(base_rollouts, cand_rollouts, total)
    population = base_rollouts + cand_rollouts
    if population > EXACT_UP_TO:
        first, weights, mass = _window(population, total, cand_rollouts)
        return first, tuple(w / mass for w in weights)
    return low, tuple(
        hypergeometric_pmf(x, population=population, successes=total, draws=cand_rollouts)
        for x in range(low, high + 1)
    )


def _lower_tail(dists: Sequence[tuple[float, ...]], threshold: int) -> float:
    """P(sum of independent variables on 0.. <= threshold), each given by its pmf: the
    float list convolution the stratified test used before the Kronecker one, kept as
    the tests' reference (10 times slower at 1,000 tasks).

    The convolution is cut at ``threshold``: mass beyond it can never come back down,
    as every variable is non-negative. All terms are positive, so small tails keep
    their relative precision (no 1 - x cancellation).
    """
    if threshold < 0:
        return 0.0
    acc = [1.0]
    for dist in sorted(dists, key=len):
        size = min(len(acc) + len(dist) - 1, threshold + 1)
        new = [0.0] * size
        for j, weight in enumerate(dist):
            if j >= size or weight == 0.0:
                continue
            span = min(len(acc), size - j)
            new[j : j + span] = [
                old + weight * mass for old, mass in zip(new[j : j + span], acc, strict=False)
            ]
        acc = new
    return min(1.0, math.fsum(acc))


def reference_tail(tables: Sequence[Table], *, selected: bool, upper: bool) -> float:
    """The stratified tail by the float list convolution the Kronecker one replaced:
    what tests and bench/decision_time.py compare against (no budget: slow at scale)."""
    dists, threshold = _reference_dists(tables, selected=selected, upper=upper)
    return _lower_tail(dists, threshold)


def _reference_dists(
    tables: Sequence[Table], *, selected: bool, upper: bool
) -> tuple[list[tuple[float, ...]], int]:
    pick = _selected_distribution if selected else _distribution
    dists, threshold = [], 0
    for t in tables:
        low, dist = pick(t.base_rollouts, t.cand_rollouts, t.total_passed)
        if upper:  # the upper tail is the lower one of high - C
            threshold += low + len(dist) - 1 - t.cand_passed
            dist = dist[::-1]
        else:
            threshold += t.cand_passed - low
        if len(dist) > 1:
            dists.append(dist)
    return dists, threshold


@lru_cache(maxsize=16384)
def _selected_distribution(
    base_rollouts: int, cand_rollouts: int, total: int
) -> tuple[int, tuple[float, ...]]:
    """The null distribution of the candidate's passes given its total *and* that the
    baseline passed at least once (C <= total - 1): the hypergeometric cut there and
    renormalized. A check that runs only the tasks whose baseline passed selects on it,
    and the uncut distribution would then overstate the candidate's passes."""
    low, dist = _distribution(base_rollouts, cand_rollouts, total)
    high = low + len(dist) - 1
    if total - 1 < low:
        raise ValueError(f"a baseline with passes cannot have a total of {total}")
    if high <= total - 1:
        return low, dist
    kept = dist[: total - low]
    mass = math.fsum(kept)
    return low, tuple(p / mass for p in kept)


def decline_p_given_baseline_passed(table: Table) -> float:
    """:func:`decline_p` for a task chosen because its baseline passed at least once:
    P(C <= c | C <= t - 1), which is never below the plain p."""
    if table.base_passed == 0:
        raise ValueError("the baseline never passed")
    low, dist = _selected_distribution(table.base_rollouts, table.cand_rollouts, table.total_passed)
    return min(1.0, math.fsum(dist[: table.cand_passed - low + 1]))


def stratified_decline_p(tables: Sequence[Table], *, given_baseline_passed: bool = False) -> float:
    """One-sided p of the exact stratified test that the candidate passes less often
    across tasks: P(sum C_i <= sum c_i), each task conditioned on its own total (and,
    with ``given_baseline_passed``, on its baseline having passed at least once).

    Never below the exact p (see the module's docstring for the bound and where the
    normal approximation takes over)."""
    return _stratified_tail(tables, selected=given_baseline_passed, upper=False)


def stratified_increase_p(tables: Sequence[Table]) -> float:
    """One-sided p of the exact stratified test that the candidate passes more often:
    P(sum C_i >= sum c_i)."""
    return _stratified_tail(tables, selected=False, upper=True)


def _span(n1: int, n2: int, total: int, *, selected: bool) -> tuple[int, int]:
    """(lowest, highest) value of the candidate's passes the task's distribution holds."""
    if n1 + n2 > EXACT_UP_TO:
        pick = _selected_distribution if selected else _distribution
        low, dist = pick(n1, n2, total)
        return low, low + len(dist) - 1
    low, high = _support(n1, n2, total)
    if selected:
        if total - 1 < low:
            raise ValueError(f"a baseline with passes cannot have a total of {total}")
        high = min(high, total - 1)
    return low, high


# The last suite whose both tails came from one product: (its key, lower, upper). A
# fixed check asks for the decline and then, when the suite did not decline, for the
# increase of the same tables; near "no change" one uncut product gives both.
_both_tails: list[tuple[object, float, float]] = []


def _stratified_tail(tables: Sequence[Table], *, selected: bool, upper: bool) -> float:
    counts: dict[tuple[int, int, int], int] = {}
    observed = 0
    for table in tables:
        key = (table.base_rollouts, table.cand_rollouts, table.base_passed + table.cand_passed)
        counts[key] = counts.get(key, 0) + 1
        observed += table.cand_passed
    # what decides the tails, and the settings tests change
    suite = (selected, observed, tuple(sorted(counts.items())), EXACT_UP_TO, CONVOLUTION_BUDGET)
    for known, lower_p, upper_p in _both_tails:
        if known == suite:
            return upper_p if upper else lower_p
    spans = {key: _span(*key, selected=selected) for key in counts}
    floor = sum(count * spans[key][0] for key, count in counts.items())
    ceiling = sum(count * spans[key][1] for key, count in counts.items())
    moving = {key: count for key, count in counts.items() if spans[key][1] > spans[key][0]}
    # the upper tail is the lower one of high - C
    threshold = ceiling - observed if upper else observed - floor
    if threshold < 0:
        return 0.0
    if not moving:
        return 1.0
    if not selected and _at_or_above_mean(counts, observed):
        both = _both_tails_of(moving, spans, observed - floor, ceiling - floor)
        if both is not None:
            _both_tails[:] = [(suite, *both)]
            return both[1] if upper else both[0]
    cut = threshold + 1
    shape = [(min(spans[key][1] - spans[key][0] + 1, cut), n) for key, n in moving.items()]
    plan = _plan(shape, cut)
    # The scale that keeps the rounding error of the tail below 2**-51 (each unit
    # is 2**-bits, each held at most as often as the plan counts it).
    bits = 51 + plan.roundings.bit_length()
    if plan.work * (2 * bits + 8) > CONVOLUTION_BUDGET:
        return _normal_tail(tables, upper=upper, selected=selected)
    groups = [
        (_scaled_terms(*key, selected=selected, upper=upper, bits=bits)[1], count)
        for key, count in moving.items()
    ]
    heap = _merged(groups, cut=cut, bits=bits)
    if len(heap) == 1:
        numerator = sum(heap[0][:cut])
    else:
        numerator = _product_sum(heap[0], heap[1], cut=cut, bits=bits)
    return min(1.0, _round_up(numerator, bits))


def _at_or_above_mean(counts: dict[tuple[int, int, int], int], observed: int) -> bool:
    """Whether the candidate's passes are at least their null mean (a suite that
    cannot have declined by the stratified test, whose increase is asked next)."""
    mean = sum(count * n2 * t / (n1 + n2) for (n1, n2, t), count in counts.items())
    return observed >= mean


def _both_tails_of(
    moving: dict[tuple[int, int, int], int],
    spans: dict[tuple[int, int, int], tuple[int, int]],
    threshold: int,
    whole: int,
) -> tuple[float, float] | None:
    """Both tails, P(S <= threshold) and P(S >= threshold), from one uncut product
    (values 0..whole); None when that is past the budget."""
    cut = whole + 1
    shape = [(spans[key][1] - spans[key][0] + 1, count) for key, count in moving.items()]
    plan = _plan(shape, cut, summed_last=False)
    bits = 51 + plan.roundings.bit_length()
    if plan.work * (2 * bits + 8) > CONVOLUTION_BUDGET:
        return None
    groups = [
        (_scaled_terms(*key, selected=False, upper=False, bits=bits)[1], count)
        for key, count in moving.items()
    ]
    heap = _merged(groups, cut=cut, bits=bits)
    full = heap[0] if len(heap) == 1 else _product(heap[0], heap[1], cut=cut, bits=bits)
    lower = _round_up(sum(full[: threshold + 1]), bits)
    upper = _round_up(sum(full[threshold:]), bits)
    return min(1.0, lower), min(1.0, upper)


@dataclass(frozen=True)
class _Plan:
    """What :func:`_merged` and the last product will do, from the lengths alone: the units of
    the last place it rounds up (each counted as often as the final product holds the
    rounded term), and its work in bits of packed operands."""

    roundings: int
    work: int


def _weight(slots: int) -> int:
    """The time of one multiplication of operands of ``slots`` slots in all, in units
    of one slot's packing: Karatsuba's n ** 1.58 grows the cost a slot up to about 4
    times at 2,000 slots, where the decimal module's transform takes over and keeps
    it flat (measured in CPython 3.11: 10 to 40 ns a bit)."""
    return slots * min(4_000, 1_000 + slots) // 1_000


def _plan(shape: Sequence[tuple[int, int]], cut: int, *, summed_last: bool = True) -> _Plan:
    """Follows :func:`_merged` and the last product on (length, tasks) per group.

    A group of k tasks rounds its terms once, held k times in the product; the j-th
    squaring's coefficients are held ``k >> j`` times; every other multiplication's
    once. The last one, when only summed (:func:`_product_sum`), is exact."""
    roundings = work = 0
    lengths: list[int] = []
    for length, count in shape:
        roundings += count * length
        base, result, left, held = length, 0, count, count
        while True:
            if left & 1:
                if result:
                    work += _weight(result + base)
                    result = min(result + base - 1, cut)
                    roundings += result
                else:
                    result = base
            left >>= 1
            held >>= 1
            if not left:
                break
            work += _weight(2 * base)
            base = min(2 * base - 1, cut)
            roundings += held * base
        lengths.append(result)
    heapq.heapify(lengths)
    while len(lengths) > 2:
        first, second = heapq.heappop(lengths), heapq.heappop(lengths)
        work += _weight(first + second)
        merged = min(first + second - 1, cut)
        roundings += merged
        heapq.heappush(lengths, merged)
    if summed_last:
        roundings += 1  # the last product's sum, rounded once
    elif len(lengths) == 2:
        work += _weight(lengths[0] + lengths[1])
        roundings += min(lengths[0] + lengths[1] - 1, cut)
    return _Plan(roundings=roundings, work=work)


# ---------------------------------------------------------------- the stratified sum
# Karatsuba on Python integers multiplies below this many bits faster than the decimal
# module's number-theoretic transform (with the conversions); above it the transform wins.
_DECIMAL_FROM_BITS = 400_000


@lru_cache(maxsize=4096)
def _scaled_terms(
    base_rollouts: int, cand_rollouts: int, total: int, *, selected: bool, upper: bool, bits: int
) -> tuple[int, tuple[int, ...]]:
    """The task's null distribution times ``2**bits``, each term rounded *up*: (the lowest
    value, the terms). With ``upper``, the distribution of ``high - C`` (the upper tail is
    the lower one of that), and the value returned is ``high``.

    Up to :data:`EXACT_UP_TO` rollouts each term is ``ceil(ways * 2**bits / all ways)``
    in integers, so it is never below the exact probability; beyond, the walked
    probabilities (floats) are scaled exactly and rounded up."""
    population = base_rollouts + cand_rollouts
    if population > EXACT_UP_TO:
        pick = _selected_distribution if selected else _distribution
        low, dist = pick(base_rollouts, cand_rollouts, total)
        terms = [math.ceil(math.ldexp(p, bits)) for p in dist]
    else:
        low, high = _support(base_rollouts, cand_rollouts, total)
        if selected:
            if total - 1 < low:
                raise ValueError(f"a baseline with passes cannot have a total of {total}")
            high = min(high, total - 1)
        ways = [
            math.comb(total, x) * math.comb(population - total, cand_rollouts - x)
            for x in range(low, high + 1)
        ]
        whole = sum(ways)
        terms = [-((-w << bits) // whole) for w in ways]
    if upper:
        return low + len(terms) - 1, tuple(terms[::-1])
    return low, tuple(terms)


def _slot_bytes(bound: int) -> int:
    """Bytes of a slot that holds any value up to ``bound``."""
    return (bound.bit_length() + 7) // 8


def _pack(terms: Sequence[int], width: int) -> int:
    return int.from_bytes(b"".join([x.to_bytes(width, "little") for x in terms]), "little")


def _product(a: Sequence[int], b: Sequence[int], *, cut: int, bits: int) -> list[int]:
    """The first ``cut`` coefficients of ``a * b`` (both scaled by ``2**bits``), scaled
    back by ``2**bits`` and rounded up: Kronecker substitution, each sequence packed as
    one integer with a slot wide enough for any coefficient, so that CPython's C
    multiplication does the convolution."""
    size = min(len(a) + len(b) - 1, cut)
    # A coefficient sum_i a_i b_(k-i) is at most max(a) sum(b), and at most max(b) sum(a).
    width = _slot_bytes(min(max(a) * sum(b), max(b) * sum(a)))
    up = (1 << bits) - 1
    if 8 * width * (len(a) + len(b)) >= _DECIMAL_FROM_BITS:
        return [(v + up) >> bits for v in _decimal_product(a, b, size=size, width=width)]
    packed = _pack(a, width)
    product = packed * packed if a is b else packed * _pack(b, width)
    raw = product.to_bytes((len(a) + len(b)) * width, "little")
    read = int.from_bytes
    return [
        (read(raw[i : i + width], "little") + up) >> bits for i in range(0, size * width, width)
    ]


def _decimal_product(a: Sequence[int], b: Sequence[int], *, size: int, width: int) -> list[int]:
    """The first ``size`` coefficients of ``a * b`` through the decimal module, whose
    multiplication of long numbers is a number-theoretic transform (n log n, where
    CPython's own integers are Karatsuba, n ** 1.58): ten times faster at 6e6 bits."""
    import decimal  # only for the largest suites; a plain check never gets here

    digits = len(str((1 << (8 * width)) - 1))
    context = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)

    def pack(terms: Sequence[int]) -> decimal.Decimal:
        return decimal.Decimal("".join([f"{x:0{digits}d}" for x in reversed(terms)]))

    packed = pack(a)
    text = str(context.multiply(packed, packed if a is b else pack(b)))
    text = text.zfill((len(a) + len(b)) * digits)
    end = len(text)
    return [int(text[end - (i + 1) * digits : end - i * digits]) for i in range(size)]


def _power(terms: tuple[int, ...], count: int, *, cut: int, bits: int) -> list[int]:
    """``terms`` convolved with itself ``count`` times, by squaring, cut to ``cut``
    coefficients (many tasks share one distribution: a suite's tallies hold few shapes)."""
    result: list[int] | None = None
    base: list[int] = list(terms[:cut])
    while True:
        if count & 1:
            result = base if result is None else _product(result, base, cut=cut, bits=bits)
        count >>= 1
        if not count:
            break
        base = _product(base, base, cut=cut, bits=bits)
    assert result is not None  # count >= 1
    return result


def _merged(
    groups: Sequence[tuple[tuple[int, ...], int]], *, cut: int, bits: int
) -> list[list[int]]:
    """The product of independent variables on 0.., given as (terms scaled by
    ``2**bits`` and rounded up, how many tasks share them), left as its last one or
    two factors (the caller multiplies or only sums them), each cut to ``cut``
    coefficients and every coefficient rounded up: never below the exact product of
    the scaled terms, above it by at most the units :func:`_plan` counts.

    Every coefficient from ``cut`` on is dropped as soon as it appears: all variables
    are non-negative, so that mass never comes back below the threshold. The partial
    products are combined shortest first (a Huffman order), which keeps the long
    multiplications few."""
    heap = [
        (len(power), order, power)
        for order, (terms, count) in enumerate(groups)
        for power in [_power(terms, count, cut=cut, bits=bits)]
    ]
    if not heap:
        return [[1 << bits]]
    heapq.heapify(heap)
    order = len(heap)
    while len(heap) > 2:
        _, _, first = heapq.heappop(heap)
        _, _, second = heapq.heappop(heap)
        merged = _product(first, second, cut=cut, bits=bits)
        order += 1
        heapq.heappush(heap, (len(merged), order, merged))
    return [item for _, _, item in heap]


def _product_sum(a: Sequence[int], b: Sequence[int], *, cut: int, bits: int) -> int:
    """The sum of the first ``cut`` coefficients of ``a * b``, scaled back by ``2**bits``
    and rounded up: ``sum_i a_i (b_0 + ... + b_(cut-1-i))``, a dot product with the
    running sums of ``b``, in exact integers (one pass, no multiplication of long
    numbers)."""
    running = list(itertools.accumulate(b[:cut]))
    last = running[-1]
    # a_i meets the running sum up to cut - 1 - i, which is b's whole sum once past it.
    reach = [
        running[cut - 1 - i] if cut - 1 - i < len(running) else last
        for i in range(min(len(a), cut))
    ]
    exact_sum = sum(x * y for x, y in zip(a, reach, strict=False))
    return -((-exact_sum) >> bits)


def _round_up(numerator: int, bits: int) -> float:
    """numerator / 2**bits as the smallest double not below it."""
    value = numerator / (1 << bits)  # correctly rounded: at most one step below
    num, den = value.as_integer_ratio()
    if num << bits < numerator * den:
        value = math.nextafter(value, math.inf)
    return value


def _normal_tail(tables: Sequence[Table], *, upper: bool, selected: bool = False) -> float:
    """The stratified tail by the normal approximation with continuity correction (the
    Cochran-Mantel-Haenszel statistic), for suites too large to convolve. With
    ``selected``, each task's mean and variance are those of its distribution given
    that the baseline passed at least once (the cut hypergeometric's, from its pmf):
    the uncut ones overstate the candidate's passes, and the test with them is
    anti-conservative."""
    observed = mean = variance = 0.0
    for t in tables:
        population = t.base_rollouts + t.cand_rollouts
        total = t.total_passed
        observed += t.cand_passed
        if selected:
            task_mean, task_variance = _selected_moments(t.base_rollouts, t.cand_rollouts, total)
            mean += task_mean
            variance += task_variance
            continue
        mean += t.cand_rollouts * total / population
        if population > 1:
            variance += (t.base_rollouts * t.cand_rollouts * total * (population - total)) / (
                population * population * (population - 1)
            )
    if variance == 0.0:
        return 1.0
    shift = (mean - observed) if upper else (observed - mean)
    z = (shift + 0.5) / math.sqrt(variance)
    return min(1.0, 0.5 * math.erfc(-z / math.sqrt(2)))


@lru_cache(maxsize=16384)
def _selected_moments(base_rollouts: int, cand_rollouts: int, total: int) -> tuple[float, float]:
    """Mean and variance of the candidate's passes given its total and that the
    baseline passed at least once, from that distribution's probabilities."""
    low, dist = _selected_distribution(base_rollouts, cand_rollouts, total)
    mean = low + math.fsum(i * p for i, p in enumerate(dist))
    variance = math.fsum((low + i - mean) ** 2 * p for i, p in enumerate(dist))
    return mean, variance


def sign_test_p(down: int, up: int) -> float:
    """Exact one-sided sign test that tasks move down more than up: P(Bin(down + up, 1/2) >= down).

    Ties (tasks that did not move) carry no sign and are left out, as usual."""
    if down < 0 or up < 0:
        raise ValueError("negative counts")
    n = down + up
    if n == 0:
        return 1.0
    ways = sum(math.comb(n, k) for k in range(down, n + 1))
    return min(1.0, ways / (1 << n))
