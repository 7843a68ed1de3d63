"""-C pointing at a file, and a project directory reached through a symlink."""

from __future__ import annotations

from pathlib import Path

from support.gitrepo import SILO, commit_all, rerun, run
from support.silofixture import git_init, make_project


def test_minus_c_naming_a_file_is_one_sentence_and_exit_3(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x\n")
    for args in (("check",), ("check", "--staged", "--allow-no-runs")):
        done = run(tmp_path, SILO, "-C", "notes.txt", *args, check=False)
        assert done.returncode == 3
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1
        assert lines[0].endswith(
            "notes.txt: is a file, not a project directory (--project/-C names the directory "
            "that holds the project's config, baselines/ and .silo/)"
        )


def test_a_project_reached_through_a_symlink_is_still_gated(tmp_path: Path) -> None:
    mono = tmp_path / "mono"
    mono.mkdir()
    git_init(mono)
    (mono / ".gitignore").write_text(".silo/\n")
    project = make_project(mono / "agents" / "crm")
    project.add_run("TASK-001")
    assert project.cli("record", "--all").exit_code == 0
    commit_all(mono, "A project")
    (tmp_path / "crm-link").symlink_to(mono / "agents" / "crm")
    rerun(project, passed=False, reward=0.5)
    done = run(
        tmp_path, SILO, "-C", "crm-link", "check", "--staged", "--allow-no-runs", check=False
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "CHANGED  TASK-001" in done.stdout
