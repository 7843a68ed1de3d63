"""The stats gate's power bench (issue 28): false alarms and power of the whole check.

    python bench/power.py --population issue28        # about 3 minutes on one CPU
    python bench/power.py --population mixed

Each simulated check draws fresh rollouts on both sides (M a task each) and judges them
with :func:`silo_regress.stats.verdicts.judge_tasks`, the gate as shipped (suite-gate
"fail", alpha 0.05). Per cell it gives the share of checks that

- per-task alone: any task whose Holm-adjusted Fisher p is at most alpha (no suite test);
- suite alone: the exact stratified test of decline rejects at alpha (no other test);
- gate as shipped: the check fails. Its global step rejects when the stratified test has
  p <= 0.9 alpha or the smallest task p times the number of tasks is <= 0.1 alpha; a
  task is a regression only after that, by Holm at alpha (docs/statistics.md).

Under "no change" every figure is a false-alarm rate. Populations:

- issue28: 50 tasks; 15 never pass, 10 always pass, 25 spread evenly over pass rates
  0.25, 0.5 and 0.75 (9, 8, 8).
- mixed: 60 tasks of an agent that is mostly good: 24 at 0.95, 18 at 0.8, 12 at 0.5,
  6 at 0.1.

Alternatives: no change; a broken tool (15% of the tasks that ever pass, rounded, chosen
afresh in every check, now never pass); every task that ever passes drops by 0.1.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Callable

from silo_regress.stats.tally import Tally
from silo_regress.stats.verdicts import Evidence, Policy, judge_tasks

POPULATIONS = {
    "issue28": [0.0] * 15 + [1.0] * 10 + [0.25] * 9 + [0.5] * 8 + [0.75] * 8,
    "mixed": [0.95] * 24 + [0.8] * 18 + [0.5] * 12 + [0.1] * 6,
}
Alternative = Callable[[list[float], random.Random], list[float]]


def _no_change(rates: list[float], rng: random.Random) -> list[float]:
    return list(rates)


def _broken_tool(rates: list[float], rng: random.Random) -> list[float]:
    passing = [i for i, r in enumerate(rates) if r > 0]
    broken = set(rng.sample(passing, round(0.15 * len(passing))))
    return [0.0 if i in broken else r for i, r in enumerate(rates)]


def _drop(rates: list[float], rng: random.Random) -> list[float]:
    return [max(0.0, r - 0.1) if r > 0 else r for r in rates]


ALTERNATIVES: dict[str, Alternative] = {
    "no change (false alarms)": _no_change,
    "a broken tool: 15% of the tasks that ever pass now never pass": _broken_tool,
    "every task that ever passes drops by 0.1": _drop,
}


def _draw(rng: random.Random, rate: float, rollouts: int) -> Tally:
    return Tally(rollouts=rollouts, passed=sum(rng.random() < rate for _ in range(rollouts)))


def simulate(
    rates: list[float], alternative: Alternative, *, m: int, checks: int, seed: int
) -> tuple[float, float, float]:
    """(per-task alone, suite alone, gate as shipped): the share of checks that flag."""
    rng = random.Random(seed)
    policy = Policy()
    tasks = suite = gate = 0
    for _ in range(checks):
        after = alternative(rates, rng)
        evidence = [
            Evidence(f"T{i}", _draw(rng, before, m), _draw(rng, now, m))
            for i, (before, now) in enumerate(zip(rates, after, strict=True))
        ]
        judged = judge_tasks(evidence, policy)
        tasks += any(
            t.p_adjusted is not None and t.p_adjusted <= policy.alpha for t in judged.tasks
        )
        p_suite = judged.suite.p_decline
        suite += p_suite is not None and p_suite <= policy.alpha
        gate += judged.failed
    return tasks / checks, suite / checks, gate / checks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--population", choices=sorted(POPULATIONS), default="issue28")
    parser.add_argument("--checks", type=int, default=2000, help="simulated checks a cell")
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--m", type=int, nargs="+", default=[4, 8, 16])
    args = parser.parse_args()
    rates = POPULATIONS[args.population]
    error = 1 / math.sqrt(args.checks)  # 2 standard errors at a share of 0.5
    print(f"population {args.population}: {len(rates)} tasks, {args.checks} checks a cell, ")
    print(f"seed {args.seed}, alpha 0.05 (each figure good to about {error:.3f})\n")
    print(
        "| alternative | M a task | per-task Fisher + Holm | suite (stratified) | gate as shipped |"
    )
    print("|---|---|---|---|---|")
    started = time.monotonic()
    for number, (name, alternative) in enumerate(ALTERNATIVES.items()):
        cells = [
            simulate(rates, alternative, m=m, checks=args.checks, seed=args.seed + 100 * number + m)
            for m in args.m
        ]
        columns = [" / ".join(f"{cell[i]:.3f}" for cell in cells) for i in range(3)]
        ms = " / ".join(str(m) for m in args.m)
        print(f"| {name} | {ms} | {' | '.join(columns)} |", flush=True)
    print(f"\n{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
