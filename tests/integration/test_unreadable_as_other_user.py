"""Unreadable files, read by a user who cannot read them: the CLI names the file, exit 3.

Root reads any file, so tests that chmod a file to 0 skip as root (tests/support's
``unreadable``), and CI runs as root. These run the real CLI in a subprocess as the
unprivileged user ``nobody`` (uid/gid 65534, no other groups) when the tests run as root, and as the
user running them otherwise. The project lies in a directory under /tmp that user can
reach and owns (so caches can be written); only the file under test is root's, mode 0600.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.silofixture import SiloProject, make_project, make_result

from silo_regress.project.taskref import TaskRef
from silo_regress.stats.tally import Tally, serialize_tally
from silo_regress.store.baselinenames import tally_relpath

NOBODY = 65534


# subprocess drops to this user in the child before exec: no supplementary groups.
AS_NOBODY: dict[str, Any] = {"user": NOBODY, "group": NOBODY, "extra_groups": []}


def _needs_posix_root() -> None:
    if os.name != "posix":
        pytest.skip("POSIX permissions")
    if os.geteuid() != 0:
        pytest.skip("not root: tests/cli's unreadable() tests cover this user")


@dataclass(frozen=True)
class Interpreter:
    executable: str
    pythonpath: str | None  # for a system interpreter of the same version: this one's paths


def _find_interpreter(cwd: Path) -> tuple[Interpreter | None, str]:
    """This interpreter if ``nobody`` can run it; else the system's python3 of the same
    version given this one's import paths (a venv over a python under /root, mode 0700)."""
    import silo_regress

    package_root = str(Path(silo_regress.__file__).resolve().parent.parent)
    paths = os.pathsep.join([package_root, *(p for p in sys.path if "-packages" in p)])
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [Interpreter(sys.executable, None)] + [
        Interpreter(found, paths)
        for found in (shutil.which(version, path="/usr/local/bin:/usr/bin:/bin"),)
        if found is not None
    ]
    why = ""
    for candidate in candidates:
        env = {"PATH": "/usr/bin:/bin"}
        if candidate.pythonpath:
            env["PYTHONPATH"] = candidate.pythonpath
        try:
            probe = subprocess.run(
                [candidate.executable, "-c", "import silo_regress.cli"],
                **AS_NOBODY,
                env=env,
                capture_output=True,
                text=True,
                cwd=cwd,
                check=False,
            )
        except OSError as exc:
            why += f"{candidate.executable}: {exc.strerror}; "
            continue
        if probe.returncode == 0:
            return candidate, ""
        why += f"{candidate.executable}: {probe.stderr.strip()[-200:]}; "
    return None, why


def _run(
    interpreter: Interpreter, root: Path, *args: str, home: Path
) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "NO_COLOR": "1",
        "LANG": "C.UTF-8",
    }
    if interpreter.pythonpath:
        env["PYTHONPATH"] = interpreter.pythonpath
    return subprocess.run(
        [interpreter.executable, "-m", "silo_regress", "--project", str(root), *args],
        env=env,
        cwd=root,
        **AS_NOBODY,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def interpreter() -> Interpreter:
    _needs_posix_root()
    found, why = _find_interpreter(Path("/"))
    if found is None:
        message = f"user {NOBODY} can run no python with silo_regress: {why}"
        if os.environ.get("CI"):
            pytest.fail(message)  # in CI (root) this test must run, never skip
        pytest.skip(message)
    return found


@pytest.fixture
def shared(interpreter: Interpreter) -> Iterator[Path]:
    """A directory under /tmp that ``nobody`` can reach (tmp_path's parents are 0700)."""
    path = Path(tempfile.mkdtemp(prefix="silo-other-user-", dir="/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _hand_over(root: Path) -> None:
    """Everything below ``root`` to nobody, as a checkout of that user's would be."""
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            os.lchown(os.path.join(dirpath, name), NOBODY, NOBODY)
    os.chown(root, NOBODY, NOBODY)


@contextlib.contextmanager
def _roots_only(path: Path) -> Iterator[None]:
    os.chown(path, 0, 0)
    path.chmod(0o600)
    yield


def _recorded(shared: Path, config: str = "") -> tuple[SiloProject, Path]:
    project = make_project(shared / "project", config=config)
    project.add_run("TASK-001")
    recorded = project.cli("record", "TASK-001")
    assert recorded.exit_code == 0, recorded.output
    home = shared / "home"
    home.mkdir()
    _hand_over(shared)
    return project, home


def test_an_unreadable_baseline_is_a_named_error(interpreter: Interpreter, shared: Path) -> None:
    project, home = _recorded(shared)
    path = project.baselines / "TASK-001.result.json"
    with _roots_only(path):
        checked = _run(interpreter, project.root, "check", home=home)
    assert checked.returncode == 3, checked.stderr
    assert checked.stderr == (
        "silo-regress: error: baselines/TASK-001.result.json: cannot read: Permission denied\n"
    )
    assert checked.stdout == ""  # a check that could not read its baseline says nothing passed


def _record_with_one_locked(
    interpreter: Interpreter, shared: Path, name: str
) -> tuple[SiloProject, subprocess.CompletedProcess[str]]:
    """``record TASK-001`` as nobody, when the only run's ``name`` is root's alone."""
    project = make_project(shared / "project")
    run = project.add_run("TASK-001", name="run_locked")
    home = shared / "home"
    home.mkdir()
    _hand_over(shared)
    with _roots_only(run / name):
        return project, _run(interpreter, project.root, "record", "TASK-001", home=home)


def test_an_unreadable_result_of_the_only_run_is_a_named_error(
    interpreter: Interpreter, shared: Path
) -> None:
    project, recorded = _record_with_one_locked(interpreter, shared, "result.json")
    assert recorded.returncode == 3, (recorded.stdout, recorded.stderr)
    # The file and the real cause, as tests/cli/test_runs.py (skipped as root) expects:
    # advice to run the task again would not fix a permission.
    assert recorded.stderr.startswith("silo-regress: error: .silo/runs/run_locked: ")
    assert "task TASK-001 has no complete run to record" in recorded.stderr
    assert (
        "(.silo/runs/run_locked/result.json cannot be read: Permission denied); "
        "make it readable, or run the task again" in recorded.stderr
    )
    assert "Traceback" not in recorded.stderr
    assert not project.baselines.exists()


def test_a_newer_unreadable_run_is_passed_over_by_name(
    interpreter: Interpreter, shared: Path
) -> None:
    project, home = _recorded(shared)
    run = project.add_run("TASK-001", name="run_locked")
    _hand_over(shared)
    with _roots_only(run / "result.json"):
        recorded = _run(interpreter, project.root, "record", "TASK-001", home=home)
    assert recorded.returncode == 0, (recorded.stdout, recorded.stderr)
    assert "passed over newer" in recorded.stdout and "run_locked" in recorded.stdout
    assert "unchanged baselines/TASK-001.result.json" in recorded.stdout


def test_an_unreadable_config_is_a_named_error(interpreter: Interpreter, shared: Path) -> None:
    project, home = _recorded(shared)
    config = project.root / "silo-regress.toml"
    config.write_text('runs-dir = ".silo/runs"\n', encoding="utf-8")
    _hand_over(shared)
    with _roots_only(config):
        checked = _run(interpreter, project.root, "check", home=home)
    assert checked.returncode == 3, checked.stderr
    assert f"{config}: cannot read: Permission denied" in checked.stderr
    assert "Traceback" not in checked.stderr


def test_an_unreadable_tally_of_a_stats_task_is_a_named_error(
    interpreter: Interpreter, shared: Path
) -> None:
    project, home = _recorded(shared)
    with (project.root / "pyproject.toml").open("a", encoding="utf-8") as config:
        config.write('gate = "stats"\n')  # the [tool.silo-regress] table is the file's last
    for passed in (True, True, False):
        project.add_run("TASK-001", result=make_result(passed=passed))
    tally = project.baselines / tally_relpath(TaskRef("TASK-001"))
    tally.write_bytes(serialize_tally(Tally(rollouts=8, passed=7)))
    _hand_over(shared)
    with _roots_only(tally):
        checked = _run(interpreter, project.root, "check", home=home)
    assert checked.returncode == 3, (checked.stdout, checked.stderr)
    assert "TASK-001.tally.json" in checked.stderr and "Permission denied" in checked.stderr
    assert "passed" not in checked.stdout


def test_an_unreadable_run_json_is_skipped_by_name(interpreter: Interpreter, shared: Path) -> None:
    project, recorded = _record_with_one_locked(interpreter, shared, "run.json")
    assert recorded.returncode == 3, (recorded.stdout, recorded.stderr)
    assert "run_locked: skipped, cannot read run.json: Permission denied" in recorded.stderr
    assert "no run of task TASK-001" in recorded.stderr
    assert not project.baselines.exists()
