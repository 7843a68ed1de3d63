"""Without fcntl (Windows) the package still imports and checks; a writer stops at its lock
with one sentence naming the supported platforms, before it touches the baselines."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.silofixture import SiloProject, make_project, make_result

# fcntl made unimportable, as on a platform without it; then the real CLI.
WITHOUT_FCNTL = (
    "import sys; sys.modules['fcntl'] = None; "
    "from silo_regress.cli import main; sys.argv[0] = 'silo-regress'; sys.exit(main())"
)


def _cli(project: SiloProject, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_FCNTL, "--project", str(project.root), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_reading_works_and_a_writer_names_the_platforms(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    project.add_run("TASK-001", result=make_result(reward=1))
    assert project.cli("record", "--all").exit_code == 0
    before = project.baseline_bytes()

    checked = _cli(project, "check")
    assert checked.returncode == 0, checked.stderr
    assert "Traceback" not in checked.stderr

    project.add_run("TASK-001", result=make_result(reward=0))
    recorded = _cli(project, "record", "--all")
    assert recorded.returncode == 3, recorded.stderr
    assert "Traceback" not in recorded.stderr
    assert "Linux and macOS" in recorded.stderr and "writer lock" in recorded.stderr
    assert project.baseline_bytes() == before, "nothing written without the lock"
    assert not (project.baselines / ".silo-regress-tmp").exists()
