"""Generate Silo projects for the benchmarks, once, and reuse them.

A project has ``tasks`` baselined tasks in one environment and ``runs`` run
directories in all, in Silo's exact layout (SILO_FORMAT.md). Each task's newest run
matches its baselines; its older runs differ, so picking the wrong run is a failure.
Projects are cached under ``$SILO_BENCH_CACHE`` (default /tmp/silo-regress-bench)
keyed by their parameters; a finished project has a ``.complete`` marker.

    python bench/generate.py --tasks 1000 --runs 100000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from silo_regress.canon.canonical import canonicalize

ENVIRONMENT = "crm-bench"
CACHE = Path(os.environ.get("SILO_BENCH_CACHE", "/tmp/silo-regress-bench"))


def silo_json(value: object) -> bytes:
    """Bytes as Silo writes them: JSON.stringify(value, null, 2) + newline."""
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def task_id(n: int) -> str:
    return f"TASK-{n:04d}"


def result_value(task: int, attempt: int) -> dict[str, object]:
    """About 2 KB, like a real result.json; ``attempt`` varies the older runs."""
    checks = [
        {
            "label": f"Check {c} of task {task}: the record was updated as asked",
            "passed": (c + attempt) % 7 != 0,
            "detail": f"OPP-{task:04d}-{c} stage qualified, owner Zoë Fernández" if c % 2 else "",
            "required": c < 4,
        }
        for c in range(8)
    ]
    required = [c for c in checks if c["required"]]
    return {
        "passed": all(c["passed"] for c in required),
        "reward": round(sum(1 for c in checks if c["passed"]) / len(checks), 2),
        "requiredPassed": sum(1 for c in required if c["passed"]),
        "requiredTotal": len(required),
        "failedRequired": [c["label"] for c in required if not c["passed"]],
        "checksPassed": sum(1 for c in checks if c["passed"]),
        "checksFailed": sum(1 for c in checks if not c["passed"]),
        "toolCalls": 5 + attempt % 4,
        "toolErrors": attempt % 3,
        "terminationReason": "completed",
        "agentOutput": f"Updated task {task} (attempt {attempt}): moved the opportunity "
        "to qualified and logged the call.",
        "error": None,
        "checks": checks,
    }


def state_diff_value(task: int, attempt: int) -> dict[str, object]:
    return {
        "scalars": [{"field": "pipeline.stage", "from": "lead", "to": "qualified"}],
        "collections": {
            "opportunities": {
                "added": [],
                "removed": [],
                "changed": [f"OPP-{task:04d}", f"OPP-{(task + attempt) % 997:04d}"],
            },
            "auditLog": {"added": ["AUD-0001", "AUD-0002"], "removed": [], "changed": []},
        },
    }


def started_at(index: int) -> str:
    """Distinct, increasing start times: one run every 7 seconds from 2026-01-01."""
    seconds = index * 7
    day, rest = divmod(seconds, 86400)
    month_days = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    month = 0
    while day >= month_days[month]:
        day -= month_days[month]
        month += 1
    hour, rest = divmod(rest, 3600)
    minute, second = divmod(rest, 60)
    clock = f"{hour:02d}:{minute:02d}:{second:02d}.{index % 1000:03d}"
    return f"2026-{month + 1:02d}-{day + 1:02d}T{clock}Z"


def generate(root: Path, *, tasks: int, runs: int) -> None:
    runs_dir = root / ".silo" / "runs"
    baselines = root / "baselines"
    runs_dir.mkdir(parents=True)
    baselines.mkdir()
    (root / "pyproject.toml").write_text(
        '[project]\nname = "bench-agent"\nversion = "0"\n\n'
        '[tool.silo-regress]\nruns-dir = ".silo/runs"\nbaselines-dir = "baselines"\n',
        encoding="utf-8",
    )
    per_task = max(runs // tasks, 1)
    # Run i belongs to task i % tasks, so a task's runs are spread over the whole
    # time range and its newest run is in the last round.
    for i in range(runs):
        task = i % tasks + 1
        attempt = i // tasks
        newest = attempt == per_task - 1
        start = started_at(i)
        stamp = start[:19].replace("-", "").replace(":", "").replace("T", "")
        name = f"run_{stamp}_{i + 1296:x}"
        path = runs_dir / name
        path.mkdir()
        meta = {
            "runId": name,
            "environment": ENVIRONMENT,
            "taskId": task_id(task),
            "startedAt": start,
            "finishedAt": start,
            "durationMs": 1000 + i % 5000,
            "terminationReason": "completed",
            "toolCallCount": 5,
        }
        result = result_value(task, 0 if newest else attempt + 1)
        state = state_diff_value(task, 0 if newest else attempt + 1)
        (path / "run.json").write_bytes(silo_json(meta))
        (path / "result.json").write_bytes(silo_json(result))
        (path / "state-diff.json").write_bytes(silo_json(state))
        (path / "trace.jsonl").write_bytes(b'{"at":"' + start.encode() + b'","event":"start"}\n')
        if newest:
            for artifact, value in (("result.json", result), ("state-diff.json", state)):
                doc = canonicalize(silo_json(value), source=artifact)
                (baselines / f"{task_id(task)}.{artifact}").write_bytes(doc.text)
    (baselines / ".silo-regress-format").write_text("1\n", encoding="utf-8")


def project(*, tasks: int, runs: int) -> Path:
    """The cached project for these parameters, generated on first use."""
    root = CACHE / f"project-{tasks}t-{runs}r"
    if (root / ".complete").exists():
        return root
    if root.exists():
        shutil.rmtree(root)
    print(f"generating {root} ({tasks} tasks, {runs} runs) ...", file=sys.stderr, flush=True)
    generate(root, tasks=tasks, runs=runs)
    (root / ".complete").write_text("ok\n", encoding="utf-8")
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=100_000)
    args = parser.parse_args()
    print(project(tasks=args.tasks, runs=args.runs))


if __name__ == "__main__":
    main()
