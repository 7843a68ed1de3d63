"""Tiers, the suite decision and the whole check's false-alarm guarantee, by exact
figures and by simulation with a fixed seed."""

from __future__ import annotations

import math
import random

import pytest

from silo_regress.stats.exact import Table, decline_p
from silo_regress.stats.sequential import (
    Design,
    calibrated_design,
    fixed_design,
    operating_characteristic,
)
from silo_regress.stats.tally import Tally
from silo_regress.stats.verdicts import (
    Evidence,
    Floor,
    Policy,
    Reason,
    SuiteGate,
    SuiteVerdict,
    Tier,
    judge_tasks,
    rollouts_for_zero,
)


def _t(passed: int, rollouts: int, **checks: int) -> Tally:
    return Tally(rollouts=rollouts, passed=passed, checks=tuple(sorted(checks.items())))


def _one(baseline: Tally | None, candidate: Tally | None, policy: Policy | None = None) -> Tier:
    judged = judge_tasks([Evidence("T", baseline, candidate)], policy or Policy())
    return judged.tasks[0].tier


def _draw(rng: random.Random, rate: float, rollouts: int) -> Tally:
    return Tally(rollouts=rollouts, passed=sum(rng.random() < rate for _ in range(rollouts)))


# --- tiers ------------------------------------------------------------------------


def test_a_clear_drop_is_a_regression_that_fails_the_check() -> None:
    judged = judge_tasks([Evidence("T", _t(10, 10), _t(2, 10))], Policy())
    task = judged.tasks[0]
    assert task.tier is Tier.REGRESSION and judged.failed
    assert task.p_decline == pytest.approx(decline_p(Table(10, 10, 2, 10)))
    assert judged.suite.verdict is SuiteVerdict.REGRESSION
    assert task.baseline_interval is not None and task.baseline_interval.high == 1.0
    assert task.candidate_interval is not None and task.candidate_interval.low < 0.2


def test_a_small_drop_is_suspect_and_names_the_rollouts_that_would_decide() -> None:
    judged = judge_tasks([Evidence("T", _t(9, 10), _t(5, 10))], Policy())
    task = judged.tasks[0]
    assert task.tier is Tier.SUSPECT and not judged.failed
    assert task.p_decline is not None and 0.05 < task.p_decline <= 0.2
    assert task.needed_rollouts == 13
    rate = 0.5
    n = task.needed_rollouts
    assert decline_p(Table(9, 10, round(rate * (n - 1)), n - 1)) > 0.05
    assert decline_p(Table(9, 10, round(rate * n), n)) <= 0.05
    # 9/10 -> 6/10 would take 219 rollouts: no hint above the practical limit (50)
    far = judge_tasks([Evidence("T", _t(9, 10), _t(6, 10))], Policy()).tasks[0]
    assert far.tier is Tier.SUSPECT and far.needed_rollouts is None


def test_a_drop_not_even_zero_passes_could_show_is_insufficient_data() -> None:
    """4 of 4 to 0 of 4 alone is p = 1/70; from 2 of 4 even 0 of 4 is p = 0.21."""
    alone = judge_tasks([Evidence("T", _t(4, 4), _t(0, 4))], Policy())
    assert alone.tasks[0].tier is Tier.REGRESSION
    # 2 of 4 at baseline: even 0 of 4 has p = 0.21, never significant
    task = judge_tasks([Evidence("T", _t(2, 4), _t(0, 4))], Policy()).tasks[0]
    assert task.tier is Tier.INSUFFICIENT_DATA
    needed = task.needed_rollouts
    assert needed is not None and needed == rollouts_for_zero(2, 4, alpha=0.05)
    assert decline_p(Table(2, 4, 0, needed)) <= 0.05
    assert decline_p(Table(2, 4, 0, needed - 1)) > 0.05


def test_improvement_stable_and_the_baselines_that_cannot_be_trusted() -> None:
    assert _one(_t(2, 10), _t(10, 10)) is Tier.IMPROVEMENT
    assert _one(_t(8, 10), _t(8, 10)) is Tier.STABLE
    assert _one(None, _t(8, 10)) is Tier.UNRELIABLE_BASELINE
    missing = judge_tasks([Evidence("T", None, _t(8, 10))], Policy())
    assert missing.failed and missing.tasks[0].reasons == (Reason.BASELINE_MISSING,)
    assert _one(_t(2, 2), _t(8, 10)) is Tier.UNRELIABLE_BASELINE
    assert _one(_t(8, 10), None) is Tier.INSUFFICIENT_DATA
    never = judge_tasks([Evidence("T", _t(0, 10), _t(0, 10))], Policy()).tasks[0]
    assert never.tier is Tier.STABLE and never.reasons == (Reason.CANNOT_DECLINE,)


def test_a_check_that_fell_is_named_even_when_passed_barely_moved() -> None:
    baseline = _t(9, 10, refund=10, reply=9)
    candidate = _t(8, 10, refund=4, reply=8)
    task = judge_tasks([Evidence("T", baseline, candidate)], Policy()).tasks[0]
    assert task.tier is Tier.SUSPECT and task.reasons == (Reason.CHECK_DECLINED,)
    assert [c.label for c in task.declined_checks] == ["refund"]
    assert task.declined_checks[0].cand_passed == 4


def test_renamed_checks_are_named() -> None:
    task = judge_tasks([Evidence("T", _t(9, 10, a=9), _t(9, 10, b=9))], Policy()).tasks[0]
    assert task.renamed_checks == ("a", "b")
    assert task.checks == ()


def test_the_floor_fails_a_task_that_was_always_bad() -> None:
    policy = Policy(floor=Floor(k=3, value=0.8))
    judged = judge_tasks([Evidence("T", _t(5, 10), _t(5, 10))], policy)
    task = judged.tasks[0]
    assert task.tier is Tier.STABLE and task.below_floor and judged.failed
    assert not judge_tasks([Evidence("T", _t(10, 10), _t(10, 10))], policy).failed


def test_pass_hat_k_per_task_is_reported_on_both_sides() -> None:
    task = judge_tasks([Evidence("T", _t(4, 4), _t(3, 4))], Policy(k=3)).tasks[0]
    assert task.pass_hat_k is not None
    assert (task.pass_hat_k.baseline, task.pass_hat_k.candidate) == (1.0, 0.25)


# --- the suite --------------------------------------------------------------------


def test_the_suite_decision_names_movers_rates_and_curves() -> None:
    evidence = [Evidence(f"T{i}", _t(4, 4), _t(2, 4)) for i in range(6)] + [
        Evidence(f"S{i}", _t(2, 4), _t(2, 4)) for i in range(10)
    ]
    judged = judge_tasks(evidence, Policy())
    suite = judged.suite
    assert suite.verdict is SuiteVerdict.REGRESSION and judged.failed
    assert suite.tasks == 16 and (suite.down, suite.up) == (6, 0)
    assert suite.base_rate == pytest.approx(44 / 64) and suite.cand_rate == pytest.approx(32 / 64)
    assert {m.task for m in suite.movers} <= {f"T{i}" for i in range(6)}
    assert len(suite.movers) == 5
    assert [p.k for p in suite.candidate_curve] == [1, 2, 3, 4]
    assert suite.baseline_curve[3].value == pytest.approx(6 / 16)
    # no single task can be a regression at 4 a side: 1 of 1 -> 2 of 4 is p = 0.21
    assert all(t.tier is not Tier.REGRESSION for t in judged.tasks)


def test_suite_gate_warn_reports_without_failing_and_off_does_not_test() -> None:
    evidence = [Evidence(f"T{i}", _t(4, 4), _t(2, 4)) for i in range(6)]
    warned = judge_tasks(evidence, Policy(suite_gate=SuiteGate.WARN))
    assert warned.suite.verdict is SuiteVerdict.REGRESSION and not warned.suite.failed
    off = judge_tasks(evidence, Policy(suite_gate=SuiteGate.OFF))
    assert off.suite.verdict is SuiteVerdict.NOT_TESTED and off.suite.p_decline is None


def test_a_suite_improvement_is_never_a_failure() -> None:
    evidence = [Evidence(f"T{i}", _t(1, 4), _t(4, 4)) for i in range(6)]
    judged = judge_tasks(evidence, Policy())
    assert judged.suite.verdict is SuiteVerdict.IMPROVEMENT and not judged.failed


@pytest.mark.parametrize(
    "evidence",
    [
        [Evidence("T", _t(3, 4), _t(3, 4))],  # a suite of one
        [Evidence("A", _t(0, 4), _t(0, 4)), Evidence("B", _t(4, 4), _t(8, 8))],  # p = 1
        [Evidence("A", _t(3, 4), _t(5, 8)), Evidence("B", _t(5, 6), _t(2, 3))],  # different M
        [Evidence("A", _t(3, 4), None), Evidence("B", None, _t(3, 4))],  # one side only
        [],
    ],
)
def test_odd_suites_give_a_named_decision(evidence: list[Evidence]) -> None:
    judged = judge_tasks(evidence, Policy())
    assert judged.suite.verdict in (SuiteVerdict.STABLE, SuiteVerdict.NOT_TESTED)
    assert not judged.suite.failed
    # only a task without a baseline tally fails: a deleted tally must not pass
    assert judged.failed == any(e.baseline is None for e in evidence)
    testable = sum(1 for e in evidence if e.baseline and e.candidate)
    assert judged.suite.tasks == testable
    if testable == 0:
        assert judged.suite.verdict is SuiteVerdict.NOT_TESTED


def test_a_suite_where_nothing_can_move_has_p_one() -> None:
    evidence = [Evidence("A", _t(0, 4), _t(0, 4)), Evidence("B", _t(4, 4), _t(4, 4))]
    suite = judge_tasks(evidence, Policy()).suite
    assert suite.p_decline == 1.0 and suite.p_increase == 1.0


# --- error rates by simulation ---------------------------------------------------


def _binomial(n: int, rate: float) -> list[float]:
    return [math.comb(n, x) * rate**x * (1 - rate) ** (n - x) for x in range(n + 1)]


def _rejection_chance(n1: int, base: float, n2: int, cand: float) -> float:
    """Exactly: the chance that the gate fails a suite of one task. Its stratified test
    is the task's Fisher test, at 0.9 alpha; its Bonferroni branch at 0.1 alpha adds
    nothing for one task; then Holm at alpha: a regression iff p <= 0.045."""
    return math.fsum(
        wa * wc
        for a, wa in enumerate(_binomial(n1, base))
        for c, wc in enumerate(_binomial(n2, cand))
        if decline_p(Table(a, n1, c, n2)) <= 0.9 * 0.05
    )


def test_one_task_false_alarms_and_power_0_9_to_0_6_at_m_20_are_what_theory_says() -> None:
    rng = random.Random(2022)
    runs = 3000
    for cand_rate in (0.9, 0.6):
        theory = _rejection_chance(20, 0.9, 20, cand_rate)
        hits = sum(
            judge_tasks(
                [Evidence("T", _draw(rng, 0.9, 20), _draw(rng, cand_rate, 20))], Policy()
            ).failed
            for _ in range(runs)
        )
        error = 3 * math.sqrt(theory * (1 - theory) / runs) + 1 / runs
        assert abs(hits / runs - theory) <= error, (cand_rate, hits / runs, theory)
        if cand_rate == 0.9:
            assert theory <= 0.05
        else:
            assert 0.5 < theory < 0.8  # what a fixed 20 against 20 buys at 0.9 -> 0.6


def test_the_whole_check_false_alarm_rate_is_at_most_alpha() -> None:
    """Issue 28's population at no change, M = 8: suite and tasks together. Every false
    alarm goes through the suite step (the closed test: no task fails unless the suite
    rejects), so the whole check's rate is the suite step's, which
    tests/unit/test_stats_error_rates.py checks exactly, branch by branch, over a grid:
    600 runs here only bound it loosely (0.05 + 3 SE = 0.077)."""
    rng = random.Random(28)
    rates = [0.0] * 15 + [1.0] * 10 + [0.25] * 9 + [0.5] * 8 + [0.75] * 8
    runs = 600
    alarms = 0
    for _ in range(runs):
        evidence = [
            Evidence(f"T{i}", _draw(rng, rate, 8), _draw(rng, rate, 8))
            for i, rate in enumerate(rates)
        ]
        judged = judge_tasks(evidence, Policy())
        if any(t.tier is Tier.REGRESSION for t in judged.tasks):
            assert judged.suite.verdict is SuiteVerdict.REGRESSION
        assert judged.failed == judged.suite.failed  # no floor, every tally present
        alarms += judged.failed
    assert alarms / runs <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs)


def test_a_broken_tool_is_caught_by_the_suite_at_m_8() -> None:
    """Issue 28's broken tool: 15% of the tasks that ever pass now never pass."""
    rng = random.Random(15)
    rates = [0.0] * 15 + [1.0] * 10 + [0.25] * 9 + [0.5] * 8 + [0.75] * 8
    runs = 200
    caught = 0
    for _ in range(runs):
        broken = set(rng.sample(range(15, 50), 5))
        evidence = [
            Evidence(f"T{i}", _draw(rng, rate, 8), _draw(rng, 0.0 if i in broken else rate, 8))
            for i, rate in enumerate(rates)
        ]
        caught += judge_tasks(evidence, Policy()).failed
    assert caught / runs >= 0.75


# --- the sequential design ----------------------------------------------------------


@pytest.mark.parametrize("base", [0.95, 0.9, 0.7])
def test_a_calibrated_sequential_design_meets_its_error_rates_exactly(base: float) -> None:
    fixed = fixed_design(base, base - 0.15, alpha=0.05, beta=0.2)
    assert fixed.size <= 0.05 and fixed.power >= 0.8
    design = calibrated_design(base, base - 0.15, max_rollouts=2 * fixed.rollouts)
    assert operating_characteristic(design, rate=base).regression <= 0.05
    assert operating_characteristic(design, rate=base - 0.15).regression >= 0.8
    # and it spends fewer rollouts than the fixed design at both hypotheses
    for rate in (base, base - 0.15):
        assert operating_characteristic(design, rate=rate).mean_rollouts < fixed.rollouts


def test_the_exact_operating_characteristic_matches_simulation() -> None:
    design = Design(0.9, 0.75, round_size=3, max_rollouts=30)
    rng = random.Random(7)
    runs = 4000
    for rate in (0.9, 0.75):
        exact = operating_characteristic(design, rate=rate)
        assert exact.regression + exact.stable + exact.undecided == pytest.approx(1.0)
        regressions = used = 0
        for _ in range(runs):
            passed = done = 0
            decision = None
            for look in design.looks():
                passed += sum(rng.random() < rate for _ in range(look - done))
                done = look
                decision = design.decide(passed, done)
                if decision.value != "continue":
                    break
            regressions += decision is not None and decision.value == "regression"
            used += done
        error = 3 * math.sqrt(exact.regression * (1 - exact.regression) / runs) + 1 / runs
        assert abs(regressions / runs - exact.regression) <= error
        assert used / runs == pytest.approx(exact.mean_rollouts, rel=0.05)


def test_one_task_that_fell_hard_fails_a_suite_that_rose_elsewhere() -> None:
    """The Bonferroni branch of the global step: the stratified sum barely moves (others
    rose), the smallest task p times m is far below 0.1 alpha."""
    evidence = [Evidence("FELL", _t(10, 10), _t(0, 10))] + [
        Evidence(f"R{i}", _t(3, 10), _t(6, 10)) for i in range(20)
    ]
    judged = judge_tasks(evidence, Policy())
    suite = judged.suite
    assert suite.p_decline is not None and suite.p_decline > 0.05
    assert suite.p_task is not None and suite.p_task <= 0.005
    assert suite.verdict is SuiteVerdict.REGRESSION
    assert judged.tasks[0].tier is Tier.REGRESSION
    assert all(t.tier is not Tier.REGRESSION for t in judged.tasks[1:])


# --- each decision of the gate, at its boundary (bench/mutate.py found these unchecked) ----


def test_a_tasks_tier_comes_from_its_holm_adjusted_p_not_its_raw_p() -> None:
    """One task fell hard (the suite rejects); two fell a little, each raw p = 0.029 <= alpha,
    Holm-adjusted 2 x 0.029 = 0.057 > alpha: suspect, not regression, and the tier agrees
    with the adjusted p it prints."""
    evidence = [
        Evidence("FELL", _t(10, 10), _t(0, 10)),
        Evidence("A", _t(6, 10), _t(1, 10)),
        Evidence("B", _t(9, 10), _t(4, 10)),
    ]
    judged = judge_tasks(evidence, Policy())
    assert judged.suite.verdict is SuiteVerdict.REGRESSION
    fell, a, b = judged.tasks
    assert fell.tier is Tier.REGRESSION
    for task in (a, b):
        assert task.p_decline is not None and task.p_decline <= 0.05
        assert task.p_adjusted == pytest.approx(2 * task.p_decline)
        assert task.p_adjusted is not None and task.p_adjusted > 0.05, task
        assert task.tier is Tier.SUSPECT, task
    # with only one of them beside the hard fall, Holm's factor for it is 1: a regression
    pair = judge_tasks(evidence[:2], Policy()).tasks
    assert pair[1].p_adjusted == pytest.approx(pair[1].p_decline)
    assert pair[1].tier is Tier.REGRESSION


def _fell_and_rose(m: int) -> list[Evidence]:
    """One task 10/10 -> 3/10 (Fisher p = 0.00155), m - 1 that rose 3/10 -> 6/10: the
    stratified test sees no decline (p >= 0.17); only the Bonferroni branch, m x 0.00155."""
    return [Evidence("FELL", _t(10, 10), _t(3, 10))] + [
        Evidence(f"R{i}", _t(3, 10), _t(6, 10)) for i in range(m - 1)
    ]


@pytest.mark.parametrize(("m", "declined"), [(2, True), (3, True), (4, False)])
def test_the_bonferroni_branch_multiplies_the_smallest_p_by_the_number_of_tasks(
    m: int, declined: bool
) -> None:
    suite = judge_tasks(_fell_and_rose(m), Policy()).suite
    smallest = decline_p(Table(10, 10, 3, 10))
    assert suite.p_decline is not None and suite.p_decline > 0.05
    assert suite.p_task == pytest.approx(m * smallest)
    assert (suite.verdict is SuiteVerdict.REGRESSION) is declined  # m x p <= 0.1 x 0.05


def test_the_stratified_branch_rejects_at_0_9_alpha_not_alpha() -> None:
    """Two tasks 2/4 -> 0/4: stratified p = 0.0459, in (0.9 alpha, alpha]; each task's
    p = 0.214, so the Bonferroni branch is far off: the suite is stable."""
    evidence = [Evidence(f"T{i}", _t(2, 4), _t(0, 4)) for i in range(2)]
    suite = judge_tasks(evidence, Policy()).suite
    assert suite.p_decline is not None and 0.9 * 0.05 < suite.p_decline <= 0.05
    assert suite.p_task is not None and suite.p_task > 0.005
    assert suite.verdict is SuiteVerdict.STABLE
    # one pass fewer on the first task, and the stratified p falls below 0.9 alpha
    lower = [Evidence("T0", _t(3, 4), _t(0, 4)), evidence[1]]
    lowered = judge_tasks(lower, Policy()).suite
    assert lowered.p_decline is not None and lowered.p_decline <= 0.9 * 0.05
    assert lowered.verdict is SuiteVerdict.REGRESSION


def test_under_sequential_mode_the_suite_test_runs_at_half_alpha() -> None:
    """--repeat-until-decided spends half of alpha on the tasks' sequential tests: the suite
    step (both branches) and the fixed-sample task tests run at alpha / 2."""
    assert Policy(sequential=True).suite_alpha == pytest.approx(0.025)
    assert Policy(alpha=0.1, sequential=True).suite_alpha == pytest.approx(0.05)
    assert Policy().suite_alpha == pytest.approx(0.05)
    # stratified: two tasks 4/8 -> 1/8, p = 0.029: in (0.9 x alpha/2, 0.9 x alpha]
    stratified = [Evidence(f"T{i}", _t(4, 8), _t(1, 8)) for i in range(2)]
    fixed = judge_tasks(stratified, Policy()).suite
    assert fixed.p_decline is not None and 0.9 * 0.025 < fixed.p_decline <= 0.9 * 0.05
    assert fixed.verdict is SuiteVerdict.REGRESSION
    sequential = judge_tasks(stratified, Policy(sequential=True)).suite
    assert sequential.verdict is SuiteVerdict.STABLE
    # Bonferroni: 2 x 0.00155 = 0.0031, in (0.1 x alpha/2, 0.1 x alpha]
    assert judge_tasks(_fell_and_rose(2), Policy()).suite.verdict is SuiteVerdict.REGRESSION
    held = judge_tasks(_fell_and_rose(2), Policy(sequential=True))
    assert held.suite.verdict is SuiteVerdict.STABLE and not held.failed
    # a task left to the fixed-sample rule: adjusted p 0.029 is a regression at alpha,
    # not at alpha / 2 (the gate is opened by a hard fall elsewhere)
    tasks = [Evidence("FELL", _t(10, 10), _t(0, 10)), Evidence("A", _t(6, 10), _t(1, 10))]
    assert judge_tasks(tasks, Policy()).tasks[1].tier is Tier.REGRESSION
    assert judge_tasks(tasks, Policy(sequential=True)).tasks[1].tier is not Tier.REGRESSION


def test_the_floor_fails_below_its_value_and_passes_at_it() -> None:
    """min-pass-hat-k = {k = 3, value = 0.25}: 3 of 4 has pass^3 = 0.25 exactly (at the
    floor, not below); 2 of 4 has 0; with fewer rollouts than k there is no pass^k."""
    policy = Policy(floor=Floor(k=3, value=0.25))
    at = judge_tasks([Evidence("T", _t(4, 4), _t(3, 4))], policy).tasks[0]
    assert not at.below_floor and not at.failed
    below = judge_tasks([Evidence("T", _t(4, 4), _t(2, 4))], policy).tasks[0]
    assert below.below_floor and below.failed and below.tier is not Tier.REGRESSION
    exactly_k = judge_tasks([Evidence("T", _t(3, 3), _t(2, 3))], policy).tasks[0]
    assert exactly_k.below_floor  # 3 rollouts are enough for pass^3 (here 0)
    too_few = judge_tasks([Evidence("T", _t(3, 3), _t(0, 2))], policy).tasks[0]
    assert not too_few.below_floor
    # a floor applies without a baseline tally too (the task fails for its missing tally)
    alone = judge_tasks([Evidence("T", None, _t(2, 4))], policy).tasks[0]
    assert alone.below_floor


def test_a_baseline_of_exactly_the_minimum_rollouts_is_judged_and_in_the_suite() -> None:
    evidence = [Evidence("T", _t(3, 3), _t(0, 30))]
    judged = judge_tasks(evidence, Policy())
    assert judged.tasks[0].tier is Tier.REGRESSION
    assert judged.suite.tasks == 1 and judged.suite.verdict is SuiteVerdict.REGRESSION
    small = judge_tasks([Evidence("T", _t(2, 2), _t(0, 30))], Policy())
    assert small.suite.tasks == 0 and small.tasks[0].tier is Tier.UNRELIABLE_BASELINE


def test_the_movers_are_the_tasks_that_fell_most_first() -> None:
    evidence = [
        Evidence("SMALL", _t(3, 10), _t(2, 10)),  # by sum of rates it would come first
        Evidence("BIG", _t(10, 10), _t(2, 10)),
        Evidence("MID", _t(9, 10), _t(5, 10)),
        Evidence("ROSE", _t(2, 10), _t(9, 10)),
    ]
    movers = judge_tasks(evidence, Policy()).suite.movers
    assert [m.task for m in movers] == ["BIG", "MID", "SMALL"]
    assert (movers[0].base_rate, movers[0].cand_rate) == (1.0, 0.2)


def test_an_empty_suite_has_empty_curves() -> None:
    suite = judge_tasks([], Policy()).suite
    assert suite.baseline_curve == () and suite.candidate_curve == ()
    assert suite.base_rate is None and suite.cand_rate is None
