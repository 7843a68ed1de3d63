"""The change point of a pass rate over a line of commits: which commit made it worse.

Positions ``0 .. n`` are the commits in first-parent order: 0 is the known-good commit,
``n`` the known-bad one. The culprit ``k`` (1 <= k <= n) is the first commit at the new
rate: positions before ``k`` pass at an unknown rate ``p_good``, positions from ``k`` on
at an unknown rate ``p_bad``. Both rates carry Beta priors and are integrated out
analytically (the Beta-binomial), so the posterior over ``k`` given the pass counts is
exact and costs O(n). The next commit to test is the one whose round of ``r`` rollouts
leaves the least expected entropy in that posterior (the most information), computed for
every commit at once with prefix sums, O(n r) a round.

Nothing here knows of git or Silo: counts in, a posterior and a choice out, on
:mod:`math` alone (a bisect round must not wait for the engine).

Calibration is measured, not assumed (bench/bisection.py): a posterior of 0.95 read off a
model whose rates are not the true ones is not a 95% guarantee, so the stop asks for more
than the stated confidence (:func:`stop_threshold`) and for rollouts on both sides of
the culprit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# The stop asks for a posterior of 1 - (1 - confidence) * SLACK (0.975 for 0.95):
# measured on the calibration grid of bench/bisection.py, where a stop at the stated
# confidence itself was wrong 5.5-6.5% of the time in three cells of drop 0.15 (the
# uniform prior on the rates is not the truth, so the posterior is optimistic near the
# culprit); at 0.975 no cell was above 2%.
SLACK = 0.5


@dataclass(frozen=True)
class BetaPrior:
    """Beta(passes, fails) pseudo-counts on one side's pass rate."""

    passes: float = 1.0
    fails: float = 1.0

    def __post_init__(self) -> None:
        if not (self.passes > 0 and self.fails > 0):
            raise ValueError(f"Beta pseudo-counts must be positive, not {self}")


@dataclass(frozen=True)
class Counts:
    """Passes and rollouts at each position 0 .. n."""

    passed: tuple[int, ...]
    rollouts: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.passed) != len(self.rollouts) or len(self.passed) < 2:
            raise ValueError("need the same number (at least 2) of passes and rollouts")
        for p, r in zip(self.passed, self.rollouts, strict=True):
            if not 0 <= p <= r:
                raise ValueError(f"{p} passes of {r} rollouts")

    @classmethod
    def empty(cls, positions: int) -> Counts:
        return cls((0,) * positions, (0,) * positions)

    @property
    def culprits(self) -> int:
        """n: the number of commits that could be the culprit."""
        return len(self.passed) - 1

    def add(self, position: int, *, passed: int, rollouts: int) -> Counts:
        p, r = list(self.passed), list(self.rollouts)
        p[position] += passed
        r[position] += rollouts
        return Counts(tuple(p), tuple(r))


def _lbeta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _sides(counts: Counts) -> tuple[list[int], list[int], list[int], list[int]]:
    """For each culprit k (index k, k = 1 .. n; index 0 unused): passes and fails before
    k (positions < k) and from k on (positions >= k)."""
    n = counts.culprits
    total_s = sum(counts.passed)
    total_f = sum(counts.rollouts) - total_s
    sb, fb, sa, fa = [0] * (n + 1), [0] * (n + 1), [0] * (n + 1), [0] * (n + 1)
    s = f = 0
    for k in range(1, n + 1):
        s += counts.passed[k - 1]
        f += counts.rollouts[k - 1] - counts.passed[k - 1]
        sb[k], fb[k], sa[k], fa[k] = s, f, total_s - s, total_f - f
    return sb, fb, sa, fa


def _normalise(logs: Sequence[float]) -> list[float]:
    top = max(logs)
    weights = [math.exp(x - top) if x != -math.inf else 0.0 for x in logs]
    total = math.fsum(weights)
    return [w / total for w in weights]


def posterior(
    counts: Counts,
    *,
    good: BetaPrior = BetaPrior(),
    bad: BetaPrior = BetaPrior(),
    prior: Sequence[float] | None = None,
) -> list[float]:
    """P(culprit = k | counts) for k = 0 .. n (entry 0, the good commit, is 0)."""
    n = counts.culprits
    weights = _prior(prior, n)
    sb, fb, sa, fa = _sides(counts)
    logs = [-math.inf]
    for k in range(1, n + 1):
        if weights[k] <= 0:
            logs.append(-math.inf)
            continue
        logs.append(
            math.log(weights[k])
            + _lbeta(good.passes + sb[k], good.fails + fb[k])
            + _lbeta(bad.passes + sa[k], bad.fails + fa[k])
        )
    return _normalise(logs)


def _prior(prior: Sequence[float] | None, n: int) -> list[float]:
    if prior is None:
        return [0.0] + [1.0 / n] * n
    if len(prior) != n + 1 or any(w < 0 for w in prior) or sum(prior[1:]) <= 0:
        raise ValueError(f"a prior needs {n + 1} non-negative weights, not {len(prior)}")
    total = math.fsum(prior[1:])
    return [0.0] + [w / total for w in prior[1:]]


def entropy(weights: Sequence[float]) -> float:
    return -math.fsum(w * math.log(w) for w in weights if w > 0)


def expected_entropies(
    counts: Counts,
    *,
    round_size: int,
    good: BetaPrior = BetaPrior(),
    bad: BetaPrior = BetaPrior(),
    prior: Sequence[float] | None = None,
) -> list[float]:
    """For each position j = 0 .. n: the expected entropy of the culprit's posterior after
    ``round_size`` more rollouts at j (lower is better)."""
    n, r = counts.culprits, round_size
    post = posterior(counts, good=good, bad=bad, prior=prior)
    sb, fb, sa, fa = _sides(counts)
    logpost = [math.log(w) if w > 0 else -math.inf for w in post]
    expected = [0.0] * (n + 1)
    for x in range(r + 1):
        comb = math.comb(r, x)
        # u_k: the posterior weight of k times the chance of this sequence of x passes,
        # when position j lies after k (j >= k) or before it (j < k).
        after_u = [0.0] * (n + 1)
        after_ulog = [0.0] * (n + 1)
        before_u = [0.0] * (n + 1)
        before_ulog = [0.0] * (n + 1)
        for k in range(1, n + 1):
            if post[k] <= 0:
                continue
            da = _lbeta(bad.passes + sa[k] + x, bad.fails + fa[k] + r - x) - _lbeta(
                bad.passes + sa[k], bad.fails + fa[k]
            )
            db = _lbeta(good.passes + sb[k] + x, good.fails + fb[k] + r - x) - _lbeta(
                good.passes + sb[k], good.fails + fb[k]
            )
            la, lb = logpost[k] + da, logpost[k] + db
            after_u[k], before_u[k] = math.exp(la), math.exp(lb)
            after_ulog[k], before_ulog[k] = after_u[k] * la, before_u[k] * lb
        # Prefix sums over k <= j of the "after" side, suffix sums over k > j of "before".
        pre_u = pre_ul = 0.0
        suf_u = math.fsum(before_u)
        suf_ul = math.fsum(before_ulog)
        for j in range(n + 1):
            if j >= 1:
                pre_u += after_u[j]
                pre_ul += after_ulog[j]
                suf_u -= before_u[j]
                suf_ul -= before_ulog[j]
            z = pre_u + max(suf_u, 0.0)
            if z <= 0:
                continue
            h = math.log(z) - (pre_ul + suf_ul) / z
            expected[j] += comb * z * h
    return expected


def choose(
    counts: Counts,
    *,
    round_size: int,
    testable: Sequence[bool] | None = None,
    good: BetaPrior = BetaPrior(),
    bad: BetaPrior = BetaPrior(),
    prior: Sequence[float] | None = None,
) -> int:
    """The position whose next round is expected to tell the most about the culprit;
    ties go to the position with fewer rollouts, then the lower one."""
    scores = expected_entropies(counts, round_size=round_size, good=good, bad=bad, prior=prior)
    best: tuple[float, int, int] | None = None
    for j, score in enumerate(scores):
        if testable is not None and not testable[j]:
            continue
        key = (round(score, 12), counts.rollouts[j], j)
        if best is None or key < best:
            best = key
    if best is None:
        raise ValueError("no position is left to test")
    return best[2]


def stop_threshold(confidence: float) -> float:
    """The posterior the stop asks for, to be right at least ``confidence`` of the time."""
    if not 0.5 <= confidence < 1.0:
        raise ValueError(f"confidence must be in [0.5, 1), not {confidence}")
    return 1.0 - (1.0 - confidence) * SLACK


@dataclass(frozen=True)
class Finding:
    """The most probable culprit and whether the evidence is enough to name it."""

    culprit: int
    probability: float
    decided: bool
    both_sides: bool  # rollouts at the culprit and at the position just before it


def assess(
    counts: Counts,
    *,
    confidence: float,
    good: BetaPrior = BetaPrior(),
    bad: BetaPrior = BetaPrior(),
    prior: Sequence[float] | None = None,
) -> Finding:
    post = posterior(counts, good=good, bad=bad, prior=prior)
    culprit = max(range(1, len(post)), key=lambda k: (post[k], -k))
    both = counts.rollouts[culprit] > 0 and counts.rollouts[culprit - 1] > 0
    decided = both and post[culprit] >= stop_threshold(confidence)
    return Finding(culprit, post[culprit], decided, both)


@dataclass(frozen=True)
class Rates:
    """Posterior mean and central credible interval of one side's pass rate, given the
    culprit: Beta(prior + passes, prior + fails)."""

    mean: float
    low: float
    high: float
    passed: int
    rollouts: int


def side_rates(
    counts: Counts,
    culprit: int,
    *,
    good: BetaPrior = BetaPrior(),
    bad: BetaPrior = BetaPrior(),
    mass: float = 0.95,
) -> tuple[Rates, Rates]:
    """The rates before and from ``culprit`` on."""
    sb, fb, sa, fa = _sides(counts)
    return (
        _rates(good.passes + sb[culprit], good.fails + fb[culprit], sb[culprit], fb[culprit], mass),
        _rates(bad.passes + sa[culprit], bad.fails + fa[culprit], sa[culprit], fa[culprit], mass),
    )


def _rates(a: float, b: float, passed: int, fails: int, mass: float) -> Rates:
    tail = (1 - mass) / 2
    return Rates(
        a / (a + b),
        beta_quantile(tail, a, b),
        beta_quantile(1 - tail, a, b),
        passed,
        passed + fails,
    )


def beta_cdf(x: float, a: float, b: float) -> float:
    """The regularised incomplete beta I_x(a, b), by its continued fraction (Lentz)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - _lbeta(a, b))
    if x > (a + 1) / (a + b + 2):
        return 1.0 - beta_cdf(1 - x, b, a)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 300):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-14:
            break
    return front * f / a


def beta_quantile(q: float, a: float, b: float) -> float:
    """The q-quantile of Beta(a, b), by bisection on :func:`beta_cdf`."""
    low, high = 0.0, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        if beta_cdf(mid, a, b) < q:
            low = mid
        else:
            high = mid
    return (low + high) / 2
