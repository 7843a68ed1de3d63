"""The stand-in Silo's harness: its control file, projects that start it, its processes.

Shared by the runner tests (``run``, ``check --run``, ``record --repeat``) and by every other
test that drives real rollouts through tests/support/fake_silo.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import psutil
import pytest

from support.silofixture import SiloProject, make_project

FAKE_SILO = Path(__file__).with_name("fake_silo.py")  # the stand-in Silo
SILO_REGRESS = Path(sys.executable).with_name("silo-regress")
LONG_OUTPUTS = [
    "I qualified the lead and logged a note for the account owner.",
    "Lead qualified; a note is in the audit log.",
    "Done: the lead is qualified and the note logged.",
]


@pytest.fixture
def control(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The fake Silo's control file, and the file it lists its processes in."""
    path = tmp_path / "control" / "control.json"
    path.parent.mkdir()
    path.write_text("{}", encoding="utf-8")
    monkeypatch.setenv("FAKE_SILO_CONTROL", str(path))
    monkeypatch.setenv("FAKE_SILO_PIDS", str(path.with_name("pids")))
    yield path
    # A failing test must not leave its stand-ins running (pids are reused: check first).
    for pid in fake_pids(path):
        if alive(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def behave(control: Path, **tasks: dict[str, Any]) -> None:
    """Per-task behaviour; keys are task ids, with ``__`` standing for ``/``."""
    table = {key.replace("__", "/"): how for key, how in tasks.items()}
    control.write_text(json.dumps({"tasks": table}), encoding="utf-8")


def silo_project(tmp_path: Path, extra: str = "", *, environment: bool = True) -> SiloProject:
    command = json.dumps([sys.executable, str(FAKE_SILO)])
    config = f"silo-command = {command}\n"
    if environment:
        config += 'environment = "crm-west"\n'
    return make_project(tmp_path / "project", config=config + extra)


def new_runs(project: SiloProject) -> list[dict[str, Any]]:
    if not project.runs_dir.is_dir():
        return []
    found = []
    for path in sorted(project.runs_dir.iterdir()):
        meta = json.loads((path / "run.json").read_text()) if (path / "run.json").exists() else {}
        meta["dir"] = path
        found.append(meta)
    return found


def argv_of(run_dir: Path) -> list[str]:
    first = (run_dir / "trace.jsonl").read_text().splitlines()[0]
    return list(json.loads(first)["argv"])


def made_by_fake_silo(run_dir: Path) -> bool:
    return "argv" in (run_dir / "trace.jsonl").read_text()


def interval(meta: dict[str, Any]) -> tuple[datetime, datetime]:
    def parse(text: str) -> datetime:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))

    return parse(meta["startedAt"]), parse(meta["finishedAt"])


def overlaps(a: dict[str, Any], b: dict[str, Any]) -> bool:
    (s1, e1), (s2, e2) = interval(a), interval(b)
    return s1 < e2 and s2 < e1


def fake_pids(control: Path) -> list[int]:
    path = control.with_name("pids")
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def alive(pid: int) -> bool:
    """Still running as a stand-in (not gone, not a zombie, not a reused pid)."""
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        command = " ".join(proc.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False
    return str(FAKE_SILO) in command or "time.sleep(600)" in command


def survivors(pids: list[int], *, grace: float = 5.0) -> list[int]:
    """The stand-ins still running once SIGKILL (delivered asynchronously) has had time."""
    deadline = time.monotonic() + grace
    while True:
        left = [pid for pid in pids if alive(pid)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.02)


def processes_under(directory: Path) -> list[psutil.Process]:
    """Live processes whose working directory is inside ``directory``."""
    found = []
    for proc in psutil.process_iter(["cwd", "status"]):
        cwd = proc.info.get("cwd")
        if not cwd or proc.info.get("status") == psutil.STATUS_ZOMBIE:
            continue
        if Path(cwd) == directory or directory in Path(cwd).parents:
            found.append(proc)
    return found


# --- the happy path -----------------------------------------------------------
