"""Paired benchmarks of ``check`` against what a user would write instead (bench/README.md).

    python bench/scale.py                          # every case, 9 pairs, both CPUs
    python bench/scale.py --cpus 0                 # the same on one CPU (taskset -c 0)
    python bench/scale.py --case no-cache --runs 5000,20000 --pairs 15
    python bench/scale.py --against /tmp/old   # this tree against another, in rotating rounds

Cases, the CI case first:
- ``no-cache``: no run-index cache (a fresh clone where ``.silo/`` is git-ignored); the
  cache is deleted before every timed ``check``. Files are in the page cache.
- ``warm``: the run-index cache is there and up to date.
- ``page-cache-dropped``: as no-cache, with the kernel's page cache dropped before each
  timed command (root only; slows every other process on the machine, so not in "all").
- ``start-up``: ``check`` on a 1-task project against ``python -c "import orjson"``.

Canonicalization throughput has its own script, bench/canonical.py (in-process).

Every figure is a ratio to the reference run beside it: A B A B, ``--pairs`` pairs, the
median and the minimum of the per-pair ratios. On a shared machine the ratio is what is
robust; the seconds are given for scale only. Bytecode is cached for both sides (as an
installed package has it): PYTHONDONTWRITEBYTECODE is removed, PYTHONPYCACHEPREFIX set,
and each side runs once untimed first. Peak memory is measured from outside the process
by ``/usr/bin/time -f %M``: the maximum RSS of the measured process, or of its largest
process when ``check`` splits its work with a forked child (the two are not summed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import project  # noqa: E402

CACHE_FILE = ".silo-regress-cache"
CASE_LABELS = {
    "no-cache": "no run-index cache (CI)",
    "warm": "warm (run-index cache up to date)",
    "page-cache-dropped": "page cache cold (no run-index cache)",
}

# What a user would write instead of silo-regress: read every run.json, pick each task's
# newest run, byte-compare its files with the baselines.
BARE_LOOP = textwrap.dedent(
    """
    import json, os, sys
    root = sys.argv[1]
    runs_dir = os.path.join(root, ".silo", "runs")
    newest = {}
    for name in os.listdir(runs_dir):
        try:
            with open(os.path.join(runs_dir, name, "run.json"), "rb") as f:
                meta = json.loads(f.read())
        except (OSError, ValueError):
            continue
        key = (meta["environment"], meta["taskId"])
        if key not in newest or (meta["startedAt"], name) > newest[key]:
            newest[key] = (meta["startedAt"], name)
    same = 0
    for (_, task), (_, name) in newest.items():
        for artifact in ("result.json", "state-diff.json"):
            with open(os.path.join(runs_dir, name, artifact), "rb") as f:
                run = f.read()
            with open(os.path.join(root, "baselines", f"{task}.{artifact}"), "rb") as f:
                same += run == f.read()
    print(same)
    """
)


def bench_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = env.get("PYTHONPYCACHEPREFIX", "/tmp/silo-regress-bench-pycache")
    return env


def check_command() -> list[str]:
    script = Path(sys.executable).with_name("silo-regress")
    return [str(script)] if script.exists() else [sys.executable, "-m", "silo_regress"]


class Side:
    """One command to time, with what to do (untimed) before each run."""

    def __init__(
        self, argv: list[str], *, cwd: Path, before: Callable[[], None] = lambda: None
    ) -> None:
        self.argv, self.cwd, self.before = argv, cwd, before

    def run(self, prefix: list[str], env: dict[str, str]) -> float:
        self.before()
        start = time.perf_counter()
        done = subprocess.run(
            [*prefix, *self.argv], cwd=self.cwd, env=env, capture_output=True, text=True
        )
        elapsed = time.perf_counter() - start
        if done.returncode not in (0, 1):
            raise SystemExit(f"{self.argv} failed ({done.returncode}):\n{done.stderr[-2000:]}")
        return elapsed

    def peak_kib(self, prefix: list[str], env: dict[str, str]) -> int | None:
        timer = shutil.which("time", path="/usr/bin")
        if timer is None:
            return None
        self.before()
        done = subprocess.run(
            [timer, "-f", "%M", *prefix, *self.argv],
            cwd=self.cwd,
            env=env,
            capture_output=True,
            text=True,
        )
        lines = done.stderr.strip().splitlines()
        return int(lines[-1]) if lines and lines[-1].isdigit() else None


def paired(a: Side, b: Side, *, pairs: int, prefix: list[str]) -> dict[str, object]:
    env = bench_env()
    a.run(prefix, env)  # compiles bytecode, fills the page cache
    b.run(prefix, env)
    times_a, times_b, ratios = [], [], []
    for _ in range(pairs):
        ta = a.run(prefix, env)
        tb = b.run(prefix, env)
        times_a.append(ta)
        times_b.append(tb)
        ratios.append(ta / tb)
    return {
        "ratio median": round(statistics.median(ratios), 2),
        "ratio min": round(min(ratios), 2),
        "check s median": round(statistics.median(times_a), 3),
        "check s min": round(min(times_a), 3),
        "reference s median": round(statistics.median(times_b), 3),
        "reference s min": round(min(times_b), 3),
        "check peak RSS MiB": _mib(a.peak_kib(prefix, env)),
        "reference peak RSS MiB": _mib(b.peak_kib(prefix, env)),
    }


def _mib(kib: int | None) -> float | None:
    return None if kib is None else round(kib / 1024, 1)


def drop_page_cache() -> None:
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def scale_case(case: str, runs: int, *, pairs: int, prefix: list[str]) -> dict[str, object]:
    root = project(tasks=1000, runs=runs)
    cache = root / ".silo" / "runs" / CACHE_FILE

    def no_cache() -> None:
        cache.unlink(missing_ok=True)

    def dropped() -> None:
        cache.unlink(missing_ok=True)
        drop_page_cache()

    before = {"no-cache": no_cache, "warm": lambda: None, "page-cache-dropped": dropped}[case]
    if case == "warm":
        subprocess.run([*check_command(), "check"], cwd=root, env=bench_env(), capture_output=True)
    check = Side([*check_command(), "check"], cwd=root, before=before)
    bare_before = drop_page_cache if case == "page-cache-dropped" else (lambda: None)
    bare = Side([sys.executable, "-c", BARE_LOOP, str(root)], cwd=root, before=bare_before)
    return paired(check, bare, pairs=pairs, prefix=prefix)


def startup_case(*, pairs: int, prefix: list[str]) -> dict[str, object]:
    root = project(tasks=1, runs=1)
    check = Side([*check_command(), "check"], cwd=root)
    orjson_only = Side([sys.executable, "-c", "import orjson"], cwd=root)
    return paired(check, orjson_only, pairs=pairs, prefix=prefix)


def against_case(
    case: str, runs: int, tree: Path, *, rounds: int, prefix: list[str]
) -> dict[str, object]:
    """``check`` of this tree and of ``tree`` (``git archive REV | tar -x -C tree``) and
    the bare loop, in rounds whose order turns (now, before, loop; before, loop, now; ...):
    the change measured under one load. Warm: each tree keeps its own run-index cache
    (the formats differ), moved into place before its run."""
    root = project(tasks=1000, runs=runs) if case != "start-up" else project(tasks=1, runs=1)
    cache = root / ".silo" / "runs" / CACHE_FILE
    env = bench_env()
    envs = {"now": env, "before": dict(env, PYTHONPATH=str(tree)), "loop": env}
    kept = {"now": root / ".scale-cache-now", "before": root / ".scale-cache-before"}
    reference = (
        [sys.executable, "-c", BARE_LOOP, str(root)]
        if case != "start-up"
        else [sys.executable, "-c", "import orjson"]
    )
    argv = {"now": [*check_command(), "check"], "before": [*check_command(), "check"]}
    argv["loop"] = reference

    def run(side: str) -> float:
        if case == "no-cache":
            cache.unlink(missing_ok=True)
        elif case == "warm" and side in kept:
            if kept[side].exists():
                os.replace(kept[side], cache)
            else:
                cache.unlink(missing_ok=True)
        start = time.perf_counter()
        done = subprocess.run([*prefix, *argv[side]], cwd=root, env=envs[side], capture_output=True)
        elapsed = time.perf_counter() - start
        if done.returncode not in (0, 1):
            raise SystemExit(f"{side} failed ({done.returncode}):\n{done.stderr[-2000:]!r}")
        if case == "warm" and side in kept and cache.exists():
            os.replace(cache, kept[side])
        return elapsed

    order = ["now", "before", "loop"]
    for side in order * 2:  # bytecode, page cache, each tree's own cache
        run(side)
    times: dict[str, list[float]] = {side: [] for side in order}
    for n in range(rounds):
        for side in order[n % 3 :] + order[: n % 3]:
            times[side].append(run(side))

    def ratio(a: str, b: str) -> float:
        return round(statistics.median(x / y for x, y in zip(times[a], times[b], strict=True)), 2)

    return {
        "now / before median": ratio("now", "before"),
        "now / before min": round(
            min(x / y for x, y in zip(times["now"], times["before"], strict=True)), 2
        ),
        "now / reference": ratio("now", "loop"),
        "before / reference": ratio("before", "loop"),
        "now s median": round(statistics.median(times["now"]), 3),
        "before s median": round(statistics.median(times["before"]), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--case",
        choices=["all", "no-cache", "warm", "page-cache-dropped", "start-up"],
        default="all",
    )
    parser.add_argument("--runs", default="5000,20000,100000", help="run counts, comma-separated")
    parser.add_argument("--pairs", type=int, default=9)
    parser.add_argument("--cpus", help="run both sides under taskset -c CPUS (e.g. 0)")
    parser.add_argument(
        "--against", type=Path, help="another source tree: now / before, in rotating rounds"
    )
    args = parser.parse_args()
    prefix = ["taskset", "-c", args.cpus] if args.cpus else []
    cpus = f"taskset -c {args.cpus}" if args.cpus else f"{len(os.sched_getaffinity(0))} CPUs"
    print(f"# {cpus}, {args.pairs} pairs A B A B, shared machine: read the ratios", flush=True)
    cases = ["no-cache", "warm", "start-up"] if args.case == "all" else [args.case]
    if args.against is not None:
        for case in cases:
            counts = [1] if case == "start-up" else [int(r) for r in args.runs.split(",")]
            for runs in counts:
                figures = against_case(
                    case, runs, args.against, rounds=max(args.pairs, 3), prefix=prefix
                )
                label = CASE_LABELS.get(case, "start-up (reference: import orjson)")
                print(f"{label}, {runs} runs, this tree against {args.against}: {figures}")
        return
    for case in cases:
        if case == "start-up":
            figures = startup_case(pairs=args.pairs, prefix=prefix)
            print(f"start-up, check / import orjson: {figures}")
        else:
            for runs in (int(r) for r in args.runs.split(",")):
                figures = scale_case(case, runs, pairs=args.pairs, prefix=prefix)
                label = CASE_LABELS[case]
                print(f"{label}, 1000 tasks, {runs} runs, check / bare loop: {figures}", flush=True)


if __name__ == "__main__":
    main()
