"""The stats gate's math at its documented bound: 100,000 rollouts a side (MAX_ROLLOUTS).

A forged tally, a forged shard or ``--against`` an old commit may hold counts this large;
every p-value, pass^k and suite decision must still take milliseconds. Run:

    python bench/stats_bounds.py          # the math, in process
    python bench/stats_bounds.py cli      # check, the hook and status, as processes

The first prints the time of ``judge_tasks`` (every test the gate runs: Fisher per task and per
check, Holm, the stratified suite test, pass^k curves, the rollouts that would decide)
over 20 tasks of 100,000 rollouts a side with 50 checks each, and single p-values.
``cli`` builds two projects in git (a stats task with a tally of 10 rollouts, and one of
100,000) and times ``check``, ``check --staged`` (the hook) and ``status`` in each, A B A B,
five rounds: medians and minimums.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from silo_regress.stats.exact import Table, decline_p, stratified_decline_p
from silo_regress.stats.passk import pass_hat_k, suite_curve
from silo_regress.stats.tally import MAX_ROLLOUTS, Tally
from silo_regress.stats.verdicts import Evidence, Floor, Policy, judge_tasks

N = MAX_ROLLOUTS
CHECKS = tuple((f"check {i}", N // 2) for i in range(50))


def _tally(passed: int) -> Tally:
    return Tally(N, passed, checks=CHECKS, reward_sum=passed, reward_squares=passed)


def _ms(started: float) -> str:
    return f"{1000 * (time.perf_counter() - started):.0f} ms"


def main() -> None:
    for label, candidate in (("no change", N // 2), ("a 1-point drop", N // 2 - 1000)):
        evidence = [
            Evidence(f"TASK-{i:03d}", _tally(N // 2 - i), _tally(candidate)) for i in range(20)
        ]
        started = time.perf_counter()
        judge_tasks(evidence, Policy(k=3, floor=Floor(5, 0.01)), decisions={})
        print(f"judge_tasks, {label}: 20 tasks x {N} rollouts a side, 50 checks: {_ms(started)}")
    table = Table(N // 2, N, N // 2 - 1000, N)
    started = time.perf_counter()
    decline_p.__wrapped__(table)
    print(f"one Fisher p at {N} a side: {_ms(started)}")
    started = time.perf_counter()
    stratified_decline_p([Table(N // 2 - i, N, N // 2 - 900, N) for i in range(20)])
    print(f"the stratified p over 20 such tasks: {_ms(started)}")
    started = time.perf_counter()
    for k in range(1, 1001):
        pass_hat_k.__wrapped__(N - 7, N, k * 90)
    suite_curve([(N // 2, N)] * 20, up_to=N)
    print(f"1,000 pass^k values and a 20-task curve at {N}: {_ms(started)}")


def _project(root: Path, rollouts: int) -> Path:
    """A stats task with a recorded run, its tally (``rollouts``, half passed), in git."""
    tool = Path(sys.executable).with_name("silo-regress")
    runs = root / ".silo" / "runs" / "run_20260316100000_1"
    runs.mkdir(parents=True)
    meta = {"runId": runs.name, "environment": "crm-west", "taskId": "TASK-001"}
    meta |= {"startedAt": "2026-03-16T10:00:00.000Z", "finishedAt": "2026-03-16T10:00:01.000Z"}
    (runs / "run.json").write_text(json.dumps(meta, indent=2) + "\n")
    result = {"passed": True, "reward": 1, "checks": [{"label": "Lead qualified", "passed": True}]}
    (runs / "result.json").write_text(json.dumps(result, indent=2) + "\n")
    (root / "pyproject.toml").write_text(
        '[tool.silo-regress]\nenvironment = "crm-west"\nartifacts = ["result.json"]\n'
        '[tool.silo-regress.tasks.TASK-001]\ngate = "stats"\n'
    )
    subprocess.run([str(tool), "record", "TASK-001"], cwd=root, check=True, capture_output=True)
    half = rollouts // 2
    tally = {
        "checks": {"Lead qualified": half},
        "format": 1,
        "passed": half,
        "reward": {"sum": half, "sum-of-squares": half},
        "rollouts": rollouts,
        "variants": {},
    }
    (root / "baselines" / "TASK-001.tally.json").write_text(
        json.dumps(tally, indent=2, sort_keys=True) + "\n"
    )
    (root / ".gitignore").write_text(".silo/\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "tally"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=_GIT)
    return root


_GIT = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    **{
        f"GIT_{who}_{what}": value
        for who in ("AUTHOR", "COMMITTER")
        for what, value in (("NAME", "bench"), ("EMAIL", "bench@example.invalid"))
    },
}


def cli() -> None:
    tool = str(Path(sys.executable).with_name("silo-regress"))
    commands = (["check"], ["check", "--staged"], ["status"])
    with tempfile.TemporaryDirectory() as temp:
        projects = {n: _project(Path(temp) / str(n), n) for n in (10, N)}
        times: dict[tuple[int, str], list[float]] = {}
        for _ in range(5):
            for n, root in projects.items():
                for command in commands:
                    started = time.perf_counter()
                    subprocess.run([tool, *command], cwd=root, capture_output=True, env=_GIT)
                    took = time.perf_counter() - started
                    times.setdefault((n, " ".join(command)), []).append(took)
    for (n, shown), values in times.items():
        print(
            f"{n:>7} rollouts  {shown:<15} median {statistics.median(values):.2f} s  "
            f"min {min(values):.2f} s"
        )


if __name__ == "__main__":
    cli() if sys.argv[1:] == ["cli"] else main()
