"""The repository itself: its own check passes, and the
pre-commit path starts without the heavy imports (the layers: test_layers.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from support.silofixture import SiloProject, make_result

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "silo_regress"


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    # Under `pytest --cov`, coverage starts in every Python child (patch = subprocess) and
    # imports hashlib, threading and more: what start-up imports is measured without it.
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("NO_COLOR", "PYTHONPATH", "COVERAGE_PROCESS_CONFIG")
        and not k.startswith("COV_CORE_")
    }
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def test_the_repository_check_passes() -> None:
    result = _run(["-m", "silo_regress", "check"], ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " match (" in result.stdout
    assert "changed" not in result.stdout


# --- start-up -------------------------------------------------------------------

HEAVY = ("git", "pygments", "pydantic", "rich")
# Off the path of a matching check in a project without `inputs` or `agent`: each one
# costs the hook a few milliseconds (dataclasses to build, regexes to compile) for
# work that check does not do there (status rows, recording, stale runs, diffs, an
# internal error's traceback, writes of a cache that is up to date, asking which
# thread installs the SIGTERM handler).
DEFERRED = (
    "silo_regress.reports.overview",
    "silo_regress.recording.recorder",
    "silo_regress.runs.freshness",
    "silo_regress.runs.provenance",
    "silo_regress.project.fingerprint",
    "silo_regress.canon.jsondiff",
    "silo_regress.canon.volatile",  # the scan: only once the prefilter sees a hint
    "silo_regress.runs.clock",
    "silo_regress.runs.discards",  # one stat says nothing is discarded
    "silo_regress.judging.remedies",  # next steps of a failing check
    "silo_regress.store.gitsource",  # a working-tree check reads no baseline from git
    "silo_regress.runs.toolpath",  # derives tool-events.json: only a project that baselines it
    "silo_regress.render.advice",  # nothing to accept
    "silo_regress.stats",  # the statistical gate: only for tasks with gate = "stats"
    "shlex",
    "traceback",
    "tempfile",
    "threading",
    "secrets",
    "hashlib",
)


def _modules(stderr: str) -> set[str]:
    """Full module names from ``python -X importtime`` output."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.add(name)
    return names


def _imported(stderr: str) -> set[str]:
    """Top-level module names from ``python -X importtime`` output."""
    return {name.split(".")[0] for name in _modules(stderr)}


@pytest.fixture
def matching_project(project: SiloProject) -> SiloProject:
    project.add_run("TASK-002", started="2026-03-16T09:00:00.000Z")
    project.add_run("TASK-003", started="2026-03-16T09:00:00.000Z")
    assert project.cli("record", "--all").exit_code == 0
    return project


def test_check_on_a_matching_project_imports_nothing_heavy(
    matching_project: SiloProject,
) -> None:
    result = _run(["-X", "importtime", "-m", "silo_regress", "check"], matching_project.root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 match" in result.stdout
    imported = _imported(result.stderr)
    assert {"silo_regress", "orjson"} <= imported  # the parser sees imports at all
    assert not imported & set(HEAVY), sorted(imported & set(HEAVY))
    modules = _modules(result.stderr)
    assert "silo_regress.judging.judge" in modules
    assert not modules & set(DEFERRED), sorted(modules & set(DEFERRED))


def test_check_loads_what_it_defers_once_it_needs_it(matching_project: SiloProject) -> None:
    """The deferred modules still load where their work is done: proof the probe sees them."""
    config = matching_project.root / "pyproject.toml"
    config.write_text(config.read_text(encoding="utf-8") + 'inputs = ["agent.ts"]\n')
    (matching_project.root / "agent.ts").write_text("export default {}\n", encoding="utf-8")
    # Newer than the inputs, yet not past this machine's clock (a future run is skipped).
    soon = datetime.now(UTC) + timedelta(minutes=1)
    started = soon.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    matching_project.add_run("TASK-002", started=started, result=make_result(reward=0))
    args = ["-X", "importtime", "-m", "silo_regress", "--color", "never", "check"]
    result = _run(args, matching_project.root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "changed" in result.stdout
    modules = _modules(result.stderr)
    stale_and_diff = {
        "silo_regress.runs.freshness",
        "silo_regress.runs.provenance",
        "silo_regress.project.fingerprint",
        "silo_regress.canon.jsondiff",
        "hashlib",
    }
    assert stale_and_diff <= modules, sorted(stale_and_diff - modules)


def test_a_failing_check_without_colour_imports_nothing_heavy(
    matching_project: SiloProject,
) -> None:
    matching_project.add_run(
        "TASK-002", started="2026-03-16T10:00:00.000Z", result=make_result(reward=0)
    )
    args = ["-X", "importtime", "-m", "silo_regress", "--color", "never", "check"]
    plain = _run(args, matching_project.root)
    assert plain.returncode == 1
    assert not _imported(plain.stderr) & set(HEAVY)
    # Colour no longer needs pygments (the terminal diff is coloured by hand, within
    # the line); the HTML page does: proof that the probe would notice.
    coloured = _run([*args[:-3], "--color", "always", "check"], matching_project.root)
    assert coloured.returncode == 1
    assert "\x1b[" in coloured.stdout
    assert not _imported(coloured.stderr) & set(HEAVY)
    page = _run([*args[:-1], "check", "--format", "html"], matching_project.root)
    assert page.returncode == 1
    assert "pygments" in _imported(page.stderr)
