"""A ~50 MB state-diff.json: check's wall time and peak memory, matching and changed.

    python bench/large_artifact.py [--ids 1700000] [--shape ids|text] [--repeat 3]

Builds a project with one task whose state-diff lists --ids audit ids (about 28
bytes each in Silo's pretty JSON), records it, and times `silo-regress check` as its
own process: once when the newest run matches, once when one id in the middle
changed. Peak memory is the child's max RSS. orjson's own load+dump of the same
bytes is printed beside it as the ceiling.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

SILO = [sys.executable, "-m", "silo_regress"]


def silo_json(value: object) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode()


def write_run(runs: Path, name: str, started: str, state_diff: object) -> Path:
    run = runs / name
    run.mkdir(parents=True)
    meta = {"runId": name, "environment": "crm-west", "taskId": "TASK-001", "startedAt": started}
    (run / "run.json").write_bytes(silo_json(meta))
    result = {"passed": True, "reward": 1, "checks": []}
    (run / "result.json").write_bytes(silo_json(result))
    (run / "state-diff.json").write_bytes(silo_json(state_diff))
    return run / "state-diff.json"


def timed(cwd: Path, *args: str) -> tuple[float, float, int]:
    """Wall time, this child's own peak RSS in MB, and its exit code."""
    start = time.perf_counter()
    child = subprocess.Popen([*SILO, *args], cwd=cwd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 1024, child.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", type=int, default=1_700_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--shape",
        choices=["ids", "text"],
        default="ids",
        help="ids: millions of short ids (worst case for memory); text: 4,000 texts of 10 KB",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "pyproject.toml").write_text("[tool.silo-regress]\n")
        if args.shape == "ids":
            ids = [f"AUD-{i:07d}" for i in range(args.ids)]
        else:
            ids = [f"note {i}: " + "the agent wrote a long summary. " * 320 for i in range(4000)]
        diff = {"scalars": [], "collections": {"auditLog": {"added": ids, "removed": []}}}
        runs = root / ".silo" / "runs"
        path = write_run(runs, "run_20260316100000_a", "2026-03-16T10:00:00.000Z", diff)
        size = path.stat().st_size
        subprocess.run([*SILO, "record", "TASK-001"], cwd=root, check=True, capture_output=True)
        data = path.read_bytes()
        start = time.perf_counter()
        orjson.dumps(orjson.loads(data), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
        ceiling = time.perf_counter() - start
        print(f"state-diff.json: {size / 1e6:.1f} MB; orjson load+dump: {ceiling:.3f} s")
        for label in ("match", "changed"):
            if label == "changed":
                ids[len(ids) // 2] = "AUD-CHANGED" if args.shape == "ids" else "a changed note"
                write_run(runs, "run_20260316110000_b", "2026-03-16T11:00:00.000Z", diff)
            results = [timed(root, "--color", "never", "check") for _ in range(args.repeat)]
            wall = min(r[0] for r in results)
            peak = max(r[1] for r in results)
            codes = {r[2] for r in results}
            print(
                f"check, {label}: {wall:.2f} s best of {args.repeat}, "
                f"peak RSS {peak:.0f} MB ({peak / (size / 2**20):.1f}x the file), exit {codes}"
            )


if __name__ == "__main__":
    main()
