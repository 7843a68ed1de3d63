"""``check`` on a project with accepted variants, paired against the same project without.

    python bench/variants.py                 # both cases, 9 pairs, both CPUs
    python bench/variants.py --cpus 0        # the same on one CPU (taskset -c 0)

The project is bench/generate.py's: 1,000 tasks, 5 runs each, every newest run matching.
The variants copy gives 200 of the tasks three result.json variants (``TASK~2``,
``TASK~3``), and makes the newest run equal the *last* one, so check reads and
validates all three; the plain copy has one baseline per artifact. Both copies hold
the same runs, so the ratio is the price of the variants alone. Cases, CI first:

- ``no-cache``: no run-index cache (a fresh clone); deleted before every timed check.
- ``warm``: the run-index cache is there and up to date.

A B A B, ``--pairs`` pairs, the median and minimum of the per-pair ratios (the
machine is shared: the ratio is what is robust; seconds are for scale). Bytecode is
cached for both sides (PYTHONDONTWRITEBYTECODE removed, PYTHONPYCACHEPREFIX set) and
each side runs once untimed first. Wall-clock pairs come first, then CPU-time pairs
(user + system of the child), which the other users of a shared machine disturb less.
The budget (issue 10) is 1.3x.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import CACHE, project, result_value, silo_json, task_id  # noqa: E402
from scale import CACHE_FILE, Side, bench_env, check_command, paired  # noqa: E402

from silo_regress.canon.canonical import canonicalize  # noqa: E402

TASKS, RUNS, VARIED = 1000, 5000, 200
MARK = ".variants-complete"  # the copied project carries generate.py's own marker


def _newest_run(root: Path) -> dict[str, Path]:
    newest: dict[str, tuple[str, Path]] = {}
    for run in (root / ".silo" / "runs").iterdir():
        meta_file = run / "run.json"
        if not meta_file.is_file():
            continue
        meta = json.loads(meta_file.read_bytes())
        key = meta["taskId"]
        if key not in newest or (meta["startedAt"], run.name) > (
            newest[key][0],
            newest[key][1].name,
        ):
            newest[key] = (meta["startedAt"], run)
    return {task: path for task, (_, path) in newest.items()}


def copies() -> tuple[Path, Path]:
    """The plain project and its variants twin, both made once and cached."""
    source = project(tasks=TASKS, runs=RUNS)
    plain = CACHE / f"variants-plain-{TASKS}t-{RUNS}r"
    varied = CACHE / f"variants-{VARIED}v-{TASKS}t-{RUNS}r"
    for root in (plain, varied):
        if not (root / MARK).exists():
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(source, root, symlinks=True)
    if not (varied / MARK).exists():
        newest = _newest_run(varied)
        for n in range(1, VARIED + 1):
            task = task_id(n * (TASKS // VARIED))
            number = int(task.split("-")[1])
            texts = [
                canonicalize(silo_json(result_value(number, attempt)), source="x").text
                for attempt in (101, 102, 0)  # variant 3 is what the newest run holds
            ]
            baselines = varied / "baselines"
            (baselines / f"{task}.result.json").write_bytes(texts[0])
            (baselines / f"{task}~2.result.json").write_bytes(texts[1])
            (baselines / f"{task}~3.result.json").write_bytes(texts[2])
            run_text = canonicalize((newest[task] / "result.json").read_bytes(), source="x").text
            assert run_text == texts[2], task
    for root in (plain, varied):
        (root / MARK).write_text("ok\n", encoding="utf-8")
    return plain, varied


def cpu_seconds(side: Side, prefix: list[str], env: dict[str, str]) -> float:
    """User + system CPU of one run of ``side``: less disturbed by the other users of the
    machine than wall time, which counts the time the process waited for a core."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    side.run(prefix, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cpu_paired(a: Side, b: Side, *, pairs: int, prefix: list[str]) -> dict[str, object]:
    env = bench_env()
    ratios, times_a, times_b = [], [], []
    for _ in range(pairs):
        ta, tb = cpu_seconds(a, prefix, env), cpu_seconds(b, prefix, env)
        times_a.append(ta)
        times_b.append(tb)
        ratios.append(ta / tb)
    return {
        "CPU ratio median": round(statistics.median(ratios), 2),
        "CPU ratio min": round(min(ratios), 2),
        "check CPU s median": round(statistics.median(times_a), 3),
        "reference CPU s median": round(statistics.median(times_b), 3),
    }


def case(name: str, *, pairs: int, prefix: list[str]) -> dict[str, object]:
    plain, varied = copies()

    def clear(root: Path) -> None:
        (root / ".silo" / "runs" / CACHE_FILE).unlink(missing_ok=True)

    for root in (plain, varied):
        done = subprocess.run(
            [*check_command(), "check"], cwd=root, env=bench_env(), capture_output=True, text=True
        )
        if done.returncode != 0:
            raise SystemExit(f"check in {root} did not pass:\n{done.stdout[-2000:]}")
    before_a = (lambda: clear(varied)) if name == "no-cache" else (lambda: None)
    before_b = (lambda: clear(plain)) if name == "no-cache" else (lambda: None)
    with_variants = Side([*check_command(), "check"], cwd=varied, before=before_a)
    without = Side([*check_command(), "check"], cwd=plain, before=before_b)
    wall = paired(with_variants, without, pairs=pairs, prefix=prefix)
    return {**wall, **cpu_paired(with_variants, without, pairs=pairs, prefix=prefix)}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--case", choices=["all", "no-cache", "warm"], default="all")
    parser.add_argument("--pairs", type=int, default=9)
    parser.add_argument("--cpus", help="run both sides under taskset -c CPUS (e.g. 0)")
    args = parser.parse_args()
    prefix = ["taskset", "-c", args.cpus] if args.cpus else []
    cpus = f"taskset -c {args.cpus}" if args.cpus else f"{len(os.sched_getaffinity(0))} CPUs"
    names = ["no-cache", "warm"] if args.case == "all" else [args.case]
    for name in names:
        figures = case(name, pairs=args.pairs, prefix=prefix)
        print(
            f"{name} ({TASKS} tasks, {VARIED} with 3 result.json variants, {RUNS} runs, "
            f"{cpus}, {args.pairs} pairs):"
        )
        for key, value in figures.items():
            print(f"  {key}: {value}")


if __name__ == "__main__":
    main()
