"""Start-up and warm check of two checkouts, paired: is this version slower than another?

    python bench/startup.py --against /tmp/silo-regress-0.1 [--pairs 10] [--tasks 1000]
    taskset -c 0 python bench/startup.py --against /tmp/silo-regress-0.1   # one CPU

Two cases, each `silo-regress check` as its own process, start-up included, as the
pre-commit hook pays it:

- 1-task project (start-up): one baselined task with one matching run. Almost all
  of the time is the interpreter and the imports.
- warm check, N tasks: a generated project (bench/generate.py) checked again right
  after a first check, so the page cache and the run-index cache are warm.

A is ``--against DIR``, B this checkout; each side runs from its own source tree
(PYTHONPATH, started in the project directory, never in a checkout) with its own
bytecode cache (PYTHONPYCACHEPREFIX, written once before timing) and its own copy of
each project, so neither side reads the other's run cache. Rounds alternate A B A B;
the figures are medians and minimums of each side and the median of the per-round
B/A ratios, of wall time and of CPU time (user + system of the child): on a shared
machine the CPU time barely moves with the load.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import project as generated_project  # noqa: E402
from generate import silo_json  # noqa: E402


def tiny_project(root: Path) -> Path:
    """One task, one run, and its baselines (recorded by whichever side runs first)."""
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "agent"\nversion = "0"\n\n[tool.silo-regress]\n', encoding="utf-8"
    )
    run = root / ".silo" / "runs" / "run_20260316090000_a1"
    run.mkdir(parents=True)
    (run / "run.json").write_bytes(
        silo_json(
            {
                "runId": run.name,
                "environment": "crm-west",
                "taskId": "TASK-001",
                "startedAt": "2026-03-16T09:00:00.000Z",
                "finishedAt": "2026-03-16T09:00:05.000Z",
                "durationMs": 5000,
                "terminationReason": "completed",
                "toolCallCount": 1,
            }
        )
    )
    (run / "result.json").write_bytes(
        silo_json({"passed": True, "reward": 1, "checks": [], "agentOutput": "Done."})
    )
    (run / "state-diff.json").write_bytes(silo_json({"scalars": [], "collections": {}}))
    return root


class Side:
    def __init__(self, name: str, tree: Path, work: Path) -> None:
        self.name, self.tree = name, tree
        self.env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        self.env["PYTHONPATH"] = str(tree)
        self.env["PYTHONPYCACHEPREFIX"] = str(work / f"pycache-{name}")
        self.env.pop("NO_COLOR", None)

    def run(self, project: Path, *args: str) -> tuple[float, float]:
        """Wall time and CPU time (user + system) of one command, in seconds."""
        argv = [sys.executable, "-m", "silo_regress", "--project", str(project), *args]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        # cwd: `-m` puts the working directory before PYTHONPATH on sys.path, so run
        # from a checkout's root both sides would import that checkout.
        done = subprocess.run(
            argv, cwd=project, env=self.env, capture_output=True, text=True, check=False
        )
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise SystemExit(f"{self.name}: {' '.join(argv)} exit {done.returncode}\n{done.stderr}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return elapsed, cpu


def measure(label: str, a: Side, b: Side, projects: dict[str, Path], pairs: int) -> None:
    for side in (a, b):  # bytecode written and caches warm before anything is timed
        side.run(projects[side.name], "check")
        side.run(projects[side.name], "check")
    times: dict[str, list[tuple[float, float]]] = {a.name: [], b.name: []}
    for _ in range(pairs):
        for side in (a, b):
            times[side.name].append(side.run(projects[side.name], "check"))
    for n, kind in enumerate(("wall", "cpu")):
        line = [f"{label:<28} {kind:<4}"]
        for side in (a, b):
            ms = [t[n] * 1000 for t in times[side.name]]
            line.append(f"{side.name}: median {statistics.median(ms):6.1f} ms, min {min(ms):6.1f}")
        ratios = [tb[n] / ta[n] for ta, tb in zip(times[a.name], times[b.name], strict=True)]
        line.append(f"B/A median {statistics.median(ratios):.3f}")
        print("  ".join(line), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, required=True, help="checkout A (the old one)")
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--tasks", type=int, default=1000)
    args = parser.parse_args()
    cpus = len(os.sched_getaffinity(0))
    print(f"A = {args.against}, B = {HERE.parent}; {cpus} CPU(s) allowed; {args.pairs} pairs")
    with tempfile.TemporaryDirectory(prefix="silo-startup-") as tmp:
        work = Path(tmp)
        a, b = Side("A", args.against, work), Side("B", HERE.parent, work)
        tiny = {}
        for side in (a, b):
            tiny[side.name] = tiny_project(work / f"tiny-{side.name}")
            side.run(tiny[side.name], "record", "--all")
        measure("1-task project (start-up)", a, b, tiny, args.pairs)
        source = generated_project(tasks=args.tasks, runs=args.tasks * 2)
        large = {}
        for side in (a, b):
            large[side.name] = work / f"large-{side.name}"
            shutil.copytree(source, large[side.name], symlinks=True)
        measure(f"warm check, {args.tasks} tasks", a, b, large, args.pairs)


if __name__ == "__main__":
    main()
