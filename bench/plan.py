"""Does `silo-regress plan` keep its promise? The M it prints, simulated.

    python bench/plan.py                 # about a minute on one CPU

For baseline rates 0.6 .. 0.95 and drops 0.1, 0.15 and 0.3, a tally of 20 rollouts at
the rate (its passes rounded) is what the plan reads. Per task: the plan's fixed M
(:func:`silo_regress.stats.planning.rollouts_to_detect`, searched up to 1,000 here) is
run: candidates drawn at rate - drop, judged by the one-sided Fisher test at 0.05
against the tally. Suite: 20 such tasks, every one down by the drop, the plan's suite
M (:func:`silo_regress.stats.planning.suite_rollouts`) judged by the exact stratified
test at 0.045 (the global step's branch). The promise is power 0.8; the figure is the
share of simulated checks that flagged the drop.
"""

from __future__ import annotations

import argparse
import random
import time

from silo_regress.stats.exact import Table, decline_p, stratified_decline_p
from silo_regress.stats.planning import SuiteTask, rollouts_to_detect, suite_rollouts

RATES = (0.6, 0.7, 0.8, 0.9, 0.95)
DROPS = (0.1, 0.15, 0.3)
TALLY = 20
SUITE = 20


def _passes(rng: random.Random, rate: float, n: int) -> int:
    return sum(rng.random() < rate for _ in range(n))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checks", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=32)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(f"{args.checks} simulated checks a cell, seed {args.seed}, power promised 0.8\n")
    print("| rate | drop | task: M | task: power | suite of 20: M | suite: power |")
    print("|---|---|---|---|---|---|")
    started = time.monotonic()
    worst = 0.0
    for rate in RATES:
        passed = round(rate * TALLY)
        for drop in DROPS:
            after = max(0.0, rate - drop)
            m = rollouts_to_detect(passed, TALLY, rate=after, alpha=0.05, power=0.8, limit=1000)
            task_power = None
            if m is not None:
                hits = sum(
                    decline_p(Table(passed, TALLY, _passes(rng, after, m), m)) <= 0.05
                    for _ in range(args.checks)
                )
                task_power = hits / args.checks
                worst = max(worst, abs(task_power - 0.8))
            tasks = [SuiteTask(passed, TALLY, after)] * SUITE
            suite_m = suite_rollouts(tasks, level=0.045, power=0.8, limit=1000)
            suite_power = None
            if suite_m is not None:
                hits = 0
                for _ in range(args.checks // 4):  # the stratified test costs more
                    tables = [
                        Table(passed, TALLY, _passes(rng, after, suite_m), suite_m)
                        for _ in range(SUITE)
                    ]
                    hits += stratified_decline_p(tables, given_baseline_passed=True) <= 0.045
                suite_power = hits / (args.checks // 4)
                worst = max(worst, abs(suite_power - 0.8))
            print(
                f"| {rate} | {drop} | {m if m is not None else '> 1000'} | "
                f"{'-' if task_power is None else f'{task_power:.3f}'} | "
                f"{suite_m if suite_m is not None else '> 1000'} | "
                f"{'-' if suite_power is None else f'{suite_power:.3f}'} |",
                flush=True,
            )
    print(f"\nlargest distance from 0.8: {worst:.3f}; {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
