"""Benchmark the runner: its cost per rollout beyond Silo's own time, and parallel wall time.

    python bench/runner.py [--rollouts 50] [--existing 1000] [--sleepers 20] [--sleep 1]
    python bench/runner.py --against /work/main [--pairs 4]     # paired A/B of two checkouts

With ``--against DIR`` only the overhead figure (1.) is taken, for this checkout
and DIR's alternately (A B A B, --pairs times, each in a fresh process with
that checkout first on sys.path), and medians, minimums and the median ratio are
printed: ratios are robust to a machine shared with other work. Run it under
``taskset -c 0`` as well for the one-CPU figure.

1. Overhead per rollout. The stand-in is tests/fake_silo.py with no sleep (a Python
   start plus four small files: "Silo's own time"). It is started --rollouts times
   in a row, directly with subprocess (the floor), then as many rollouts through
   ``runner.execute`` with one job, in a project with no runs and in one with
   --existing old runs (the runner lists the runs directory around every
   rollout). Overhead = (runner time - direct time) / rollouts. The same figure
   is also taken from the runner's own clock: batch time minus the time each
   rollout's process was alive.
2. Parallel wall time: ``silo-regress run -j 2`` over --sleepers tasks whose
   stand-in sleeps --sleep seconds, timed as a whole process (start-up included).
   Ideal: sleepers * sleep / 2.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAKE_SILO = ROOT / "tests" / "support" / "fake_silo.py"
SILO_REGRESS = Path(sys.executable).with_name("silo-regress")

if "--tree" in sys.argv:  # the inner process of --against: measure that checkout
    sys.path.insert(0, sys.argv[sys.argv.index("--tree") + 1])
else:
    sys.path.insert(0, str(ROOT))

from silo_regress import runner  # noqa: E402
from silo_regress.project.config import load_config  # noqa: E402
from silo_regress.project.taskref import TaskRef  # noqa: E402


def make_project(root: Path, *, existing: int) -> Path:
    root.mkdir(parents=True)
    command = json.dumps([sys.executable, str(FAKE_SILO)])
    (root / "pyproject.toml").write_text(
        f'[tool.silo-regress]\nsilo-command = {command}\nenvironment = "crm-west"\n'
    )
    runs = root / ".silo" / "runs"
    runs.mkdir(parents=True)
    for i in range(existing):
        run = runs / f"run_20260316{i:06d}_old"
        run.mkdir()
        meta = {
            "runId": run.name,
            "environment": "crm-west",
            "taskId": f"TASK-{i % 100:03d}",
            "startedAt": "2026-03-16T10:00:00.000Z",
        }
        (run / "run.json").write_text(json.dumps(meta, indent=2) + "\n")
    return root


def time_direct(project: Path, rollouts: int) -> float:
    argv = [sys.executable, str(FAKE_SILO), "run", "--env", "crm-west", "--task", "TASK-001"]
    start = time.perf_counter()
    for _ in range(rollouts):
        subprocess.run(argv, cwd=project, check=True, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    return time.perf_counter() - start


def time_runner(project: Path, rollouts: int) -> tuple[float, float]:
    config = load_config(project)
    task = runner.Task(TaskRef("TASK-001"), "crm-west", "TASK-001")
    planned = runner.prepare_rollouts(config, [task], repeat=rollouts)
    start = time.perf_counter()
    batch = runner.execute(config, planned, jobs=1)
    wall = time.perf_counter() - start
    assert len(batch.runs[task.key]) == rollouts, "every rollout's run was collected"
    alive = sum(o.seconds for o in batch.outcomes)
    return wall, wall - alive


def measure_once(rollouts: int, existing: int) -> dict[str, float]:
    """One direct series and one runner series in a fresh project; seconds per rollout."""
    with tempfile.TemporaryDirectory() as tmp:
        project = make_project(Path(tmp) / "p", existing=existing)
        direct = time_direct(project, rollouts)
        wall, gap = time_runner(project, rollouts)
    return {
        "direct": direct / rollouts,
        "runner": wall / rollouts,
        "overhead": (wall - direct) / rollouts,
        "own": gap / rollouts,
    }


def paired(other: Path, rollouts: int, existing: int, pairs: int) -> None:
    """This checkout (B) against ``other`` (A), alternately, one fresh process each."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    figures: dict[str, list[dict[str, float]]] = {"A": [], "B": []}
    with tempfile.TemporaryDirectory() as cache:
        env["PYTHONPYCACHEPREFIX"] = cache
        for _ in range(pairs):
            for side, tree in (("A", other), ("B", ROOT)):
                argv = [sys.executable, __file__, "--tree", str(tree), "--inner"]
                argv += ["--rollouts", str(rollouts), "--existing", str(existing)]
                done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
                figures[side].append(json.loads(done.stdout))
    ms = {side: [f["overhead"] * 1000 for f in runs] for side, runs in figures.items()}
    own = {side: [f["own"] * 1000 for f in runs] for side, runs in figures.items()}
    ratio = statistics.median(
        (b["runner"] / a["runner"]) for a, b in zip(figures["A"], figures["B"], strict=True)
    )
    cpus = len(os.sched_getaffinity(0))
    print(
        f"{rollouts} rollouts x {pairs} pairs, {existing} old runs, {cpus} CPU(s): "
        f"overhead per rollout A {statistics.median(ms['A']):.2f} ms "
        f"(min {min(ms['A']):.2f}, own clock {statistics.median(own['A']):.2f}), "
        f"B {statistics.median(ms['B']):.2f} ms (min {min(ms['B']):.2f}, own clock "
        f"{statistics.median(own['B']):.2f}); runner time per rollout B/A {ratio:.3f}"
    )


def overhead(rollouts: int, existing: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        direct, through, own = [], [], []
        for i in range(rounds):
            project = make_project(Path(tmp) / f"p{i}", existing=existing)
            direct.append(time_direct(project, rollouts))
            wall, gap = time_runner(project, rollouts)
            through.append(wall)
            own.append(gap)
        d, r, g = (statistics.median(x) for x in (direct, through, own))
        print(
            f"{rollouts} rollouts, {existing} old runs: direct {d / rollouts * 1000:.1f} ms "
            f"per rollout, through the runner {r / rollouts * 1000:.1f} ms; overhead "
            f"{(r - d) / rollouts * 1000:.1f} ms per rollout "
            f"(runner's own clock: {g / rollouts * 1000:.1f} ms)"
        )


def parallel(sleepers: int, sleep: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        project = make_project(Path(tmp) / "p", existing=0)
        tasks = [f"TASK-{i:03d}" for i in range(1, sleepers + 1)]
        env = {**os.environ, "FAKE_SILO_SLEEP": str(sleep)}
        env.pop("FAKE_SILO_CONTROL", None)
        start = time.perf_counter()
        done = subprocess.run(
            [str(SILO_REGRESS), "--project", str(project), "run", "-j", "2", *tasks],
            env=env,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - start
        assert done.returncode == 0, done.stderr
        ideal = sleepers * sleep / 2
        print(
            f"silo-regress run -j 2, {sleepers} rollouts sleeping {sleep:g} s: {wall:.2f} s "
            f"(ideal {ideal:.2f} s, +{wall - ideal:.2f} s)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=50)
    parser.add_argument("--existing", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sleepers", type=int, default=20)
    parser.add_argument("--sleep", type=float, default=1.0)
    parser.add_argument("--against", type=Path, help="another checkout, measured paired")
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--tree", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        where = Path(runner.__file__).resolve()
        assert args.tree.resolve() in where.parents, f"measured {where}, not {args.tree}"
        print(json.dumps(measure_once(args.rollouts, args.existing)))
        return
    if args.against is not None:
        for existing in (0, args.existing):
            paired(args.against, args.rollouts, existing, args.pairs)
        return
    overhead(args.rollouts, 0, args.rounds)
    overhead(args.rollouts, args.existing, args.rounds)
    parallel(args.sleepers, args.sleep)


if __name__ == "__main__":
    main()
