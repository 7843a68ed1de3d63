"""SILO_REGRESS_JOBS=1: one switch for every fork and thread, and the same results.

The run index and the judge are asked for two workers (a forked child each) in a
fresh interpreter that counts its forks with ``os.register_at_fork``: without the
switch they fork, with it nothing forks and the index and report are the same.
``run --jobs 3`` under the switch starts one rollout at a time.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from support.silofixture import SiloProject, make_project, make_result

FAKE_SILO = Path(__file__).parents[1] / "support" / "fake_silo.py"

COUNT_FORKS = """
import json, os, sys
forks = []
os.register_at_fork(after_in_parent=lambda: forks.append(1))
from pathlib import Path
from silo_regress.cli.common import ColorWhen, Globals, project_config, working_tree
from silo_regress.judging.judge import check
from silo_regress.runs.cache import index_runs_cached

config = project_config(Globals(project=Path(sys.argv[1]), color=ColorWhen.NEVER, explicit=True))
index = index_runs_cached(config.runs_dir, min_runs=1, workers=2)
report = check(config, index, working_tree(config), workers=2)
print(json.dumps({
    "forks": len(forks),
    "runs": sorted(run.name for key in sorted(index.rows) for run in index.runs_of(*key)),
    "outcomes": [repr(o) + repr((o.baseline_text, o.run_text)) for o in report.outcomes],
    "warnings": list(report.warnings),
}))
"""


def _judged(project: SiloProject, **env: str) -> dict[str, Any]:
    environ = {k: v for k, v in os.environ.items() if k != "SILO_REGRESS_JOBS"}
    done = subprocess.run(
        [sys.executable, "-c", COUNT_FORKS, str(project.root)],
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_jobs_1_forks_nothing_and_finds_the_same(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    tasks = [f"TASK-{n:03d}" for n in range(8)]
    for task in tasks:
        project.add_run(task, result=make_result(reward=1))
    assert project.cli("record", "--all").exit_code == 0
    for n, task in enumerate(tasks):  # newer runs: half as recorded, half changed
        project.add_run(task, result=make_result(reward=1 if n % 2 else 0))

    split = _judged(project)
    serial = _judged(project, SILO_REGRESS_JOBS="1")

    assert split["forks"] == 2, "without the switch the scan and the judge each fork once"
    assert serial["forks"] == 0
    assert serial["runs"] == split["runs"] and len(split["runs"]) == 16
    assert serial["outcomes"] == split["outcomes"]
    assert serial["warnings"] == split["warnings"]
    assert any("verdict=<Verdict.CHANGED" in o for o in split["outcomes"])


def test_a_bad_jobs_value_is_one_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = make_project(tmp_path / "p")
    project.add_run("TASK-001", result=make_result(reward=1))
    assert project.cli("record", "--all").exit_code == 0
    monkeypatch.setenv("SILO_REGRESS_JOBS", "two")
    found = subprocess.run(
        [sys.executable, "-m", "silo_regress", "--project", str(project.root), "check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert found.returncode == 3, found.stderr
    assert "SILO_REGRESS_JOBS='two' is not a whole number" in found.stderr
    assert "Traceback" not in found.stderr


def _interval(run_dir: Path) -> tuple[datetime, datetime]:
    meta = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    return tuple(  # type: ignore[return-value]
        datetime.fromisoformat(meta[key].replace("Z", "+00:00"))
        for key in ("startedAt", "finishedAt")
    )


def test_jobs_1_runs_one_rollout_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = ("TASK-001", "TASK-002", "TASK-003")
    control = tmp_path / "control.json"  # tests/fake_silo.py: each rollout takes 0.3 s
    control.write_text(json.dumps({"tasks": {t: {"sleep": 0.3} for t in tasks}}))
    monkeypatch.setenv("FAKE_SILO_CONTROL", str(control))
    command = json.dumps([sys.executable, str(FAKE_SILO)])
    config = f'silo-command = {command}\nenvironment = "crm-west"\njobs = 3\n'
    project = make_project(tmp_path / "project", config=config)
    monkeypatch.setenv("SILO_REGRESS_JOBS", "1")

    result = project.cli("run", "--jobs", "3", *tasks)

    assert result.exit_code == 0, result.output
    assert "3 rollouts, 1 at a time" in result.stderr
    spans = sorted(_interval(run) for run in project.runs_dir.iterdir())
    assert len(spans) == 3
    assert all(end <= start for (_, end), (start, _) in itertools.pairwise(spans)), spans
