"""Soak: interrupt ``record`` and race writers for N minutes; report trials, outcomes, losses.

    python bench/soak.py --minutes 5 [--seed 13]

Each trial is one of: a signal (SIGINT, SIGTERM, SIGKILL) delivered at a seeded
point of a ``record --all`` that changes eight baselines (while staging, right
after the journal, after the k-th rename), the same signals at a random moment
of real time, or two ``record --all`` and a ``fmt`` started at once. After each
trial the next writer runs and the files are judged (tests/faultkit.py): old or
new, never a mix, nothing left behind under baselines/, nothing that ``git add
baselines/`` would stage but a baseline. "lost" counts trials that broke any of
that; the script exits 1 when it is not zero.
"""

from __future__ import annotations

import argparse
import collections
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.faultkit import Trial, Verdict, build, reset, run_trial
from support.silofixture import SiloProject

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGKILL)


def _trial(rng: random.Random) -> Trial:
    sig = rng.choice(SIGNALS)
    phase = rng.choice(("stage", "journal", "rename", "rename", "timed", "timed"))
    if phase == "timed":
        return Trial(sig, phase, rng.uniform(0.02, 0.8))
    ignored = sig != signal.SIGKILL and rng.random() < 0.1
    if phase == "journal":
        return Trial(sig, phase, 1, ignored=ignored)
    return Trial(sig, phase, rng.randint(1, 9), ignored=ignored)


def _race(project: SiloProject, new: dict[str, bytes]) -> tuple[str, bool, str]:
    base = [sys.executable, "-m", "silo_regress", "--project", str(project.root)]
    procs = [
        subprocess.Popen([*base, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for args in (("record", "--all"), ("fmt",), ("record", "--all"))
    ]
    codes = [p.wait(timeout=120) for p in procs]
    ok = all(code == 0 for code in codes) and project.baseline_bytes() == new
    leftovers = (project.baselines / ".silo-regress-tmp").exists()
    return f"race exits {codes}", not ok or leftovers, "" if ok else "final state differs"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    outcomes: collections.Counter[str] = collections.Counter()
    lost: list[str] = []
    trials = 0
    with tempfile.TemporaryDirectory(prefix="silo-soak-") as scratch:
        project, old, new = build(Path(scratch) / "project")
        deadline = time.monotonic() + args.minutes * 60
        started = time.monotonic()
        while time.monotonic() < deadline:
            reset(project, old)
            trials += 1
            if rng.random() < 0.1:
                label, broke, why = _race(project, new)
                outcomes[label] += 1
                if broke:
                    lost.append(f"race: {why}")
                continue
            trial = _trial(rng)
            verdict: Verdict = run_trial(project, trial, old=old, new=new)
            name = signal.Signals(trial.signal).name
            name = f"ignored {name}" if trial.ignored else name
            outcomes[f"{name} {trial.phase}: {verdict.outcome}"] += 1
            if trial.ignored and verdict.state != "new":
                lost.append(f"{trial.describe()}: an ignored signal undid the record")
            if verdict.lost:
                lost.append(
                    f"{trial.describe()}: state {verdict.state}, leftovers "
                    f"{list(verdict.leftovers)}, staged {list(verdict.staged_junk)}"
                )
        elapsed = time.monotonic() - started
    print(f"soak: {trials} trials in {elapsed:.0f} s (seed {args.seed}, shared machine)")
    for label, count in sorted(outcomes.items()):
        print(f"  {count:5d}  {label}")
    print(f"lost: {len(lost)}")
    for line in lost[:20]:
        print(f"  {line}")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
