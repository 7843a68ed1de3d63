"""The HTML review page at scale: ``check --format html`` beside ``--format json``.

(Not bench/html.py: with bench/ on the path, that name would hide the standard
library's ``html``, which the page renderer imports.)

    python bench/review_page.py          # 9 pairs, both CPUs
    python bench/review_page.py --cpus 0 # the same on one CPU (taskset -c 0)

The project: 1,000 tasks, one run each (bench/generate.py), in a git repository
(objects packed, as in a clone) whose last 30 commits each changed 10 tasks'
result.json baselines (so the page draws its full history chart), and 50 tasks whose
newest run differs from its baselines (result.json and state-diff.json).

Cases, each A B A B with the conventions of bench/scale.py (bytecode cached for
both sides, one untimed run each first, medians and minimums, peak RSS from
outside with ``/usr/bin/time -f %M``):
- ``html / json``: the page against the JSON report of the same check; with the
  page's size against the 2 MB target and its time against the 1 s target.
- ``chart``: the page in the repository against the page in a copy without
  ``.git`` (no chart): what reading 30 commits of history costs.
- ``gitpython``: ``python -c "import git"`` against ``python -c "pass"``: what the
  page would pay if it read history through GitPython, as ``log`` does.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import (  # noqa: E402
    CACHE,
    project,
    result_value,
    silo_json,
    state_diff_value,
    task_id,
)
from hook import GIT_ENV  # noqa: E402
from scale import Side, bench_env, check_command, paired  # noqa: E402

from silo_regress.canon.canonical import canonicalize  # noqa: E402

TASKS = 1000
CHANGED = 50
COMMITS = 30
PER_COMMIT = 10
PAGE_LIMIT = 2_000_000  # bytes
TIME_LIMIT = 1.0  # seconds


def _git(root: Path, *args: str, date: str | None = None) -> None:
    env = {**os.environ, **GIT_ENV}
    if date is not None:
        env |= {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def _baseline(root: Path, task: int, artifact: str, value: object) -> None:
    doc = canonicalize(silo_json(value), source=artifact)
    (root / "baselines" / f"{task_id(task)}.{artifact}").write_bytes(doc.text)


def review_project() -> tuple[Path, Path]:
    """(the project in a git repository, the same project without .git), made once."""
    root = CACHE / f"html-{TASKS}t-{CHANGED}c"
    plain = CACHE / f"html-{TASKS}t-{CHANGED}c-nogit"
    if (root / ".complete").exists() and (plain / ".complete").exists():
        return root, plain
    for path in (root, plain):
        if path.exists():
            shutil.rmtree(path)
    print(f"generating {root} ...", file=sys.stderr, flush=True)
    shutil.copytree(project(tasks=TASKS, runs=TASKS), root)
    (root / ".complete").unlink()
    (root / ".gitignore").write_text(".silo/\n.complete\n", encoding="utf-8")
    current = {
        t: (root / "baselines" / f"{task_id(t)}.result.json").read_bytes()
        for t in range(1, TASKS + 1)
    }
    _git(root, "init", "-q", "-b", "main")
    # Commit k holds older results for the tasks numbered up to PER_COMMIT * (COMMITS - k):
    # each commit brings 10 tasks to their current baselines, the last one all of them.
    for k in range(1, COMMITS + 1):
        for t in range(1, TASKS + 1):
            if t <= PER_COMMIT * (COMMITS - k):
                _baseline(root, t, "result.json", result_value(t, 1 + t % 6))
            else:
                (root / "baselines" / f"{task_id(t)}.result.json").write_bytes(current[t])
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", f"Baselines {k}", date=f"2026-02-{k % 28 + 1:02d}T10:00Z")
    # Packed, as in a clone: loose objects (right after committing locally) cost git
    # about 150 ms more to read the 1,290 baseline versions the chart needs.
    _git(root, "gc", "-q")
    # The newest run of every 20th task now differs from its baselines.
    runs = sorted((root / ".silo" / "runs").iterdir())
    for run in runs:
        meta = (run / "run.json").read_text(encoding="utf-8")
        number = int(meta.split('"taskId": "TASK-')[1][:4])
        if number % (TASKS // CHANGED) == 0:
            (run / "result.json").write_bytes(silo_json(result_value(number, 1 + number % 4)))
            (run / "state-diff.json").write_bytes(silo_json(state_diff_value(number, 3)))
    shutil.copytree(root, plain, ignore=shutil.ignore_patterns(".git"))
    for path in (root, plain):
        (path / ".complete").write_text("ok\n", encoding="utf-8")
    return root, plain


def _page_figures(root: Path, prefix: list[str]) -> dict[str, object]:
    env = bench_env()
    page, report = root / "page.html", root / "report.json"
    for fmt, out in (("html", page), ("json", report)):
        done = subprocess.run(
            [*prefix, *check_command(), "check", "--format", fmt, "--output", str(out)],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
        )
        if done.returncode != 1:
            raise SystemExit(f"check --format {fmt} exited {done.returncode}: {done.stderr}")
    html = page.read_text(encoding="utf-8")
    return {
        "page KB": round(len(html.encode()) / 1000, 1),
        "json KB": round(report.stat().st_size / 1000, 1),
        "cards": html.count('<article class="card'),
        "chart": "<svg" in html,
        "page under 2 MB": len(html.encode()) < PAGE_LIMIT,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--case", choices=["all", "html", "chart", "gitpython"], default="all")
    parser.add_argument("--pairs", type=int, default=9)
    parser.add_argument("--cpus", help="run both sides under taskset -c CPUS (e.g. 0)")
    args = parser.parse_args()
    prefix = ["taskset", "-c", args.cpus] if args.cpus else []
    cpus = f"taskset -c {args.cpus}" if args.cpus else f"{len(os.sched_getaffinity(0))} CPUs"
    root, plain = review_project()
    print(f"# {cpus}, {args.pairs} pairs A B A B, shared machine: read the ratios", flush=True)
    check = check_command()
    html = Side([*check, "check", "--format", "html", "--output", "page.html"], cwd=root)
    if args.case in ("all", "html"):
        print(f"page: {_page_figures(root, prefix)}", flush=True)
        json_side = Side([*check, "check", "--format", "json", "--output", "r.json"], cwd=root)
        figures = paired(html, json_side, pairs=args.pairs, prefix=prefix)
        seconds = figures["check s median"]
        assert isinstance(seconds, float)
        figures["page under 1 s"] = seconds < TIME_LIMIT
        print(f"html / json, {TASKS} tasks, {CHANGED} changed: {figures}", flush=True)
    if args.case in ("all", "chart"):
        no_chart = Side([*check, "check", "--format", "html", "--output", "page.html"], cwd=plain)
        figures = paired(html, no_chart, pairs=args.pairs, prefix=prefix)
        a, b = figures["check s median"], figures["reference s median"]
        assert isinstance(a, float) and isinstance(b, float)
        figures["chart ms (median difference)"] = round((a - b) * 1000)
        print(f"chart, page with history / page without git: {figures}", flush=True)
    if args.case in ("all", "gitpython"):
        gitpython = Side([sys.executable, "-c", "import git"], cwd=root)
        bare = Side([sys.executable, "-c", "pass"], cwd=root)
        figures = paired(gitpython, bare, pairs=args.pairs, prefix=prefix)
        a, b = figures["check s median"], figures["reference s median"]
        assert isinstance(a, float) and isinstance(b, float)
        figures["import git ms (median difference)"] = round((a - b) * 1000)
        print(f"gitpython, import git / python -c pass: {figures}", flush=True)


if __name__ == "__main__":
    main()
