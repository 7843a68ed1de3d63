"""Which commit made the agent worse: bisect's change point against what teams do (issue 34).

    python bench/bisection.py targets             # the two target rows, ~1 min
    python bench/bisection.py grid --trials 200   # the calibration grid, 27 cells
    python bench/bisection.py real                # a few runs of the real command, ~1 min

A simulated agent passes at ``good`` before a known culprit commit (drawn uniformly from
the n commits after the good one) and at ``good - drop`` from it on. Each trial runs, on
the same history and the same draws of the culprit:

- ``changepoint``: :mod:`silo_regress.stats.changepoint` as ``silo-regress bisect`` drives
  it: rounds of 5 rollouts at the commit of most expected information, stop at the
  stated confidence (0.95) with rollouts on both sides of the culprit, or at the budget
  (2000 rollouts; ``undecided``, never counted right);
- ``plain``: git bisect with one rollout a step (a pass is good);
- ``vote10``: 10 rollouts a step, good when the pass rate is at least the midpoint of the
  two true rates (an oracle threshold: the best a fixed vote can do);
- ``sprt``: the 0.3 per-step sequential test (stats/sequential.py calibrated_design,
  p0 = the true good rate, p1 = p0 - 0.3, alpha 0.05, beta 0.2, rounds of 5, cap 100;
  undecided is good, as the gate never fails an undecided task).

The grid gives no method evidence for free (no baseline tally at good, no failing check
at bad): the change point tests the ends itself, and its rollouts are all counted. The
targets add a row ``changepoint, in hand``: the same engine given what a stats task
usually has when bisect starts, a baseline tally of 20 rollouts at good and the failing
check's 10 at bad (free, not counted). Seeds are fixed: the same command prints the same
figures.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from silo_regress.stats import changepoint as changepoint_module
from silo_regress.stats.changepoint import Counts, assess, choose
from silo_regress.stats.intervals import wilson
from silo_regress.stats.sequential import Decision, Design, calibrated_design

ROUND = 5
BUDGET = 2000
CONFIDENCE = 0.95
# What a stats task usually has before bisect starts: a baseline tally of 20 rollouts at
# good and the failing check's 10 rollouts at bad (free: not counted in the rollouts).
IN_HAND = (20, 10)


@dataclass(frozen=True)
class Trial:
    found: int | None  # None: undecided
    rollouts: int
    rounds: int


def changepoint(
    n: int,
    culprit: int,
    good: float,
    bad: float,
    rng: random.Random,
    *,
    confidence: float,
    in_hand: tuple[int, int] = (0, 0),
) -> Trial:
    counts = Counts.empty(n + 1)
    # Evidence in hand, free: the baseline tally at good, the failing check's rollouts at bad.
    at_good, at_bad = in_hand
    counts = counts.add(
        0, passed=sum(rng.random() < good for _ in range(at_good)), rollouts=at_good
    )
    counts = counts.add(n, passed=sum(rng.random() < bad for _ in range(at_bad)), rollouts=at_bad)
    used = rounds = 0
    while used + ROUND <= BUDGET:
        finding = assess(counts, confidence=confidence)
        if finding.decided:
            return Trial(finding.culprit, used, rounds)
        j = choose(counts, round_size=ROUND)
        rate = bad if j >= culprit else good
        passes = sum(rng.random() < rate for _ in range(ROUND))
        counts = counts.add(j, passed=passes, rollouts=ROUND)
        used += ROUND
        rounds += 1
    return Trial(None, used, rounds)


def binary(n: int, culprit: int, is_good: Callable[[int], tuple[bool, int]]) -> Trial:
    """git bisect: the first bad commit between 0 (good) and n (bad)."""
    low, high, used, steps = 0, n, 0, 0
    while high - low > 1:
        mid = (low + high) // 2
        good, spent = is_good(mid)
        used += spent
        steps += 1
        low, high = (mid, high) if good else (low, mid)
    return Trial(high, used, steps)


def plain(n: int, culprit: int, good: float, bad: float, rng: random.Random) -> Trial:
    return binary(n, culprit, lambda j: (rng.random() < (bad if j >= culprit else good), 1))


def vote10(n: int, culprit: int, good: float, bad: float, rng: random.Random) -> Trial:
    def step(j: int) -> tuple[bool, int]:
        rate = bad if j >= culprit else good
        passes = sum(rng.random() < rate for _ in range(10))
        return passes / 10 >= (good + bad) / 2, 10

    return binary(n, culprit, step)


def sprt(
    n: int, culprit: int, good: float, bad: float, rng: random.Random, *, design: Design
) -> Trial:
    def step(j: int) -> tuple[bool, int]:
        rate = bad if j >= culprit else good
        passed = rollouts = 0
        for look in design.looks():
            while rollouts < look:
                passed += rng.random() < rate
                rollouts += 1
            decision = design.decide(passed, rollouts)
            if decision is not Decision.CONTINUE:
                return decision is Decision.STABLE, rollouts
        return True, rollouts

    return binary(n, culprit, step)


@dataclass(frozen=True)
class Summary:
    wrong: float
    undecided: float
    mean: float
    p95: float
    rounds: float


def summarise(trials: list[Trial], culprits: list[int]) -> Summary:
    wrong = sum(t.found is not None and t.found != c for t, c in zip(trials, culprits, strict=True))
    undecided = sum(t.found is None for t in trials)
    used = sorted(t.rollouts for t in trials)
    return Summary(
        wrong / len(trials),
        undecided / len(trials),
        statistics.fmean(used),
        used[min(len(used) - 1, math.ceil(0.95 * len(used)) - 1)],
        statistics.fmean(t.rounds for t in trials),
    )


def cell(
    n: int,
    good: float,
    drop: float,
    trials: int,
    *,
    seed: int,
    others: bool,
    confidence: float,
    in_hand: tuple[int, int] = (0, 0),
) -> dict[str, Summary]:
    bad = good - drop
    rng = random.Random(f"{seed}/{n}/{good}/{drop}")
    culprits = [rng.randint(1, n) for _ in range(trials)]
    found: dict[str, list[Trial]] = {"changepoint": []}
    for c in culprits:
        found["changepoint"].append(
            changepoint(n, c, good, bad, rng, confidence=confidence, in_hand=in_hand)
        )
    if others:
        design = calibrated_design(good, max(good - 0.3, 0.01), round_size=ROUND, max_rollouts=100)
        found["plain"] = [plain(n, c, good, bad, rng) for c in culprits]
        found["vote10"] = [vote10(n, c, good, bad, rng) for c in culprits]
        found["sprt"] = [sprt(n, c, good, bad, rng, design=design) for c in culprits]
    return {name: summarise(ts, culprits) for name, ts in found.items()}


def targets(args: argparse.Namespace) -> None:
    print(f"trials per row: {args.trials}, seed {args.seed}, confidence {args.confidence}")
    print("| commits | rates | method | wrong | undecided | mean rollouts | p95 | mean rounds |")
    print("|---|---|---|---|---|---|---|---|")
    for n in (32, 128):
        began = time.process_time()
        row = cell(
            n, 0.9, 0.3, args.trials, seed=args.seed, others=True, confidence=args.confidence
        )
        hand = cell(
            n,
            0.9,
            0.3,
            args.trials,
            seed=args.seed,
            others=False,
            confidence=args.confidence,
            in_hand=IN_HAND,
        )
        row["changepoint, in hand"] = hand["changepoint"]
        for name, s in row.items():
            print(
                f"| {n} | 0.9 -> 0.6 | {name} | {s.wrong:.1%} | {s.undecided:.1%} | "
                f"{s.mean:.0f} | {s.p95:.0f} | {s.rounds:.1f} |"
            )
        print(f"<!-- {n} commits: {time.process_time() - began:.0f} s CPU -->")


def grid(args: argparse.Namespace) -> None:
    allowed = 1 - args.confidence
    print(
        f"trials per cell: {args.trials}, seed {args.seed}, confidence {args.confidence}, "
        f"stop at posterior {1 - (1 - args.confidence) * args.slack:g}"
    )
    print("| commits | good | drop | wrong | 95% upper | undecided | mean rollouts | p95 | ok |")
    print("|---|---|---|---|---|---|---|---|---|")
    failures = 0
    began = time.process_time()
    for n in args.commits:
        for good in args.goods:
            for drop in args.drops:
                s = cell(
                    n,
                    good,
                    drop,
                    args.trials,
                    seed=args.seed,
                    others=False,
                    confidence=args.confidence,
                )["changepoint"]
                ok = s.wrong <= allowed
                failures += not ok
                print(
                    f"| {n} | {good} | {drop} | {s.wrong:.1%} | "
                    f"{wilson(round(s.wrong * args.trials), args.trials).high:.1%} | "
                    f"{s.undecided:.1%} | "
                    f"{s.mean:.0f} | {s.p95:.0f} | {'yes' if ok else 'NO'} |",
                    flush=True,
                )
    print(f"cells above {allowed:.0%} wrong: {failures}; {time.process_time() - began:.0f} s CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["targets", "grid", "real"])
    parser.add_argument("--trials", type=int, default=300)
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--confidence", type=float, default=CONFIDENCE)
    parser.add_argument("--commits", type=int, nargs="+", default=[8, 32, 128])
    parser.add_argument("--goods", type=float, nargs="+", default=[0.95, 0.9, 0.7])
    parser.add_argument("--drops", type=float, nargs="+", default=[0.15, 0.3, 0.5])
    parser.add_argument(
        "--slack",
        type=float,
        default=changepoint_module.SLACK,
        help="stop at posterior 1 - (1 - confidence) * SLACK (1: at the confidence itself)",
    )
    args = parser.parse_args()
    changepoint_module.SLACK = args.slack
    if args.what == "targets":
        targets(args)
    elif args.what == "grid":
        grid(args)
    else:
        import bisect_real  # bench/bisect_real.py: on sys.path as this script's folder

        bisect_real.main(args)


if __name__ == "__main__":
    main()
