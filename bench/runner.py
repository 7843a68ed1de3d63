"""Benchmark the runner: its cost per rollout beyond Silo's own time, and parallel wall time.

    python bench/runner.py [--rollouts 50] [--existing 1000] [--sleepers 20] [--sleep 1]

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
FAKE_SILO = ROOT / "tests" / "fake_silo.py"
SILO_REGRESS = Path(sys.executable).with_name("silo-regress")

sys.path.insert(0, str(ROOT))

from silo_regress import runner  # noqa: E402
from silo_regress.config import load_config  # noqa: E402
from silo_regress.taskref import TaskRef  # noqa: E402


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
    args = parser.parse_args()
    overhead(args.rollouts, 0, args.rounds)
    overhead(args.rollouts, args.existing, args.rounds)
    parallel(args.sleepers, args.sleep)


if __name__ == "__main__":
    main()
