"""--allow-no-runs passes only when there is nothing anywhere to compare.

A monorepo whose project sits in agents/crm: a check run at the top (as the
pre-commit framework runs it) finds no project there. Passing would wave through
every regression of agents/crm, so it fails (exit 3) naming where it looked and the
--project that works; with --project agents/crm the regression blocks the commit.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from support.gitrepo import BIN, SILO, commit_all, framework_commit, rerun, run
from support.silofixture import SiloProject, git, git_init, make_project
from test_precommit import HookRepo, hook_repo  # noqa: F401  (the session's pre-commit install)


def _monorepo(root: Path) -> SiloProject:
    """MONO/ a git repository; MONO/agents/crm a recorded, committed project."""
    root.mkdir(parents=True)
    git_init(root)
    (root / ".gitignore").write_text(".silo/\n")
    project = make_project(root / "agents" / "crm")
    project.add_run("TASK-001")
    assert project.cli("record", "--all").exit_code == 0
    commit_all(root, "A project below the top")
    return project


def _check(cwd: Path, *args: str) -> tuple[int, str]:
    done = run(cwd, SILO, *args, check=False)
    return done.returncode, done.stdout + done.stderr


def test_a_check_at_the_top_of_a_monorepo_fails_instead_of_passing(tmp_path: Path) -> None:
    mono = tmp_path / "mono"
    project = _monorepo(mono)
    rerun(project, passed=False, reward=0.5)
    code, output = _check(mono, "check", "--staged", "--allow-no-runs")
    assert code == 3, output
    assert "no silo-regress project found" in output
    assert f"in {mono}" in output  # where it looked
    assert "baselines lie below ./ in agents/crm/baselines/" in output
    assert "--project agents/crm" in output
    code, output = _check(mono, "check", "--staged", "--allow-no-runs", "--project", "agents/crm")
    assert code == 1, output
    assert "CHANGED  TASK-001" in output


def test_a_project_found_without_baselines_does_not_hide_those_below_it(tmp_path: Path) -> None:
    """Silo's runs at the top make the top a project (defaults, no baselines there)."""
    mono = tmp_path / "mono"
    _monorepo(mono)
    (mono / ".silo" / "runs").mkdir(parents=True)
    code, output = _check(mono, "check", "--staged", "--allow-no-runs")
    assert code == 3, output
    assert f"project {mono} has no config file and no baselines/" in output
    assert "agents/crm/baselines/" in output


def test_no_baselines_anywhere_passes_with_a_note(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / "src").mkdir(parents=True)
    git_init(root)
    (root / "src" / "main.py").write_text("print(1)\n")
    code, output = _check(root, "check", "--staged", "--allow-no-runs")
    assert code == 0, output
    assert "nothing to compare" in output
    code, output = _check(root / "src", "check", "--allow-no-runs")
    assert code == 0, output
    assert "nothing to compare" in output


def test_no_runs_at_all_still_passes_with_a_note(tmp_path: Path) -> None:
    mono = tmp_path / "mono"
    project = _monorepo(mono)
    shutil.rmtree(project.root / ".silo")
    code, output = _check(mono, "--project", "agents/crm", "check", "--staged", "--allow-no-runs")
    assert code == 0, output
    assert "no runs under .silo/runs/" in output


def test_outside_git_the_directory_is_walked(tmp_path: Path) -> None:
    project = make_project(tmp_path / "loose" / "agents" / "crm")
    project.add_run("TASK-001")
    assert project.cli("record", "--all").exit_code == 0
    (project.root / "pyproject.toml").unlink()  # only the baselines mark the project
    code, output = _check(tmp_path / "loose", "check", "--allow-no-runs")
    assert code == 3, output
    assert "agents/crm/baselines/" in output


def _precommit_config(hook_repo: HookRepo, *args: str) -> str:  # noqa: F811
    config = hook_repo.config()
    if not args:
        return config
    listed = ", ".join(args)
    return config.replace(
        "- id: silo-regress-check", f"- id: silo-regress-check\n        args: [{listed}]"
    )


def test_real_pre_commit_at_the_top_of_a_monorepo_blocks_a_regression(
    hook_repo: HookRepo,  # noqa: F811
    tmp_path: Path,
) -> None:
    for name, args in (("with", ("--project", "agents/crm")), ("without", ())):
        mono = tmp_path / name
        project = _monorepo(mono)
        (mono / ".pre-commit-config.yaml").write_text(_precommit_config(hook_repo, *args))
        run(mono, BIN / "pre-commit", "install", env={"PRE_COMMIT_HOME": str(hook_repo.home)})
        commit_all(mono, "Use pre-commit")
        code, output = framework_commit(mono, hook_repo.home, "Nothing changed")
        if args:
            assert code == 0, output
        else:
            assert code == 1, output  # pre-commit reports any hook's failure as 1
            assert "--project agents/crm" in output
        rerun(project, passed=False, reward=0.5)
        code, output = framework_commit(mono, hook_repo.home, "A regressing run")
        assert code == 1, output
        assert re.search(r"silo-regress check \(newest runs match[^\n]*\.+Failed", output)
        if args:
            assert "CHANGED  TASK-001 (crm-west)  result.json" in output
        else:
            assert "baselines lie below ./ in agents/crm/baselines/" in output
        last = "Nothing changed" if args else "Use pre-commit"
        assert git(mono, "log", "--format=%s", "-1").stdout.strip() == last
