"""A 10 MB agent output line and a 100 MB check label: check's wall time and longest line.

    python bench/long_line.py [--mb 10] [--label-mb 100] [--runs 3]

Builds a project whose recorded run says "Done." and whose newest run's agentOutput is
one line of --mb MB (fixed-seed words), then times `silo-regress check` as its own
process, plain and with --color always, and prints the longest line it wrote (stdout,
bytes). With --label-mb, a second task's newest run adds a check whose label is that
many MB. Figures: median and minimum of --runs runs.
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
from pathlib import Path

SILO = [sys.executable, "-m", "silo_regress"]


def silo_json(value: object) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode()


def write_run(runs: Path, task: str, name: str, started: str, result: object) -> None:
    run = runs / name
    run.mkdir(parents=True)
    meta = {"runId": name, "environment": "crm-west", "taskId": task, "startedAt": started}
    (run / "run.json").write_bytes(silo_json(meta))
    (run / "result.json").write_bytes(silo_json(result))
    (run / "state-diff.json").write_bytes(silo_json({"auditLog": {"added": []}}))


def result(output: str, label: str = "Lead qualified") -> dict[str, object]:
    check = {"label": label, "passed": True, "detail": "", "required": True}
    return {"passed": True, "reward": 1, "checks": [check], "agentOutput": output}


def build(root: Path, *, mb: int, label_mb: int) -> None:
    (root / "pyproject.toml").write_text('[project]\nname = "a"\n\n[tool.silo-regress]\n')
    runs = root / ".silo" / "runs"
    tasks = ["TASK-001"] + (["TASK-002"] if label_mb else [])
    for task in tasks:
        write_run(runs, task, f"run_old_{task}", "2026-03-16T09:00:00.000Z", result("Done."))
    subprocess.run([*SILO, "record", "--all"], cwd=root, check=True, capture_output=True)
    rng = random.Random(1)
    vocabulary = ["alpha", "beta", "gamma", "delta", "lead", "qualified"]
    words = " ".join(rng.choice(vocabulary) for _ in range(mb * 200_000))[: mb * 1_000_000]
    write_run(runs, "TASK-001", "run_new_1", "2026-03-16T10:00:00.000Z", result(words))
    if label_mb:
        label = "L" * (label_mb * 1_000_000)
        write_run(runs, "TASK-002", "run_new_2", "2026-03-16T10:00:00.000Z", result("Done.", label))


def timed(root: Path, *extra: str) -> tuple[float, int]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.setdefault("PYTHONPYCACHEPREFIX", "/tmp/silo-regress-bench-pycache")
    start = time.perf_counter()
    done = subprocess.run(
        [*SILO, *extra, "check"], cwd=root, env=env, capture_output=True, check=False
    )
    wall = time.perf_counter() - start
    return wall, max((len(line) for line in done.stdout.splitlines()), default=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=10)
    parser.add_argument("--label-mb", type=int, default=0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build(root, mb=args.mb, label_mb=args.label_mb)
        for name, extra in (("plain", ()), ("colour", ("--color", "always"))):
            figures = [timed(root, *extra) for _ in range(args.runs)]
            walls = [wall for wall, _ in figures]
            print(
                f"{name:7s} {args.mb} MB output line"
                + (f", {args.label_mb} MB label" if args.label_mb else "")
                + f": median {statistics.median(walls):.2f} s, min {min(walls):.2f} s, "
                f"longest printed line {figures[0][1]} bytes"
            )


if __name__ == "__main__":
    main()
