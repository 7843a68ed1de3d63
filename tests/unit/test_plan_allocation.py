"""The suite's allocation in `plan`: the fewest rollouts, spread M or M + 1 with the
extra to the most informative tasks, never under the least a check runs, and powers
measured with the check's own suite decision."""

from __future__ import annotations

import random

from silo_regress.stats.exact import Table
from silo_regress.stats.planning import (
    LEAST_ROLLOUTS,
    SuiteTask,
    allocate,
    extra_order,
    simulated_suite_power,
    suite_allocation,
    suite_declines,
)
from silo_regress.stats.tally import Tally
from silo_regress.stats.verdicts import Evidence, Policy, decide_suite


def test_suite_declines_is_the_check_s_own_global_step() -> None:
    rng = random.Random(5)
    seen = set()
    for _ in range(400):
        tables = []
        for _ in range(rng.randint(1, 6)):
            n1, m = rng.choice((8, 20)), rng.randint(1, 12)
            tables.append(Table(rng.randint(0, n1), n1, rng.randint(0, m), m))
        evidence = [
            Evidence(
                f"T{i}",
                Tally(t.base_rollouts, t.base_passed),
                Tally(t.cand_rollouts, t.cand_passed),
            )
            for i, t in enumerate(tables)
        ]
        mine = suite_declines(tables, alpha=0.05)
        assert mine is decide_suite(evidence, Policy()).failed, tables
        seen.add(mine)
    assert seen == {True, False}  # both outcomes were exercised


def test_allocate_gives_m_or_m_plus_1_and_the_least_to_a_task_that_cannot_decline() -> None:
    tasks = [SuiteTask(16, 20, 0.6), SuiteTask(0, 8, 0.0), SuiteTask(10, 20, 0.3)]
    assert allocate(tasks, 5, 1, (2, 0)) == (5, LEAST_ROLLOUTS, 6)
    assert allocate(tasks, 5, 0, (2, 0)) == (5, LEAST_ROLLOUTS, 5)


def test_the_extra_rollout_goes_to_the_most_informative_task_first() -> None:
    tasks = [
        SuiteTask(18, 20, 0.8),  # a drop of 0.1
        SuiteTask(0, 8, 0.0),  # cannot decline: never in the order
        SuiteTask(18, 20, 0.6),  # a drop of 0.3: the most informative
        SuiteTask(10, 20, 0.4),  # a drop of 0.1 at a rate with more variance
        SuiteTask(18, 20, 0.8),  # ties with the first: after it
    ]
    assert extra_order(tasks, 3) == (2, 0, 4, 3)


def test_the_allocation_is_the_fewest_that_reach_the_power_and_even() -> None:
    tasks = [SuiteTask(16, 20, 0.55)] * 8
    found = suite_allocation(tasks, alpha=0.05, power=0.8, checks=400)
    assert found is not None and found.smaller is not None
    assert found.chosen.power >= 0.8 > found.smaller.power
    assert found.smaller.total == found.chosen.total - 1
    assert found.chosen.total <= found.uniform.total
    assert set(found.chosen.rollouts) <= {found.low, found.low + 1}
    assert sum(c == found.low + 1 for c in found.chosen.rollouts) == found.extra
    assert 0 < found.extra < len(tasks)  # here the spread beats every equal M
    assert min(found.chosen.rollouts) >= LEAST_ROLLOUTS


def test_where_the_least_overshoots_the_plan_says_so_and_goes_no_lower() -> None:
    found = suite_allocation([SuiteTask(19, 20, 0.35)] * 20, alpha=0.05, power=0.8, checks=200)
    assert found is not None and found.at_least and found.smaller is None
    # 2, not 1: check --run refuses a stats task one rollout (commands/checking.py)
    assert found.chosen.rollouts == (2,) * 20
    assert found.chosen.power > 0.9


def test_the_printed_power_is_what_fresh_simulations_deliver() -> None:
    tasks = [SuiteTask(16, 20, 0.55), SuiteTask(12, 20, 0.3), SuiteTask(20, 20, 0.75)] * 2
    found = suite_allocation(tasks, alpha=0.05, power=0.8, checks=600)
    assert found is not None
    fresh = simulated_suite_power(tasks, found.chosen.rollouts, alpha=0.05, checks=600, seed=99)
    assert abs(fresh - found.chosen.power) < 0.05
