"""Time of a 1,000-task check's decision code (issue 32's speed target: under 50 ms).

    python bench/decision_time.py                    # 5 fresh processes a figure
    taskset -c 0 python bench/decision_time.py       # on one CPU
    python bench/decision_time.py --runs 3 --sizes 2 8

Each figure is the median over ``--runs`` fresh Python processes (cold: the first call
in the process, every cache empty; the modules are imported before the clock starts,
their bytecode compiled once beforehand into a private PYTHONPYCACHEPREFIX, as an
installed package has it) and, in the same processes, the median of five more calls
on the same input (warm: the caches full, but for the tails of the very same suite). Timed:

- ``decide_look`` (stats/groupsequential.py): the sequential check's decision at the
  look where the candidate has M rollouts a task (looks 2, 4, 6, 8 by default; for M
  of 20 and 50 the looks M/4, M/2, 3M/4, M and the last one);
- ``decide_suite`` (stats/verdicts.py): the fixed check's suite decision on M rollouts
  a task, under no change (the costlier case: both tails are computed).

1,000 tasks, baseline tallies of 8 rollouts, candidates drawn at the same rate (seeded),
rates (b) uniform in [0.5, 1] or (a) the published benchmark's pattern (14 tasks at 0,
12 at 0.25, 10 at 0.5, 4 at 0.75, 10 at 1) repeated 20 times. Methods, run back to back
in alternating order in each round (paired):

- ``kronecker``: the stratified test as shipped (Kronecker substitution, exact);
- ``list``: the same exact p by the float list convolution it replaced (no budget);
- ``normal``: the normal approximation (what 0.4 before issue 32 used past its budget,
  which every one of these suites exceeded).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TASKS = 1000
BASELINE_ROLLOUTS = 8
METHODS = ("kronecker", "list", "normal")
WARM_CALLS = 5


def _rates(population: str, rng: random.Random, tasks: int) -> list[float]:
    if population == "a":
        pattern = [0.0] * 14 + [0.25] * 12 + [0.5] * 10 + [0.75] * 4 + [1.0] * 10
        return [pattern[i % len(pattern)] for i in range(tasks)]
    return [rng.uniform(0.5, 1.0) for _ in range(tasks)]


def _use(method: str) -> None:
    """Point the stratified test at ``method`` (in this child process only)."""
    from silo_regress.stats import exact

    if method == "normal":
        exact.CONVOLUTION_BUDGET = 0
    elif method == "list":
        exact._stratified_tail = exact.reference_tail


def _child(args: argparse.Namespace) -> None:
    from silo_regress.stats.groupsequential import SequentialPolicy, decide_look
    from silo_regress.stats.tally import Tally
    from silo_regress.stats.verdicts import Evidence, Policy, decide_suite

    _use(args.method)
    rng = random.Random(args.seed)
    m = args.m
    rates = _rates(args.population, rng, args.tasks)
    evidence = [
        Evidence(
            f"T{i}",
            Tally(BASELINE_ROLLOUTS, sum(rng.random() < r for _ in range(BASELINE_ROLLOUTS))),
            Tally(m, sum(rng.random() < r for _ in range(m))),
        )
        for i, r in enumerate(rates)
    ]
    if m in (2, 4, 6, 8):
        policy, look = SequentialPolicy(), (2, 4, 6, 8).index(m) + 1
    else:
        policy, look = SequentialPolicy(looks=(m // 4, m // 2, 3 * m // 4, m)), 4
    gate = Policy()
    call: Callable[[], Any]
    if args.what == "look":
        call = lambda: decide_look(evidence, policy, look=look)  # noqa: E731
    else:
        call = lambda: decide_suite(evidence, gate)  # noqa: E731
    started = time.perf_counter()
    result: Any = call()
    cold = time.perf_counter() - started
    from silo_regress.stats import exact

    warm = []
    for _ in range(args.warm):
        # warm caches, but not the last suite's own tails (a check asks once)
        exact._both_tails.clear()
        started = time.perf_counter()
        call()
        warm.append(time.perf_counter() - started)
    if args.what == "look":
        said = {"p": result.p_stratified, "decision": str(result.suite)}
    else:
        said = {"p": result.p_decline, "p_up": result.p_increase, "decision": str(result.verdict)}
    print(json.dumps({"cold": cold, "warm": statistics.median(warm) if warm else None, **said}))


def _run_child(
    env: dict[str, str],
    prefix: list[str],
    *,
    method: str,
    what: str,
    population: str,
    m: int,
    tasks: int,
    seed: int,
    warm: int,
) -> dict[str, Any]:
    command = [
        *prefix, sys.executable, __file__, "--child", "--method", method, "--what", what,
        "--population", population, "--m", str(m), "--tasks", str(tasks), "--seed", str(seed),
        "--warm", str(warm),
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--method", choices=METHODS, default="kronecker")
    parser.add_argument("--what", choices=("look", "suite"), default="look")
    parser.add_argument("--population", choices=("a", "b"), default="b")
    parser.add_argument("--m", type=int, default=8)
    parser.add_argument("--warm", type=int, default=WARM_CALLS)
    parser.add_argument("--tasks", type=int, default=TASKS)
    parser.add_argument("--seed", type=int, default=32)
    parser.add_argument("--runs", type=int, default=5, help="fresh processes a figure")
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 4, 8, 20, 50])
    parser.add_argument("--populations", nargs="+", choices=("a", "b"), default=["b", "a"])
    parser.add_argument(
        "--list-up-to", type=int, default=8, help="largest M timed by the list convolution"
    )
    parser.add_argument("--pin", action="store_true", help="run the children on CPU 0")
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cache = tempfile.mkdtemp(prefix="decision-time-pycache-")
    env["PYTHONPYCACHEPREFIX"] = cache
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    prefix = ["taskset", "-c", "0"] if args.pin else []
    cpus = "CPU 0 (taskset)" if args.pin else f"{os.cpu_count()} CPUs"
    print(f"{args.tasks} tasks, baseline tallies of {BASELINE_ROLLOUTS}, seed {args.seed}, ")
    print(f"median of {args.runs} fresh processes, {cpus}, Python {sys.version.split()[0]}\n")
    print(
        "| pop. | M | method | decide_look cold | warm | decide_suite cold | warm "
        "| look p | suite p |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for method in METHODS:  # compile the bytecode into the private prefix once
        _run_child(env, prefix, method=method, what="look", population="b", m=2, tasks=10,
                   seed=1, warm=0)  # fmt: skip
    for population in args.populations:
        for m in args.sizes:
            methods = [x for x in METHODS if x != "list" or m <= args.list_up_to]
            times: dict[tuple[str, str], list[dict[str, Any]]] = {}
            for run in range(args.runs):
                order = methods if run % 2 == 0 else methods[::-1]
                for method in order:
                    for what in ("look", "suite"):
                        # the list convolution's warm calls cost as much as its cold one
                        warm = 1 if method == "list" else args.warm
                        times.setdefault((method, what), []).append(
                            _run_child(
                                env,
                                prefix,
                                method=method,
                                what=what,
                                population=population,
                                m=m,
                                tasks=args.tasks,
                                seed=args.seed,
                                warm=warm,
                            )
                        )
            for method in methods:
                look, suite = times[(method, "look")], times[(method, "suite")]

                def ms(rows: list[dict[str, Any]], key: str) -> str:
                    return f"{1e3 * statistics.median(r[key] for r in rows):.1f}"

                print(
                    f"| ({population}) | {m} | {method} | {ms(look, 'cold')} | {ms(look, 'warm')} "
                    f"| {ms(suite, 'cold')} | {ms(suite, 'warm')} | {look[0]['p']:.6g} "
                    f"({look[0]['decision']}) | {suite[0]['p']:.6g} ({suite[0]['decision']}) |"
                )
            sys.stdout.flush()


if __name__ == "__main__":
    main()
