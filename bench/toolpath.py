"""Paired benchmark of the tool path (``tool-events.json``) of a large trace against jq.

    python bench/toolpath.py                      # 100 MB trace, 5 pairs, both CPUs
    python bench/toolpath.py --cpus 0             # the same on one CPU (taskset -c 0)
    python bench/toolpath.py --mb 300 --pairs 3

Cases, the CI case first:
- ``check-match``: ``silo-regress check`` of a project whose one baselined artifact is
  the tool path of a run with a ~100 MB trace.jsonl (newer Silo format), and the path
  matches. Against: ``jq -c 'select(.type=="tool_call" or .type=="tool_result") |
  del(.at,.durationMs)' trace.jsonl | cmp -s - committed.jsonl``, the jq filter a user
  would write instead, compared with its own committed output.
- ``derive``: deriving the canonical path only (``read_tool_path`` written to
  /dev/null) against the jq filter alone (to /dev/null).

Each pair runs A then B (then B A on the next pair, so neither always goes first);
every figure is the ratio A/B per pair, median and minimum. The seconds are for scale
only: the machine is shared. Wall time and peak RSS are measured from outside the
process: ``os.wait4`` on the child gives its resource usage, whose ``ru_maxrss`` is the
largest RSS of the child and the children it waited for (jq and cmp under ``sh``).
Bytecode is cached for both sides: PYTHONDONTWRITEBYTECODE is removed and
PYTHONPYCACHEPREFIX set; each side runs once untimed first.
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

JQ = shutil.which("jq") or "/usr/bin/jq"
FILTER = 'select(.type=="tool_call" or .type=="tool_result") | del(.at,.durationMs)'
RUN = "run_20260316140327_15kf"


def write_trace(path: Path, megabytes: int) -> int:
    """A newer-Silo trace of about ``megabytes`` MB; returns the number of tool calls."""
    target = megabytes * 1_000_000
    size = 0
    calls = 0
    seq = 0

    def line(event: dict[str, object]) -> bytes:
        return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"

    with open(path, "wb") as out:
        seq += 1
        start = {"seq": seq, "type": "run_start", "at": "2026-03-16T14:03:27.604Z"}
        size += out.write(line({**start, "task": "TASK-006", "tools": ["get_invoice"]}))
        while size < target:
            calls += 1
            clock = f"{(calls // 60000) % 60:02d}:{(calls // 1000) % 60:02d}.{calls % 1000:03d}"
            at = f"2026-03-16T14:{clock}Z"
            seq += 1
            given = {"id": f"INV-2026-{calls:06d}", "account": "ACC-007", "lines": True}
            event = {"seq": seq, "type": "tool_call", "at": at, "callId": calls}
            size += out.write(line({**event, "tool": "get_invoice", "input": given}))
            seq += 1
            # JSON.stringify prints a whole double without ".0"; Python's json would not.
            total = 14000 + calls * 0.25
            output = {
                "id": f"INV-2026-{calls:06d}",
                "invoiceDate": "2026-03-02T09:30:00.000Z",
                "customer": "Müller Logistik GmbH",
                "total": int(total) if total.is_integer() else total,
                "lines": [
                    {"sku": f"SKU-{i}", "qty": i + 1, "price": 99.5, "note": "Übergröße"}
                    for i in range(3)
                ],
            }
            result = {"seq": seq, "type": "tool_result", "at": at, "callId": calls}
            size += out.write(
                line(
                    {
                        **result,
                        "tool": "get_invoice",
                        "output": output,
                        "isError": False,
                        "durationMs": calls % 17,
                    }
                )
            )
            if calls % 10 == 0:  # events the path skips
                seq += 1
                thought = {"seq": seq, "type": "agent_output", "at": at, "output": "x" * 200}
                size += out.write(line(thought))
    return calls


def build(root: Path, megabytes: int) -> tuple[Path, Path]:
    """A project with one run and its tool-path baseline; the trace and jq's own output."""
    project = root / "project"
    run = project / ".silo" / "runs" / RUN
    run.mkdir(parents=True)
    calls = write_trace(run / "trace.jsonl", megabytes)
    meta = {
        "runId": RUN,
        "environment": "crm-west",
        "taskId": "TASK-006",
        "startedAt": "2026-03-16T14:03:27.604Z",
        "finishedAt": "2026-03-16T15:03:27.604Z",
        "durationMs": 3600000,
        "terminationReason": "completed",
        "toolCallCount": calls,
    }
    (run / "run.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    result = {"passed": True, "reward": 1, "toolCalls": calls, "toolErrors": 0}
    (run / "result.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    (project / "silo-regress.toml").write_text('artifacts = ["tool-events.json"]\n', "utf-8")
    subprocess.run(
        [sys.executable, "-m", "silo_regress", "record", "TASK-006"],
        cwd=project,
        check=True,
        capture_output=True,
    )
    committed = root / "committed.jsonl"
    with open(committed, "wb") as out:
        subprocess.run([JQ, "-c", FILTER, str(run / "trace.jsonl")], stdout=out, check=True)
    return project, committed


def measure(argv: list[str], *, cwd: Path, env: dict[str, str]) -> tuple[float, int, int]:
    """Wall seconds, peak RSS in KiB (from the kernel, outside the process), exit code."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss, child.returncode


def pairs(
    name: str,
    a: list[str],
    b: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    count: int,
    cpus: str | None,
) -> None:
    if cpus is not None:
        a, b = ["taskset", "-c", cpus, *a], ["taskset", "-c", cpus, *b]
    for argv in (a, b):  # untimed: bytecode, page cache
        _, _, code = measure(argv, cwd=cwd, env=env)
        if code != 0:
            raise SystemExit(f"{name}: {' '.join(argv)} exited {code}")
    walls, rss, rows = [], [], []
    for i in range(count):
        order = [("A", a), ("B", b)] if i % 2 == 0 else [("B", b), ("A", a)]
        got = {label: measure(argv, cwd=cwd, env=env) for label, argv in order}
        (wa, ra, ca), (wb, rb, cb) = got["A"], got["B"]
        if ca != 0 or cb != 0:
            raise SystemExit(f"{name}: a side failed (exit {ca}, {cb})")
        walls.append(wa / wb)
        rss.append(ra / rb)
        rows.append((wa, wb, ra, rb))
    med = statistics.median
    print(f"\n{name} ({count} pairs{', CPU ' + cpus if cpus else ''})")
    print(f"  A: {' '.join(a)}")
    print(f"  B: {' '.join(b)}")
    print(
        f"  wall A {med(r[0] for r in rows):.2f} s, B {med(r[1] for r in rows):.2f} s"
        f" (medians); ratio A/B median {med(walls):.2f}, min {min(walls):.2f}"
    )
    print(
        f"  peak RSS A {med(r[2] for r in rows) / 1024:.0f} MiB,"
        f" B {med(r[3] for r in rows) / 1024:.0f} MiB;"
        f" ratio A/B median {med(rss):.2f}, min {min(rss):.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=100, help="trace size in MB")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--cpus", default=None, help="taskset CPU list, e.g. 0")
    parser.add_argument("--case", choices=["all", "check-match", "derive"], default="all")
    args = parser.parse_args()
    if not os.path.exists(JQ):
        raise SystemExit("jq is not installed (the reference side)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(prefix="silo-toolpath-bench-") as tmp:
        root = Path(tmp)
        env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
        project, committed = build(root, args.mb)
        trace = project / ".silo" / "runs" / RUN / "trace.jsonl"
        print(f"trace: {trace.stat().st_size / 1e6:.0f} MB; machine shared with other work")
        jq = f"{JQ} -c '{FILTER}' {trace}"
        if args.case in ("all", "check-match"):
            pairs(
                "check-match: check a matching tool path",
                [sys.executable, "-m", "silo_regress", "check"],
                ["sh", "-c", f"{jq} | cmp -s - {committed}"],
                cwd=project,
                env=env,
                count=args.pairs,
                cpus=args.cpus,
            )
        if args.case in ("all", "derive"):
            derive = (
                "import sys; from silo_regress.runs.toolpath import read_tool_path; "
                "sys.stdout.buffer.write(read_tool_path(sys.argv[1]))"
            )
            pairs(
                "derive: the canonical path alone",
                [sys.executable, "-c", derive, str(trace.parent)],
                ["sh", "-c", jq],
                cwd=project,
                env=env,
                count=args.pairs,
                cpus=args.cpus,
            )


if __name__ == "__main__":
    main()
