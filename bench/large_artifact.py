"""A ~40 MB state-diff.json: check's wall time and peak memory, matching and changed.

    python bench/large_artifact.py [--ids 1700000] [--shape ids|text] [--pairs 5]
    python bench/large_artifact.py --cpus 0        # both sides under taskset -c 0

Builds a project with one task whose state-diff lists --ids audit ids (about 23
bytes each in Silo's pretty JSON), records it, and times `silo-regress check` as its
own process: once when the newest run matches, once when one id in the middle
changed. The reference, run beside it A B A B, is a fresh Python reading the same
file and printing it sorted with orjson (``orjson.dumps(orjson.loads(x),
option=OPT_INDENT_2 | OPT_SORT_KEYS)``): the least any canonical check must do.
Figures are the median and minimum of the per-pair ratios check / reference, for
wall time and for peak RSS. Peak RSS is ``/usr/bin/time -f %M`` of each process,
taken from outside it: a child started from this benchmark process would report
this process's memory (the ids it built) as its own peak.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SILO = [sys.executable, "-m", "silo_regress"]
REFERENCE = (
    "import sys, orjson\n"
    "data = open(sys.argv[1], 'rb').read()\n"
    "orjson.dumps(orjson.loads(data), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)\n"
)


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


def bench_env() -> dict[str, str]:
    """Bytecode cached for both sides, as an installed package has it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.setdefault("PYTHONPYCACHEPREFIX", "/tmp/silo-regress-bench-pycache")
    return env


def measured(argv: list[str], *, cwd: Path, prefix: list[str]) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MiB (of that process alone) and exit code of ``argv``."""
    timer = shutil.which("time", path="/usr/bin")
    if timer is None:
        raise SystemExit("needs /usr/bin/time (GNU time) to measure peak memory from outside")
    start = time.perf_counter()
    done = subprocess.run(
        [*prefix, timer, "-f", "%M", *argv],
        cwd=cwd,
        env=bench_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    peak_kib = int(done.stderr.strip().splitlines()[-1])
    return wall, peak_kib / 1024, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--ids", type=int, default=1_700_000)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--cpus", help="run both sides under taskset -c CPUS (e.g. 0)")
    parser.add_argument(
        "--shape",
        choices=["ids", "text"],
        default="ids",
        help="ids: millions of short ids (worst case for memory); text: 4,000 texts of 10 KB",
    )
    args = parser.parse_args()
    prefix = ["taskset", "-c", args.cpus] if args.cpus else []
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
        cpus = f"taskset -c {args.cpus}" if args.cpus else f"{len(os.sched_getaffinity(0))} CPUs"
        print(f"# state-diff.json: {size / 2**20:.1f} MiB; {cpus}; {args.pairs} pairs A B A B")
        for label in ("match", "changed"):
            if label == "changed":
                ids[len(ids) // 2] = "AUD-CHANGED" if args.shape == "ids" else "a changed note"
                path = write_run(runs, "run_20260316110000_b", "2026-03-16T11:00:00.000Z", diff)
            check = [*SILO, "--color", "never", "check"]
            reference = [sys.executable, "-c", REFERENCE, str(path)]
            measured(check, cwd=root, prefix=prefix)  # caches warm, bytecode written
            measured(reference, cwd=root, prefix=prefix)
            pairs = []
            for _ in range(args.pairs):
                ours = measured(check, cwd=root, prefix=prefix)
                pairs.append((ours, measured(reference, cwd=root, prefix=prefix)))
            codes = {a[2] for a, _ in pairs}
            for n, what, unit in ((0, "wall", "s"), (1, "peak RSS", "MiB")):
                ratios = [a[n] / b[n] for a, b in pairs]
                mine = statistics.median(a[n] for a, _ in pairs)
                theirs = statistics.median(b[n] for _, b in pairs)
                of_file = f" ({mine / (size / 2**20):.1f}x the file)" if n == 1 else ""
                print(
                    f"check, {label}, {what}: {mine:.2f} {unit}{of_file}; orjson load+dump "
                    f"{theirs:.2f} {unit}; check / orjson median {statistics.median(ratios):.2f}, "
                    f"min {min(ratios):.2f}; exit {codes}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
