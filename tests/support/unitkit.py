"""Projects for ``check --run --unit I/N``: a stats-gated suite recorded with the seeded
stand-in (tests/support/fake_silo.py, mode ``seeded``), committed, and cloned per worker.

Used by tests/integration/test_units_cli.py and bench/units.py; everything runs the real
``silo-regress`` executable in a subprocess, each worker in its own clone.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

FAKE_SILO = Path(__file__).with_name("fake_silo.py")
SILO_REGRESS = Path(sys.executable).with_name("silo-regress")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Units",
    "GIT_AUTHOR_EMAIL": "units@example.invalid",
    "GIT_COMMITTER_NAME": "Units",
    "GIT_COMMITTER_EMAIL": "units@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def environ(control: Path, **extra: str) -> dict[str, str]:
    """The environment of a worker: the stand-in's control file, one rollout thread."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SILO_REGRESS", "FAKE_"))}
    env.update(GIT_ENV)
    env.update({"FAKE_SILO_CONTROL": str(control), "NO_COLOR": "1"})
    env.update(extra)
    return env


def seeded(control: Path, *, seed: int = 7, rate: float = 0.8, **more: Any) -> None:
    """Every task seeded; ``more`` adds keys (``start_failure``, ``sleep``) to the default."""
    control.parent.mkdir(parents=True, exist_ok=True)
    default = {"mode": "seeded", "seed": seed, "rate": rate, **more}
    control.write_text(json.dumps({"default": default}), encoding="utf-8")


def cli(
    cwd: Path, *args: str, env: dict[str, str], check: int | None = 0
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(SILO_REGRESS), *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if check is not None:
        assert done.returncode == check, done.stdout + done.stderr
    return done


def make_suite(root: Path, control: Path, *, tasks: int, recorded: int = 10) -> Path:
    """A git repository whose project gates ``tasks`` tasks by pass rate, each with a
    tally of ``recorded`` seeded rollouts; the runs directory is left out of git."""
    root.mkdir(parents=True)
    command = json.dumps([sys.executable, str(FAKE_SILO)])
    (root / "silo-regress.toml").write_text(
        f'silo-command = {command}\nenvironment = "crm-west"\ngate = "stats"\n', encoding="utf-8"
    )
    (root / ".gitignore").write_text(".silo/\n", encoding="utf-8")
    seeded(control, seed=1)  # the baseline: other rollouts than any check's
    env = environ(control)
    refs = [f"TASK-{n:03d}" for n in range(1, tasks + 1)]
    cli(root, "record", "--repeat", str(recorded), "--jobs", "2", *refs, env=env)
    shutil.rmtree(root / ".silo")
    subprocess.run(["git", "init", "-q", "."], cwd=root, env=env, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, env=env, check=True)
    subprocess.run(["git", "commit", "-qm", "baselines"], cwd=root, env=env, check=True)
    return root


def clone(origin: Path, target: Path, env: dict[str, str]) -> Path:
    subprocess.run(
        ["git", "clone", "-q", str(origin), str(target)], env=env, check=True, cwd=origin.parent
    )
    return target
