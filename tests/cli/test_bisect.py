"""``bisect`` and ``blame`` against real git histories made here, with a stand-in Silo
whose pass rate is a file in each commit (tests/support/bisect_silo.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from support.gitrepo import SILO, commit_all, head
from support.runnerkit import control  # noqa: F401  (fixture)
from support.silofixture import SiloProject, git, git_init, make_project

from silo_regress.stats.tally import Tally, serialize_tally

BISECT_SILO = Path(__file__).parent.parent / "support" / "bisect_silo.py"


def bisect_project(root: Path, *, gate: str, extra: str = "") -> SiloProject:
    command = json.dumps([sys.executable, str(BISECT_SILO)])
    project = make_project(
        root,
        config=f'silo-command = {command}\nenvironment = "crm-west"\ngate = "{gate}"\n'
        'inputs = ["quality.json", "agent/**"]\n' + extra,
    )
    git_init(root)
    (root / ".gitignore").write_text(".silo/\n", encoding="utf-8")
    return project


def quality(project: SiloProject, **value: Any) -> None:
    (project.root / "quality.json").write_text(json.dumps(value), encoding="utf-8")


def record_good(project: SiloProject, *, rate_note: str = "") -> str:
    """The good commit: a recorded result baseline and (stats) a tally of 10 of 10."""
    project.add_run("TASK-001")
    done = project.cli("record", "TASK-001")
    assert done.exit_code == 0, done.output
    (project.baselines / "TASK-001.tally.json").write_bytes(
        serialize_tally(Tally(rollouts=10, passed=10))
    )
    return commit_all(project, "Record TASK-001" + rate_note)


def history(project: SiloProject, n: int, *, culprit: int, bad: dict[str, Any]) -> list[str]:
    """n commits after the good one; commit number ``culprit`` (1-based) writes ``bad``."""
    shas = []
    for i in range(1, n + 1):
        (project.root / "agent").mkdir(exist_ok=True)
        (project.root / "agent" / f"step{i}.txt").write_text(f"{i}\n", encoding="utf-8")
        if i == culprit:
            quality(project, **bad)
        shas.append(commit_all(project, f"Step {i}"))
    return shas


def worktrees_of(root: Path) -> list[str]:
    out = git(root, "worktree", "list", "--porcelain").stdout
    return [line for line in out.splitlines() if line.startswith("worktree ")]


def bisect_json(project: SiloProject, *args: str) -> tuple[int, dict[str, Any], str]:
    done = project.cli("bisect", "TASK-001", "--format", "json", *args)
    try:
        document = json.loads(done.stdout)
    except ValueError:
        document = {}
    return done.exit_code, document, done.output


def test_stats_task_culprit_found_in_worktrees(tmp_path: Path, control: Path) -> None:
    project = bisect_project(tmp_path / "p", gate="stats")
    quality(project, rate=1.0)
    record_good(project)
    shas = history(project, 12, culprit=7, bad={"rate": 0.0})
    before = git(project.root, "status", "--porcelain").stdout
    code, result, output = bisect_json(project, "--jobs", "2", "--budget", "80")
    assert code == 0, output
    assert result["culprit"]["commit"] == shas[6]
    assert result["culprit"]["files"] == ["agent/step7.txt", "quality.json"]
    assert result["probability"] >= 0.95
    assert result["freeRollouts"] == 10  # the tally recorded at good
    assert result["rollouts"] <= 40
    assert result["before"]["mean"] > 0.8 and result["after"]["mean"] < 0.3
    # Never the user's tree or index, and no worktree left behind.
    assert git(project.root, "status", "--porcelain").stdout == before
    assert head(project.root) == shas[-1]
    assert len(worktrees_of(project.root)) == 1
    assert not (project.root / ".git" / "silo-regress-bisect.json").exists()


def test_exact_task_plain_bisection(tmp_path: Path, control: Path) -> None:
    project = bisect_project(tmp_path / "p", gate="exact")
    quality(project, rate=1.0, output="Qualified the lead for TASK-001.")
    # The recorded run must be what the stand-in writes: record one real rollout.
    commit_all(project, "Agent")
    assert project.cli("run", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    commit_all(project, "Record TASK-001")
    shas = history(project, 16, culprit=11, bad={"rate": 1.0, "output": "Something else."})
    code, result, output = bisect_json(project)
    assert code == 0, output
    assert result["culprit"]["commit"] == shas[10]
    assert result["gate"] == "exact"
    assert result["rollouts"] <= 5  # log2(16) + 1
