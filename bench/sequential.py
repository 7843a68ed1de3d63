"""Rollouts to the check's verdict: the sequential check against the fixed M a team runs.

    python bench/sequential.py                       # both populations, 2,000 checks a cell
    python bench/sequential.py --population a --checks 500

Each simulated check draws a population of 50 tasks, a baseline tally of 8 rollouts a
task at its rate, and candidate rollouts at the rate after the change. It is judged

- fixed M: M candidate rollouts a task, the check as shipped in 0.3 (the closed test of
  :mod:`silo_regress.stats.verdicts`: stratified test at 0.9 alpha or m x smallest p at
  0.1 alpha, then Holm); a check fails when its suite or a task fails;
- sequential: :func:`silo_regress.stats.groupsequential.decide_look` after each round
  (looks after 2, 4, 6 and 8 rollouts a task by default), running only the tasks it says
  run; the check fails when the global step rejects (no floor is set and every task has
  a tally, so no other verdict can fail it).

Populations: (a) a published agent benchmark's pass counts at 4 trials, as rates: 14
tasks at 0, 12 at 0.25, 10 at 0.5, 4 at 0.75, 10 at 1; (b) rates drawn uniformly in
[0.5, 1] afresh for each check. Alternatives: no change (every figure a false-alarm
rate); every task down 0.1; a broken tool (a fifth of the tasks that ever pass, chosen
afresh in each check, now never pass).
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from silo_regress.stats.groupsequential import SequentialPolicy, SuiteStep, run_looks
from silo_regress.stats.tally import Tally
from silo_regress.stats.verdicts import Evidence, Policy, decide_suite

BASELINE_ROLLOUTS = 8
TASKS = 50
Population = Callable[[random.Random], list[float]]
Alternative = Callable[[list[float], random.Random], list[float]]


def _population_a(rng: random.Random) -> list[float]:
    return [0.0] * 14 + [0.25] * 12 + [0.5] * 10 + [0.75] * 4 + [1.0] * 10


def _population_b(rng: random.Random) -> list[float]:
    return [rng.uniform(0.5, 1.0) for _ in range(TASKS)]


POPULATIONS: dict[str, Population] = {"a": _population_a, "b": _population_b}


def _no_change(rates: list[float], rng: random.Random) -> list[float]:
    return list(rates)


def _down(rates: list[float], rng: random.Random) -> list[float]:
    return [max(0.0, r - 0.1) for r in rates]


def _broken_tool(rates: list[float], rng: random.Random) -> list[float]:
    passing = [i for i, r in enumerate(rates) if r > 0]
    broken = set(rng.sample(passing, round(0.2 * len(passing))))
    return [0.0 if i in broken else r for i, r in enumerate(rates)]


ALTERNATIVES: dict[str, Alternative] = {
    "no change": _no_change,
    "every task down 0.1": _down,
    "a broken tool": _broken_tool,
}


def _passes(rng: random.Random, rate: float, rollouts: int) -> int:
    return sum(rng.random() < rate for _ in range(rollouts))


@dataclass
class Cell:
    checks: int = 0
    fixed_failed: int = 0
    failed: int = 0
    rollouts: int = 0
    rounds: int = 0
    most: int = 0  # the most rollouts any task ran
    stops: list[int] | None = None


def simulate(
    population: Population,
    alternative: Alternative,
    policy: SequentialPolicy,
    *,
    fixed: int,
    checks: int,
    seed: int,
) -> Cell:
    rng = random.Random(seed)
    cell = Cell(stops=[0] * (len(policy.looks) + 1))
    gate = Policy()
    for _ in range(checks):
        rates = population(rng)
        after = alternative(rates, rng)
        baselines = [Tally(BASELINE_ROLLOUTS, _passes(rng, r, BASELINE_ROLLOUTS)) for r in rates]
        names = [f"T{i}" for i in range(len(rates))]
        fixed_evidence = [
            Evidence(name, base, Tally(fixed, _passes(rng, r, fixed)))
            for name, base, r in zip(names, baselines, after, strict=True)
        ]
        cell.fixed_failed += decide_suite(fixed_evidence, gate).failed

        def passes(i: int, before: int, after_: int, after: list[float] = after) -> int:
            return _passes(rng, after[i], after_ - before)

        done = run_looks(baselines, policy, passes=passes)
        cell.checks += 1
        cell.failed += done.decision.suite is SuiteStep.REJECT
        cell.rollouts += sum(done.made)
        cell.rounds += done.looks
        cell.most = max(cell.most, max(done.made))
        assert cell.stops is not None
        cell.stops[done.looks] += 1
    return cell


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--population", choices=["a", "b", "both"], default="both")
    parser.add_argument("--checks", type=int, default=2000, help="simulated checks a cell")
    parser.add_argument("--seed", type=int, default=32)
    parser.add_argument("--fixed", type=int, default=8, help="the fixed M compared")
    parser.add_argument("--gamma", type=float, default=None)
    parser.add_argument("--futility", type=float, nargs=2, default=None, metavar=("A", "B"))
    parser.add_argument("--looks", type=int, nargs="+", default=None)
    args = parser.parse_args()
    policy = SequentialPolicy()
    if args.gamma is not None:
        policy = SequentialPolicy(
            looks=policy.looks,
            gamma=args.gamma,
            futility_intercept=policy.futility_intercept,
            futility_slope=policy.futility_slope,
        )
    if args.futility is not None:
        policy = SequentialPolicy(
            looks=policy.looks,
            gamma=policy.gamma,
            futility_intercept=args.futility[0],
            futility_slope=args.futility[1],
        )
    if args.looks is not None:
        policy = SequentialPolicy(
            looks=tuple(args.looks),
            gamma=policy.gamma,
            futility_intercept=policy.futility_intercept,
            futility_slope=policy.futility_slope,
        )
    chosen = ["a", "b"] if args.population == "both" else [args.population]
    error = 1 / math.sqrt(args.checks)
    print(
        f"{args.checks} checks a cell, seed {args.seed}, alpha 0.05, looks {list(policy.looks)}, "
        f"gamma {policy.gamma}, futility z = {policy.futility_intercept} + "
        f"{policy.futility_slope} t (each share good to about {error:.3f})\n"
    )
    print(
        f"| population | alternative | fixed M = {args.fixed}: fails | sequential: fails | "
        f"rollouts / fixed M = {args.fixed} | most a task | mean rounds | stopped at look 1..K |"
    )
    print("|---|---|---|---|---|---|---|---|")
    started = time.monotonic()
    for number, name in enumerate(chosen):
        for offset, (alt_name, alternative) in enumerate(ALTERNATIVES.items()):
            cell = simulate(
                POPULATIONS[name],
                alternative,
                policy,
                fixed=args.fixed,
                checks=args.checks,
                seed=args.seed + 100 * number + offset,
            )
            ratio = cell.rollouts / (cell.checks * TASKS * args.fixed)
            stops = " / ".join(f"{s / cell.checks:.2f}" for s in (cell.stops or [])[1:])
            print(
                f"| ({name}) | {alt_name} | {cell.fixed_failed / cell.checks:.3f} | "
                f"{cell.failed / cell.checks:.3f} | {ratio:.3f} | {cell.most} | "
                f"{cell.rounds / cell.checks:.2f} | {stops} |",
                flush=True,
            )
    print(f"\n{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
