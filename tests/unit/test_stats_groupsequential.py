"""The sequential check's design: its levels spend exactly the alpha it claims, its
decisions follow its bounds, and its false-alarm rate holds over a grid of suites."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import pytest

from silo_regress.stats.exact import (
    Table,
    decline_p,
    decline_p_given_baseline_passed,
    hypergeometric_pmf,
    stratified_decline_p,
)
from silo_regress.stats.groupsequential import (
    SequentialPolicy,
    SuiteStep,
    SuiteWhy,
    TaskStep,
    TaskWhy,
    decide_look,
    fractions_of,
    levels_for,
)
from silo_regress.stats.spending import nominal_levels, rejection_chances, spent
from silo_regress.stats.tally import Tally
from silo_regress.stats.verdicts import Evidence


@pytest.mark.parametrize("gamma", [-4.0, -1.0, 0.0, 1.0])
def test_the_nominal_levels_spend_exactly_alpha_for_a_normal_statistic(gamma: float) -> None:
    fractions = (0.4, 0.6667, 0.8571, 1.0)
    levels = nominal_levels(fractions, alpha=0.045, gamma=gamma)
    rejects, _ = rejection_chances(fractions, levels, drift=0.0)
    # Look by look, the chance of a first rejection is the spending function's step.
    cumulative = [0.045 * spent(f, gamma=gamma) for f in fractions]
    steps = [b - a for a, b in zip([0.0, *cumulative[:-1]], cumulative, strict=True)]
    assert rejects == pytest.approx(steps, abs=2e-5)
    assert math.fsum(rejects) == pytest.approx(0.045, abs=2e-5)


def test_the_levels_match_a_simulated_normal_statistic() -> None:
    fractions = (0.4, 0.6667, 0.8571, 1.0)
    levels = nominal_levels(fractions, alpha=0.045, gamma=-1.0)
    from silo_regress.stats.spending import normal_quantile

    bounds = [normal_quantile(level) for level in levels]
    rng, hits, trials = random.Random(3), 0, 100_000
    for _ in range(trials):
        score, before = 0.0, 0.0
        for t, bound in zip(fractions, bounds, strict=True):
            score += rng.gauss(0.0, math.sqrt(t - before))
            before = t
            if score / math.sqrt(t) > bound:
                hits += 1
                break
    assert hits / trials == pytest.approx(0.045, abs=0.002)  # 3 standard errors


def test_the_global_step_splits_alpha_nine_tenths_to_the_stratified_branch() -> None:
    policy = SequentialPolicy()
    levels = levels_for([8] * 20, policy)
    assert levels.fractions == fractions_of([8] * 20, policy.looks)
    assert levels.fractions == (0.4, 0.6667, 0.8571, 1.0)
    assert math.fsum(levels.smallest) == pytest.approx(0.005, abs=1e-12)  # Bonferroni, exact
    rejects, _ = rejection_chances(levels.fractions, levels.stratified, drift=0.0)
    assert math.fsum(rejects) == pytest.approx(0.045, abs=2e-5)
    # the last look keeps most of it: the fixed check's 0.045 is barely lowered
    assert 0.02 < levels.stratified[-1] < 0.045


def test_selected_tasks_are_tested_given_their_baseline_passed() -> None:
    """P(C <= c | T = t, A >= 1) by enumeration of the hypergeometric."""
    for a, n1, c, n2 in [(1, 8, 0, 4), (2, 8, 1, 2), (1, 4, 3, 8), (8, 8, 0, 8)]:
        table = Table(a, n1, c, n2)
        t = a + c
        pmf = [
            hypergeometric_pmf(x, population=n1 + n2, successes=t, draws=n2) for x in range(n2 + 1)
        ]
        kept = [p if x <= t - 1 else 0.0 for x, p in enumerate(pmf)]
        expected = math.fsum(kept[: c + 1]) / math.fsum(kept)
        assert decline_p_given_baseline_passed(table) == pytest.approx(expected, rel=1e-12)
        assert decline_p_given_baseline_passed(table) >= decline_p(table)
    # a baseline of 1/8 and a candidate of 1/2: plain p would overstate the candidate
    tables = [Table(1, 8, 1, 2)] * 3
    assert stratified_decline_p(tables, given_baseline_passed=True) > stratified_decline_p(tables)


def _evidence(
    base: Sequence[tuple[int, int]], cand: Sequence[tuple[int, int] | None]
) -> list[Evidence]:
    return [
        Evidence(f"T{i}", Tally(n, p), Tally(m[1], m[0]) if m else None)
        for i, ((p, n), m) in enumerate(zip(base, cand, strict=True))
    ]


def test_tasks_that_cannot_decline_run_nothing_from_the_start() -> None:
    evidence = [
        Evidence("never", Tally(8, 0), None),
        Evidence("no-tally", None, None),
        Evidence("tiny", Tally(2, 2), None),
        Evidence("live", Tally(8, 6), None),
    ]
    decision = decide_look(evidence, SequentialPolicy(), look=0)
    steps = {t.task: (t.step, t.why, t.more) for t in decision.tasks}
    assert steps == {
        "never": (TaskStep.STOP, TaskWhy.CANNOT_DECLINE, 0),
        "no-tally": (TaskStep.STOP, TaskWhy.NO_BASELINE, 0),
        "tiny": (TaskStep.STOP, TaskWhy.NO_BASELINE, 0),
        "live": (TaskStep.RUN, TaskWhy.UNDECIDED, 2),
    }
    assert decision.suite is SuiteStep.CONTINUE
    nothing = decide_look(evidence[:3], SequentialPolicy(), look=0)
    assert (nothing.suite, nothing.why) == (SuiteStep.ACCEPT, SuiteWhy.NOTHING_TO_TEST)


def test_each_look_follows_its_bounds() -> None:
    policy = SequentialPolicy()
    base = [(6, 8)] * 10
    # a clear fall at look 2: rejected by the stratified branch
    fell = decide_look(_evidence(base, [(0, 4)] * 10), policy, look=2)
    assert (fell.suite, fell.why) == (SuiteStep.REJECT, SuiteWhy.STRATIFIED)
    assert fell.p_stratified is not None and fell.stratified_level is not None
    assert fell.p_stratified <= fell.stratified_level
    assert all(t.step is TaskStep.STOP and t.why is TaskWhy.SUITE_DECIDED for t in fell.tasks)
    # as good as the baseline at look 1: futility stops it, stable
    same = decide_look(_evidence(base, [(2, 2)] * 10), policy, look=1)
    assert (same.suite, same.why) == (SuiteStep.ACCEPT, SuiteWhy.FUTILITY)
    assert same.futility_level is not None and same.p_stratified is not None
    assert same.p_stratified >= same.futility_level
    # a little worse at look 1: neither bound, two more rollouts each
    mid = decide_look(_evidence(base, [(1, 2)] * 8 + [(2, 2)] * 2), policy, look=1)
    assert (mid.suite, mid.why) == (SuiteStep.CONTINUE, SuiteWhy.BETWEEN)
    assert {t.more for t in mid.running} == {2} and len(mid.running) == 10
    # the last look never continues
    last = decide_look(_evidence(base, [(5, 8)] * 10), policy, look=4)
    assert (last.suite, last.why, last.futility_level) == (
        SuiteStep.ACCEPT,
        SuiteWhy.LAST_LOOK,
        None,
    )


def test_one_task_that_fell_hard_rejects_by_the_smallest_p_branch() -> None:
    policy = SequentialPolicy()
    base = [(8, 8)] + [(1, 8)] * 4
    cand: list[tuple[int, int] | None] = [(0, 8), (8, 8), (8, 8), (8, 8), (8, 8)]  # the others rose
    decision = decide_look(_evidence(base, cand), policy, look=4)
    assert (decision.suite, decision.why) == (SuiteStep.REJECT, SuiteWhy.SMALLEST_P)
    assert decision.declined is True


def _false_alarms(rates: list[float], *, checks: int, seed: int) -> float:
    rng = random.Random(seed)
    policy = SequentialPolicy()
    failed = 0
    for _ in range(checks):
        base = [Tally(8, sum(rng.random() < r for _ in range(8))) for r in rates]
        made = [0] * len(rates)
        passed = [0] * len(rates)
        look = 0
        decision = decide_look(
            [Evidence(f"T{i}", b, None) for i, b in enumerate(base)], policy, look=0
        )
        while not decision.done:
            look += 1
            more = {t.task: t.more for t in decision.running}
            for i, rate in enumerate(rates):
                extra = more.get(f"T{i}", 0)
                passed[i] += sum(rng.random() < rate for _ in range(extra))
                made[i] += extra
            evidence = [
                Evidence(f"T{i}", b, Tally(m, p) if m else None)
                for i, (b, m, p) in enumerate(zip(base, made, passed, strict=True))
            ]
            decision = decide_look(evidence, policy, look=look)
            assert max(made) <= policy.cap
        failed += decision.suite is SuiteStep.REJECT
    return failed / checks


@pytest.mark.parametrize(
    "rates",
    [
        [0.2] * 20,  # low rates: many baselines at 0 are left out (the selection)
        [0.5] * 20,
        [0.9] * 20,
        [0.0] * 5 + [0.3] * 5 + [0.7] * 5 + [1.0] * 5,
    ],
    ids=["all-0.2", "all-0.5", "all-0.9", "mixed"],
)
def test_the_whole_checks_false_alarm_rate_holds_over_a_grid_of_suites(rates: list[float]) -> None:
    rate = _false_alarms(rates, checks=1500, seed=32)
    assert rate <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 1500)  # 0.061: at most alpha, within noise


def test_run_looks_asks_for_each_rollout_once_and_stops_at_the_decision() -> None:
    from silo_regress.stats.groupsequential import run_looks

    baselines = [Tally(8, 8)] * 10 + [Tally(8, 0)]  # the last can never decline
    asked: dict[int, list[tuple[int, int]]] = {}

    def never(i: int, before: int, after: int) -> int:
        asked.setdefault(i, []).append((before, after))
        return 0

    broken = run_looks(baselines, SequentialPolicy(), passes=never)
    assert broken.decision.suite is SuiteStep.REJECT and broken.looks == 1
    assert broken.made == (2,) * 10 + (0,)
    assert asked == {i: [(0, 2)] for i in range(10)}
    steady = run_looks(baselines, SequentialPolicy(), passes=lambda i, b, a: a - b)
    assert steady.decision.suite is SuiteStep.ACCEPT
    assert steady.made[-1] == 0 and max(steady.made) <= SequentialPolicy().cap
