"""Fault injection for record and fmt: signals and kills at chosen or random moments.

Shared by tests/integration/test_hostile_faults.py (a bounded, seeded matrix in CI) and
bench/soak.py (the same trials for minutes). A trial starts a real
``silo-regress record --all`` in a subprocess that changes every baseline of a
small project, interrupts it, and then judges what is on disk: every baseline
must hold the old bytes or (only when the command said it succeeded) the new
ones, the next writer must leave nothing but baselines, and ``git add
baselines/`` must never stage a temporary file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from support.silofixture import SiloProject, git, git_init, make_project, make_result

TASKS = ("TASK-001", "TASK-002", "TASK-003", "TASK-004")
WORK_DIR = ".silo-regress-tmp"

# Runs inside the subprocess: deliver FAULT_SIGNAL at the FAULT_AT-th call of the
# chosen step, then carry on as the real command would (a signal that is blocked
# there stays pending, exactly as one from outside would).
DRIVER = r"""
import os, signal, sys
from silo_regress.system import fsio
from silo_regress.store import transaction
sig = int(os.environ["FAULT_SIGNAL"])
phase = os.environ["FAULT_PHASE"]
at = int(os.environ["FAULT_AT"])
if os.environ.get("FAULT_IGNORED"):
    signal.signal(sig, signal.SIG_IGN)  # as in a job started with `&`, or nohup
calls = 0

def hit():
    global calls
    calls += 1
    if calls == at:
        os.kill(os.getpid(), sig)

if phase == "rename":
    real_replace = os.replace
    def replace(src, dst, *args, **kwargs):
        real_replace(src, dst, *args, **kwargs)
        if transaction.WORK_DIR not in str(dst):
            hit()
    os.replace = replace
elif phase == "stage":
    real_stage = fsio.stage
    def stage(*args, **kwargs):
        hit()
        return real_stage(*args, **kwargs)
    transaction.stage = stage
elif phase == "journal":
    real_journal = transaction._journal
    def journal(*args, **kwargs):
        real_journal(*args, **kwargs)
        hit()
    transaction._journal = journal
from silo_regress.cli import main
sys.exit(main(sys.argv[1:]))
"""


@dataclass(frozen=True)
class Trial:
    signal: int
    phase: str  # "stage", "journal", "rename", or "timed" (a delay in seconds in ``at``)
    at: float
    ignored: bool = False  # the command runs with this signal ignored

    def describe(self) -> str:
        name = signal.Signals(self.signal).name
        where = f"after {self.at:.3f} s" if self.phase == "timed" else f"{self.phase} #{self.at:g}"
        return f"{'ignored ' if self.ignored else ''}{name} at {where}"


@dataclass(frozen=True)
class Verdict:
    trial: Trial
    exit_code: int
    state: str  # "old", "new" or "mixed" after the next writer ran
    leftovers: tuple[str, ...]  # files under baselines/ that are not baselines
    staged_junk: tuple[str, ...]  # what `git add baselines/` staged that is no baseline
    message: str

    @property
    def lost(self) -> bool:
        """Anything the contract forbids: a torn batch, leftovers, a staged temporary."""
        return self.state == "mixed" or bool(self.leftovers) or bool(self.staged_junk)

    @property
    def outcome(self) -> str:
        """``old`` (rolled back), ``new`` (committed) or ``mixed``, with the exit code."""
        return f"{self.state} (exit {self.exit_code})"


def build(root: Path) -> tuple[SiloProject, dict[str, bytes], dict[str, bytes]]:
    """A git project whose baselines are recorded (old) and whose newer runs change all."""
    project = make_project(root)
    git_init(root)
    (root / ".gitignore").write_text(".silo/\n", encoding="utf-8")
    for task in TASKS:
        project.add_run(task)
    _record(project)
    old = project.baseline_bytes()
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", "old baselines")
    for n, task in enumerate(TASKS):
        project.add_run(
            task,
            result=make_result(reward=0.5 + n / 100),
            state_diff={"scalars": [], "collections": {"n": [n]}},
        )
    new = _recorded_elsewhere(root, project)
    return project, old, new


def _record(project: SiloProject) -> None:
    done = command(project, "record", "--all")
    if done.returncode != 0:
        raise AssertionError(f"record failed: {done.stderr}")


def _recorded_elsewhere(root: Path, project: SiloProject) -> dict[str, bytes]:
    """What a clean ``record --all`` writes now, found without touching this project."""
    import shutil

    twin = root.parent / f"{root.name}-twin"
    shutil.copytree(root, twin, symlinks=True)
    try:
        copy = SiloProject(root=twin, runs_dir=twin / ".silo" / "runs")
        _record(copy)
        return copy.baseline_bytes()
    finally:
        shutil.rmtree(twin)


def command(
    project: SiloProject, *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "silo_regress", "--project", str(project.root), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, **(env or {})},
    )


def run_trial(
    project: SiloProject, trial: Trial, *, old: dict[str, bytes], new: dict[str, bytes]
) -> Verdict:
    """Interrupt one ``record --all`` as ``trial`` says, let the next writer run, judge."""
    args = [sys.executable, "-c", DRIVER, "--project", str(project.root), "record", "--all"]
    if trial.phase == "timed":
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "silo_regress",
                "--project",
                str(project.root),
                "record",
                "--all",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_default_signals,
        )
        time.sleep(trial.at)
        proc.send_signal(trial.signal)
        _, stderr = proc.communicate(timeout=60)
        code = proc.returncode
    else:
        env = {
            **os.environ,
            "FAULT_SIGNAL": str(trial.signal),
            "FAULT_PHASE": trial.phase,
            "FAULT_AT": str(int(trial.at)),
            **({"FAULT_IGNORED": "1"} if trial.ignored else {}),
        }
        done = subprocess.run(
            args,
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            check=False,
            preexec_fn=_default_signals,
        )
        code, stderr = done.returncode, done.stderr
    staged = _staged_junk(project)
    # The next writer rolls back what a kill -9 left and sweeps its temporary files.
    after = command(project, "fmt")
    state = _state(project.baseline_bytes(), old=old, new=new)
    leftovers = _leftovers(project)
    message = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    if after.returncode != 0:
        message += f" | next fmt exited {after.returncode}: {after.stderr.strip()}"
    return Verdict(trial, code, state, leftovers, staged, message)


def _default_signals() -> None:
    """A job started with `&` (or nohup) ignores SIGINT, and its children inherit that;
    every trial starts from the defaults a terminal gives."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def reset(project: SiloProject, old: dict[str, bytes]) -> None:
    """Put the old baselines back for the next trial, as git has them."""
    git(project.root, "checkout", "-q", "--", "baselines")
    git(project.root, "clean", "-q", "-fdx", "--", "baselines")
    git(project.root, "reset", "-q")
    assert project.baseline_bytes() == old


def _state(now: dict[str, bytes], *, old: dict[str, bytes], new: dict[str, bytes]) -> str:
    if now == old:
        return "old"
    if now == new:
        return "new"
    return "mixed"


def _leftovers(project: SiloProject) -> tuple[str, ...]:
    found = []
    for path in project.baselines.rglob("*"):
        if path.is_dir() and not path.is_symlink():
            continue
        rel = path.relative_to(project.baselines).as_posix()
        if not _is_baseline_name(rel):
            found.append(rel)
    return tuple(sorted(found))


def _staged_junk(project: SiloProject) -> tuple[str, ...]:
    git(project.root, "add", "baselines/")
    listed = git(project.root, "diff", "--cached", "--name-only").stdout.split()
    git(project.root, "reset", "-q")
    return tuple(name for name in listed if not _is_baseline_name(name))


def _is_baseline_name(name: str) -> bool:
    if WORK_DIR in name:
        return False
    base = name.rsplit("/", 1)[-1]
    return base == ".silo-regress-format" or (base.endswith(".json") and not base.startswith("."))
