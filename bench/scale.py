"""Issue 5 benchmarks, side by side in one run (see bench/README.md).

    python bench/scale.py                      # everything
    python bench/scale.py --skip-snapshots     # without the syrupy / pytest-regressions suites

1. ``silo-regress check``: 1,000 tasks x 2 artifacts, 100,000 run directories, cold (no
   run cache) and warm; and 1,000 tasks with 5 runs each (issue 2) next to a bare loop.
2. The same comparisons as pytest suites with syrupy and with pytest-regressions.
3. A bare Python loop: read every run.json, pick each task's newest run, compare bytes.
4. Canonicalization throughput (MB/s) on 2 KB and 50 MB files, against orjson's own
   loads+dumps of the same data.
Projects come from bench/generate.py and are cached under $SILO_BENCH_CACHE.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import orjson
from generate import project, silo_json

from silo_regress.canonical import canonicalize

HERE = Path(__file__).resolve().parent
SILO = [sys.executable, "-m", "silo_regress"]
CACHE_FILE = ".silo-regress-cache"


def wall(command: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{command} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return elapsed


def best(times: list[float]) -> str:
    middle = sorted(times)[len(times) // 2]
    return f"{min(times):.3f} s (best of {len(times)}; median {middle:.3f})"


BARE_LOOP = textwrap.dedent(
    """
    import json, os, sys
    root = sys.argv[1]
    runs_dir = os.path.join(root, ".silo", "runs")
    newest = {}
    for name in os.listdir(runs_dir):
        path = os.path.join(runs_dir, name, "run.json")
        try:
            with open(path, "rb") as f:
                meta = json.loads(f.read())
        except (OSError, ValueError):
            continue
        key = meta["taskId"]
        if key not in newest or (meta["startedAt"], name) > newest[key][0]:
            newest[key] = ((meta["startedAt"], name), name)
    same = 0
    for task, (_, name) in newest.items():
        for artifact in ("result.json", "state-diff.json"):
            with open(os.path.join(runs_dir, name, artifact), "rb") as f:
                run = f.read()
            with open(os.path.join(root, "baselines", f"{task}.{artifact}"), "rb") as f:
                base = f.read()
            same += json.loads(run) == json.loads(base)
    print(same)
    """
)


def bench_check(root: Path, *, repeat: int) -> dict[str, str]:
    runs_dir = root / ".silo" / "runs"
    cold = []
    for _ in range(2):
        (runs_dir / CACHE_FILE).unlink(missing_ok=True)
        cold.append(wall([*SILO, "check"], cwd=root))
    warm = [wall([*SILO, "check"], cwd=root) for _ in range(repeat)]
    bare = [wall([sys.executable, "-c", BARE_LOOP, str(root)], cwd=root) for _ in range(3)]
    return {
        "cold": best(cold),
        "warm": best(warm),
        "bare loop": best(bare),
        "warm / bare": f"{min(warm) / min(bare):.2f}",
    }


SYRUPY_SUITE = """
import json, os, pytest
from syrupy.extensions.json import JSONSnapshotExtension
ROOT = os.environ["BENCH_PROJECT"]
RUNS = os.path.join(ROOT, ".silo", "runs")

def newest_runs():
    newest = {}
    for name in os.listdir(RUNS):
        try:
            with open(os.path.join(RUNS, name, "run.json"), "rb") as f:
                meta = json.loads(f.read())
        except (OSError, ValueError):
            continue
        key = meta["taskId"]
        if key not in newest or (meta["startedAt"], name) > newest[key]:
            newest[key] = (meta["startedAt"], name)
    return {task: name for task, (_, name) in newest.items()}

NEWEST = newest_runs()

@pytest.fixture
def snapshot_json(snapshot):
    return snapshot.use_extension(JSONSnapshotExtension)

@pytest.mark.parametrize("task", sorted(NEWEST))
@pytest.mark.parametrize("artifact", ["result.json", "state-diff.json"])
def test_behaviour(task, artifact, snapshot_json):
    with open(os.path.join(RUNS, NEWEST[task], artifact), "rb") as f:
        assert json.loads(f.read()) == snapshot_json
"""

REGRESSIONS_SUITE = (
    SYRUPY_SUITE.replace("from syrupy.extensions.json import JSONSnapshotExtension\n", "").split(
        "@pytest.fixture"
    )[0]
    + """
@pytest.mark.parametrize("task", sorted(NEWEST))
@pytest.mark.parametrize("artifact", ["result.json", "state-diff.json"])
def test_behaviour(task, artifact, data_regression):
    with open(os.path.join(RUNS, NEWEST[task], artifact), "rb") as f:
        data_regression.check(json.loads(f.read()), basename=f"{task}-{artifact}")
"""
)


def bench_snapshot_suites(root: Path) -> dict[str, str]:
    out = {}
    env = {**os.environ, "BENCH_PROJECT": str(root)}
    for name, suite, update in (
        ("pytest-regressions", REGRESSIONS_SUITE, "--force-regen"),
        ("syrupy", SYRUPY_SUITE, "--snapshot-update"),
    ):
        where = root.parent / f"suite-{name}-{root.name}"
        if where.exists():
            shutil.rmtree(where)
        where.mkdir()
        (where / "test_behaviour.py").write_text(suite, encoding="utf-8")
        base = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(where),
            str(where),
        ]
        # Record the snapshots, not timed. pytest-regressions fails every test that
        # (re)generates a file, so this run's exit code says nothing.
        wall([*base, update], cwd=where, env=env)
        start = time.perf_counter()
        timed = subprocess.run(base, cwd=where, env=env, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        if timed.returncode != 0 or " passed" not in timed.stdout:
            raise SystemExit(f"the {name} suite did not pass:\n{timed.stdout[-2000:]}")
        out[name] = f"{elapsed:.3f} s ({timed.stdout.strip().splitlines()[-1]})"
    return out


def throughput(data: bytes, *, seconds: float = 2.0) -> tuple[float, float]:
    def rate(func: object) -> float:
        count, start = 0, time.perf_counter()
        while True:
            func()  # type: ignore[operator]
            count += 1
            elapsed = time.perf_counter() - start
            if elapsed > seconds and count >= 3:
                return len(data) * count / elapsed / 1e6

    ours = rate(lambda: canonicalize(data, source="bench"))
    ceiling = rate(lambda: orjson.dumps(orjson.loads(data), option=orjson.OPT_INDENT_2))
    return ours, ceiling


def bench_canonical(root: Path) -> dict[str, str]:
    small = (root / "baselines" / "TASK-0001.result.json").read_bytes()
    ids = [f"AUD-{n:07d}" for n in range(1_300_000)]
    big_value = {
        "scalars": [{"field": f"f{n}", "from": n, "to": n + 0.5} for n in range(100_000)],
        "collections": {"auditLog": {"added": ids, "removed": [], "changed": []}},
    }
    big = silo_json(big_value)
    out = {}
    for label, data in ((f"{len(small) / 1000:.1f} KB", small), (f"{len(big) / 1e6:.0f} MB", big)):
        ours, ceiling = throughput(data)
        out[label] = f"silo-regress {ours:.0f} MB/s, orjson loads+dumps {ceiling:.0f} MB/s"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-snapshots", action="store_true")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    results: dict[str, object] = {}
    big = project(tasks=1000, runs=100_000)
    small = project(tasks=1000, runs=5000)
    results["check, 1000 tasks, 100000 runs"] = bench_check(big, repeat=args.repeat)
    results["check, 1000 tasks, 5000 runs (5 each)"] = bench_check(small, repeat=args.repeat)
    if not args.skip_snapshots:
        results["snapshot suites, 1000 tasks, 5000 runs"] = bench_snapshot_suites(small)
    results["canonicalization"] = bench_canonical(small)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
