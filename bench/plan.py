"""Does `silo-regress plan` keep its promise? What it prints, simulated as the check runs it.

    python bench/plan.py --part fixed       # the 15 cells, suites of 20
    python bench/plan.py --part grid        # suites of 5 and 100, and mixed rates
    python bench/plan.py --part sequential  # the sequential policy's printed power

For baseline rates 0.6 .. 0.95 and drops 0.1, 0.15 and 0.3, a tally of 20 rollouts at
the rate (its passes rounded) is what the plan reads; every task falls by the drop.

- Per task: the plan's fixed M (:func:`silo_regress.stats.planning.rollouts_to_detect`,
  searched up to 1,000 here) and the power it prints (exact at the tally's rate), run:
  candidates drawn at rate - drop, judged by the one-sided Fisher test at 0.05.
- Suite: the allocation the plan prints
  (:func:`silo_regress.stats.planning.suite_allocation`: M or M + 1 a task) and the power
  it prints, run: candidates drawn at each task's rate after the drop, judged by the
  check's own suite decision (:func:`silo_regress.stats.verdicts.decide_suite`, a
  failing suite verdict), on fresh random numbers (not the plan's seed).
- Sequential: the power `plan` prints for the sequential check (seeded simulations,
  :func:`silo_regress.commands.planning.simulated_sequential`) and 0.4's normal
  approximation (:func:`silo_regress.commands.planning.plan_policy`) against the
  check's own looks (:func:`silo_regress.stats.groupsequential.decide_look`) simulated
  on fresh random numbers.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Sequence

from silo_regress.commands.planning import plan_policy, simulated_sequential
from silo_regress.stats.exact import Table, decline_p
from silo_regress.stats.groupsequential import (
    DEFAULT_LOOKS,
    SequentialPolicy,
    SuiteStep,
    run_looks,
)
from silo_regress.stats.planning import (
    SuiteAllocation,
    SuiteTask,
    rollouts_to_detect,
    suite_allocation,
    task_power,
)
from silo_regress.stats.tally import Tally
from silo_regress.stats.verdicts import Evidence, Policy, decide_suite

RATES = (0.6, 0.7, 0.8, 0.9, 0.95)
DROPS = (0.1, 0.15, 0.3)
TALLY = 20
POWER = 0.8


def _passes(rng: random.Random, rate: float, n: int) -> int:
    return sum(rng.random() < rate for _ in range(n))


def _noise(power: float, checks: int) -> float:
    return math.sqrt(max(power * (1 - power), 0.01) / checks)


def simulate_allocation(
    tasks: Sequence[SuiteTask], counts: Sequence[int], *, checks: int, rng: random.Random
) -> float:
    """The share of simulated checks with these rollouts a task whose suite fails."""
    gate = Policy()
    hits = 0
    for _ in range(checks):
        evidence = [
            Evidence(
                f"T{i}",
                Tally(t.base_rollouts, t.base_passed),
                Tally(m, _passes(rng, t.rate_after, m)),
            )
            for i, (t, m) in enumerate(zip(tasks, counts, strict=True))
        ]
        hits += decide_suite(evidence, gate).failed
    return hits / checks


def _uniform_total(found: SuiteAllocation) -> int:
    return found.uniform.total


def suite_row(
    label: str, tasks: Sequence[SuiteTask], *, checks: int, rng: random.Random
) -> tuple[str, float | None]:
    """A table row: the plan's allocation, its printed power, the simulated power."""
    started = time.process_time()
    found = suite_allocation(tasks, alpha=0.05, power=POWER, limit=60)
    planned = time.process_time() - started
    if found is None:
        return f"| {label} | {POWER} | more than 60 a task | - | - | - | - | - |", None
    simulated = simulate_allocation(tasks, found.chosen.rollouts, checks=checks, rng=rng)
    spread = f"{found.low} a task" + (f", +1 for {found.extra}" if found.extra else "")
    if found.at_least:
        spread += " (the least)"
    smaller = f"{found.smaller.power:.3f}" if found.smaller is not None else "-"
    gap = simulated - found.chosen.power
    return (
        f"| {label} | {POWER} | {spread} | {found.chosen.total} / {_uniform_total(found)} | "
        f"{found.chosen.power:.3f} ({smaller}) | {simulated:.3f} | {gap:+.3f} | "
        f"{planned:.1f} s |"
    ), gap


SUITE_HEAD = (
    "| cell | power asked | the plan's allocation | rollouts / equal M's | "
    "printed power (one fewer) | simulated | simulated - printed | plan's CPU |\n"
    "|---|---|---|---|---|---|---|---|"
)


def part_fixed(checks: int, seed: int) -> None:
    rng = random.Random(seed)
    print(f"Per task: {checks} checks a cell, one-sided Fisher at 0.05 against a tally of 20\n")
    print("| rate | drop | task: M | printed power (M - 1) | simulated |")
    print("|---|---|---|---|---|")
    for rate in RATES:
        passed = round(rate * TALLY)
        for drop in DROPS:
            after = max(0.0, rate - drop)
            m = rollouts_to_detect(passed, TALLY, rate=after, alpha=0.05, power=POWER, limit=1000)
            if m is None:
                print(f"| {rate} | {drop} | > 1000 | - | - |")
                continue
            printed = task_power(passed, TALLY, m, rate=after, alpha=0.05)
            fewer = task_power(passed, TALLY, m - 1, rate=after, alpha=0.05)
            hits = sum(
                decline_p(Table(passed, TALLY, _passes(rng, after, m), m)) <= 0.05
                for _ in range(checks)
            )
            print(f"| {rate} | {drop} | {m} | {printed:.3f} ({fewer:.3f}) | {hits / checks:.3f} |")
    print(f"\nSuite of 20 like tasks: {checks} checks a cell, the check's decide_suite\n")
    print(SUITE_HEAD)
    gaps = []
    for rate in RATES:
        passed = round(rate * TALLY)
        for drop in DROPS:
            tasks = [SuiteTask(passed, TALLY, max(0.0, rate - drop))] * 20
            row, gap = suite_row(f"{rate} / {drop}", tasks, checks=checks, rng=rng)
            print(row, flush=True)
            if gap is not None:
                gaps.append(gap)
    print(f"\nlargest |simulated - printed|: {max(abs(g) for g in gaps):.3f}")


def _mixed(rng: random.Random, n: int, drop: float) -> list[SuiteTask]:
    """Tallies of 8 or 20 at rates uniform in [0.5, 1], a few never passing."""
    tasks = []
    for i in range(n):
        size = 8 if i % 2 else 20
        passed = 0 if i % 10 == 9 else _passes(rng, rng.uniform(0.5, 1.0), size)
        tasks.append(SuiteTask(passed, size, max(0.0, passed / size - drop)))
    return tasks


def part_grid(checks: int, seed: int) -> None:
    rng = random.Random(seed)
    print(f"{checks} checks a cell, the check's decide_suite\n")
    print(SUITE_HEAD)
    gaps = []
    for n in (5, 100):
        for rate in (0.6, 0.8, 0.95):
            passed = round(rate * TALLY)
            for drop in DROPS:
                tasks = [SuiteTask(passed, TALLY, max(0.0, rate - drop))] * n
                row, gap = suite_row(f"{n} x {rate} / {drop}", tasks, checks=checks, rng=rng)
                print(row, flush=True)
                if gap is not None:
                    gaps.append(gap)
    for n in (20, 100):
        for drop in (0.15, 0.3):
            tasks = _mixed(random.Random(seed + n), n, drop)
            row, gap = suite_row(f"{n} mixed / {drop}", tasks, checks=checks, rng=rng)
            print(row, flush=True)
            if gap is not None:
                gaps.append(gap)
    print(f"\nlargest |simulated - printed|: {max(abs(g) for g in gaps):.3f}")


def simulate_sequential(
    tasks: Sequence[SuiteTask], *, checks: int, rng: random.Random, looks: tuple[int, ...]
) -> tuple[float, float]:
    """The share of simulated sequential checks that reject, and rollouts a task."""
    policy = SequentialPolicy(looks=looks)
    rejects = rollouts = 0
    baselines = [Tally(t.base_rollouts, t.base_passed) for t in tasks]

    def passes(i: int, before: int, after: int) -> int:
        return _passes(rng, tasks[i].rate_after, after - before)

    for _ in range(checks):
        done = run_looks(baselines, policy, passes=passes)
        rejects += done.decision.suite is SuiteStep.REJECT
        rollouts += sum(done.made)
    return rejects / checks, rollouts / checks / len(tasks)


def part_sequential(checks: int, seed: int) -> None:
    rng = random.Random(seed)
    print(f"{checks} checks a cell, looks {list(DEFAULT_LOOKS)}, decide_look\n")
    print(
        "| cell | normal approximation (0.4's figure) | printed power | simulated | "
        "simulated - printed | printed rollouts a task | simulated |"
    )
    print("|---|---|---|---|---|---|---|")
    worst = worst_approx = 0.0
    cells = [(20, r, d) for r in RATES for d in DROPS] + [
        (n, r, d) for n in (5, 100) for r in (0.6, 0.95) for d in (0.15, 0.3)
    ]
    for n, rate, drop in cells:
        passed = round(rate * TALLY)
        tasks = [SuiteTask(passed, TALLY, max(0.0, rate - drop))] * n
        approx = plan_policy(tasks, DEFAULT_LOOKS)
        printed = simulated_sequential(tasks, DEFAULT_LOOKS)
        power, rollouts = simulate_sequential(tasks, checks=checks, rng=rng, looks=DEFAULT_LOOKS)
        worst = max(worst, abs(power - printed.power))
        worst_approx = max(worst_approx, abs(power - approx.power))
        print(
            f"| {n} x {rate} / {drop} | {approx.power:.3f} | {printed.power:.3f} | "
            f"{power:.3f} | {power - printed.power:+.3f} | {printed.rollouts_with_drop:.2f} | "
            f"{rollouts:.2f} |",
            flush=True,
        )
    print(f"\nlargest |simulated - printed|: {worst:.3f}; approximation's: {worst_approx:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=["fixed", "grid", "sequential"], default="fixed")
    parser.add_argument("--checks", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    started = time.process_time()
    {"fixed": part_fixed, "grid": part_grid, "sequential": part_sequential}[args.part](
        args.checks, args.seed
    )
    print(f"\nseed {args.seed}; {time.process_time() - started:.0f} s CPU")
    print(f"noise (one standard error) at 0.8: {_noise(0.8, args.checks):.3f}")


if __name__ == "__main__":
    main()
