"""Rollouts to a verdict: a fixed M against ``--repeat-until-decided`` (issue 22).

    python bench/sequential.py                 # under a second: the figures are exact

For each baseline pass rate p0 (0.95, 0.9, 0.7) both designs are built for the same
guaranteed error rates: at most alpha = 0.05 false regressions at p0, at least 80% of
drops of 0.15 caught. The fixed design is the smallest M whose one-sided exact binomial
test has both; the sequential one is Wald's SPRT of p0 against p0 - 0.15 calibrated by
:func:`silo_regress.stats.sequential.calibrated_design` until its exact error rates have
both, capped at 2 M rollouts (undecided there is ``suspect``), looking after every
rollout or every round of 4. Mean rollouts, false alarms and power are computed exactly
by dynamic programming (no simulation), for true drops of 0, 0.15 and 0.3. Both designs
take p0 as known (the baseline tally's rate); see docs/statistics.md.
"""

from __future__ import annotations

import argparse
import math

from silo_regress.stats.sequential import calibrated_design, fixed_design, operating_characteristic

RATES = (0.95, 0.9, 0.7)
DROPS = (0.0, 0.15, 0.3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.2)
    parser.add_argument("--rounds", type=int, nargs="+", default=[1, 4])
    args = parser.parse_args()
    ratios: dict[int, list[float]] = {r: [] for r in args.rounds}
    head = " | ".join(f"SPRT, rounds of {r}: mean (ratio)" for r in args.rounds)
    print(f"| p0 | drop | fixed M | {head} | SPRT regression chance (rounds of 1) |")
    print("|---|---|---|" + "---|" * len(args.rounds) + "---|")
    for p0 in RATES:
        fixed = fixed_design(p0, p0 - 0.15, alpha=args.alpha, beta=args.beta)
        designs = {
            r: calibrated_design(
                p0,
                p0 - 0.15,
                alpha=args.alpha,
                beta=args.beta,
                round_size=r,
                max_rollouts=2 * fixed.rollouts,
            )
            for r in args.rounds
        }
        for drop in DROPS:
            cells = []
            chance = 0.0
            for r, design in designs.items():
                oc = operating_characteristic(design, rate=p0 - drop)
                ratios[r].append(oc.mean_rollouts / fixed.rollouts)
                cells.append(f"{oc.mean_rollouts:.1f} ({oc.mean_rollouts / fixed.rollouts:.2f})")
                if r == args.rounds[0]:
                    chance = oc.regression
            print(f"| {p0} | {drop} | {fixed.rollouts} | {' | '.join(cells)} | {chance:.3f} |")
    print()
    for r, values in ratios.items():
        mean = math.fsum(values) / len(values)
        print(
            f"rounds of {r}: mean ratio, sequential / fixed rollouts, over the 9 cases: {mean:.3f}"
        )


if __name__ == "__main__":
    main()
