"""The real ``silo-regress bisect`` on real git histories with a stand-in Silo.

Part of bench/bisection.py (``python bench/bisection.py real``): a few full runs of the
command, each on a new repository whose agent passes at 0.9 before a known culprit
commit and at 0.5 from it on (the stand-in tests/support/bisect_silo.py reads the rate
from ``quality.json`` in each commit's worktree). It shows that the command, not only the
engine, names the culprit, what a round costs in wall time (worktree, set-up, Silo),
and that no worktree is left behind.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAND_IN = ROOT / "tests" / "support" / "bisect_silo.py"
SILO_REGRESS = Path(sys.executable).with_name("silo-regress")
TALLY = (
    json.dumps(
        {
            "checks": {},
            "format": 1,
            "passed": 18,
            "reward": {"sum": 0, "sum-of-squares": 0},
            "rollouts": 20,
            "variants": {},
        },
        indent=2,
    )
    + "\n"
)
IDENTITY = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **IDENTITY},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def history(root: Path, commits: int, culprit: int) -> list[str]:
    root.mkdir(parents=True)
    command = json.dumps([sys.executable, str(STAND_IN)])
    (root / "silo-regress.toml").write_text(
        f'silo-command = {command}\nenvironment = "crm-west"\ngate = "stats"\n'
        'inputs = ["quality.json", "agent/**"]\n',
        encoding="utf-8",
    )
    (root / ".gitignore").write_text(".silo/\n", encoding="utf-8")
    (root / "quality.json").write_text('{"rate": 0.9}\n', encoding="utf-8")
    (root / "baselines").mkdir()
    (root / "baselines" / "TASK-001.tally.json").write_text(TALLY, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Record TASK-001")
    shas = []
    for i in range(1, commits + 1):
        (root / "agent").mkdir(exist_ok=True)
        (root / "agent" / f"step{i}.txt").write_text(f"{i}\n", encoding="utf-8")
        if i == culprit:
            (root / "quality.json").write_text('{"rate": 0.5}\n', encoding="utf-8")
        git(root, "add", "-A")
        git(root, "commit", "-qm", f"Step {i}")
        shas.append(git(root, "rev-parse", "HEAD"))
    return shas


def exact_history(root: Path, commits: int, culprit: int, env: dict[str, str]) -> list[str]:
    """An exact task: its baseline recorded from a real rollout of the stand-in; the
    culprit changes the agent's output."""
    root.mkdir(parents=True)
    command = json.dumps([sys.executable, str(STAND_IN)])
    (root / "silo-regress.toml").write_text(
        f'silo-command = {command}\nenvironment = "crm-west"\ninputs = ["quality.json"]\n',
        encoding="utf-8",
    )
    (root / ".gitignore").write_text(".silo/\n", encoding="utf-8")
    (root / "quality.json").write_text('{"rate": 1, "output": "A"}\n', encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    for step in (["run", "TASK-001"], ["record", "TASK-001"]):
        subprocess.run(
            [str(SILO_REGRESS), *step], cwd=root, env=env, check=True, capture_output=True
        )
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Record TASK-001")
    shas = []
    for i in range(1, commits + 1):
        (root / f"step{i}.txt").write_text(f"{i}\n", encoding="utf-8")
        if i == culprit:
            (root / "quality.json").write_text('{"rate": 1, "output": "B"}\n', encoding="utf-8")
        git(root, "add", "-A")
        git(root, "commit", "-qm", f"Step {i}")
        shas.append(git(root, "rev-parse", "HEAD"))
    return shas


def exact(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    print()
    print("| exact task | commits | culprit | named right | rollouts | log2(N) + 1 | wall s |")
    print("|---|---|---|---|---|---|---|")
    for run in range(3):
        with tempfile.TemporaryDirectory() as tmp:
            commits = 128
            culprit = rng.randint(1, commits)
            env = {**os.environ, **IDENTITY, "FAKE_SILO_CONTROL": str(Path(tmp) / "c.json")}
            Path(env["FAKE_SILO_CONTROL"]).write_text("{}", encoding="utf-8")
            root = Path(tmp) / "repo"
            shas = exact_history(root, commits, culprit, env)
            began = time.monotonic()
            done = subprocess.run(
                [str(SILO_REGRESS), "bisect", "TASK-001", "--format", "json"],
                cwd=root,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            wall = time.monotonic() - began
            if done.returncode != 0:
                print(done.stderr, file=sys.stderr)
                raise SystemExit(f"bisect exited {done.returncode}")
            found = json.loads(done.stdout)
            right = found["culprit"]["commit"] == shas[culprit - 1]
            print(
                f"| {run + 1} | {commits} | {culprit} | {'yes' if right else 'NO'} | "
                f"{found['rollouts']} | {math.log2(commits) + 1:g} | {wall:.0f} |",
                flush=True,
            )


def main(args: argparse.Namespace) -> None:
    stats_runs(args)
    exact(args)


def stats_runs(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    runs = 4
    head = "| run | commits | culprit | named right | posterior | rollouts | rounds | wall s |"
    print(head + " worktrees left |")
    print("|---|---|---|---|---|---|---|---|---|")
    for run in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            commits = 16
            culprit = rng.randint(1, commits)
            root = Path(tmp) / "repo"
            shas = history(root, commits, culprit)
            env = {**os.environ, **IDENTITY, "BISECT_SILO_SEED": f"{args.seed}-{run}"}
            env["FAKE_SILO_CONTROL"] = str(Path(tmp) / "control.json")
            Path(env["FAKE_SILO_CONTROL"]).write_text("{}", encoding="utf-8")
            began = time.monotonic()
            done = subprocess.run(
                [str(SILO_REGRESS), "bisect", "TASK-001", "--format", "json", "--budget", "600"],
                cwd=root,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            wall = time.monotonic() - began
            if done.returncode not in (0, 1):
                print(done.stderr, file=sys.stderr)
                raise SystemExit(f"bisect exited {done.returncode}")
            found = json.loads(done.stdout)
            right = (found["culprit"] or {}).get("commit") == shas[culprit - 1]
            left = git(root, "worktree", "list").count("\n")
            print(
                f"| {run + 1} | {commits} | {culprit} | {'yes' if right else 'NO'} | "
                f"{found['probability']:.3f} | {found['rollouts']} | "
                f"{found['rounds']} | {wall:.0f} | {left} |",
                flush=True,
            )
