"""One pre-commit config at the top of a monorepo holding two Silo projects
(agents/crm and agents/hr), driven through the real pre-commit framework.

With one check hook per project a regression in either blocks the commit. With one
hook and no --project the hook cannot tell which project it gates: it fails (exit 3)
naming both baselines directories and the --project for each, never only the first.
"""

from __future__ import annotations

import re
from pathlib import Path

from support.gitrepo import BIN, SILO, commit_all, framework_commit, rerun, run
from support.silofixture import SiloProject, git, git_init, make_project
from test_precommit import HookRepo, hook_repo  # noqa: F401  (the session's pre-commit install)

PROJECTS = ("agents/crm", "agents/hr")


def _monorepo(root: Path) -> dict[str, SiloProject]:
    """MONO/ a git repository with two recorded, committed projects below its top."""
    root.mkdir(parents=True)
    git_init(root)
    (root / ".gitignore").write_text(".silo/\n")
    projects = {}
    for name in PROJECTS:
        project = make_project(root / name)
        project.add_run("TASK-001")
        assert project.cli("record", "--all").exit_code == 0
        projects[name] = project
    commit_all(root, "Two projects below the top")
    return projects


def _config(hook_repo: HookRepo, *projects: str) -> str:  # noqa: F811
    """The README's published hooks, with one check hook per project given."""
    config = hook_repo.config()
    if not projects:
        return config
    hooks = "".join(
        f"      - id: silo-regress-check\n        args: [--project, {p}]\n" for p in projects
    )
    return config.replace("      - id: silo-regress-check\n", hooks)


def _install(root: Path, config: str, home: Path) -> None:
    (root / ".pre-commit-config.yaml").write_text(config)
    run(root, BIN / "pre-commit", "install", env={"PRE_COMMIT_HOME": str(home)})
    commit_all(root, "Use pre-commit")


def _last_subject(root: Path) -> str:
    return git(root, "log", "--format=%s", "-1").stdout.strip()


def test_one_hook_per_project_blocks_a_regression_in_either(
    hook_repo: HookRepo,  # noqa: F811
    tmp_path: Path,
) -> None:
    for regressing in PROJECTS:
        mono = tmp_path / regressing.replace("/", "-")
        projects = _monorepo(mono)
        _install(mono, _config(hook_repo, *PROJECTS), hook_repo.home)
        code, output = framework_commit(mono, hook_repo.home, "Nothing changed")
        assert code == 0, output
        assert len(re.findall(r"silo-regress check \([^\n]*\.+Passed", output)) == 2, output

        rerun(projects[regressing], passed=False, reward=0.5)
        code, output = framework_commit(mono, hook_repo.home, "A regressing run")
        assert code == 1, output
        assert len(re.findall(r"silo-regress check \([^\n]*\.+Failed", output)) == 1, output
        assert len(re.findall(r"silo-regress check \([^\n]*\.+Passed", output)) == 1, output
        assert "CHANGED  TASK-001 (crm-west)  result.json" in output
        assert f"  baseline: :{regressing}/baselines/TASK-001.result.json" in output
        assert _last_subject(mono) == "Nothing changed"


def test_one_hook_without_project_names_every_project(
    hook_repo: HookRepo,  # noqa: F811
    tmp_path: Path,
) -> None:
    mono = tmp_path / "mono"
    projects = _monorepo(mono)
    # The check itself, as the hook runs it: exit 3, both places, a --project for each.
    done = run(mono, SILO, "check", "--staged", "--allow-no-runs", check=False)
    assert done.returncode == 3, done.stdout + done.stderr
    message = done.stdout + done.stderr
    assert "agents/crm/baselines/, agents/hr/baselines/" in message
    assert "--project agents/crm, --project agents/hr" in message
    assert "args: [--project, agents/crm]; args: [--project, agents/hr]" in message
    assert "Traceback" not in message

    _install(mono, _config(hook_repo), hook_repo.home)
    rerun(projects["agents/hr"], passed=False, reward=0.5)
    code, output = framework_commit(mono, hook_repo.home, "A regressing run in the second project")
    assert code == 1, output
    assert re.search(r"silo-regress check \([^\n]*\.+Failed", output)
    assert "- exit code: 3" in output
    for name in PROJECTS:
        assert f"{name}/baselines/" in output
        assert f"args: [--project, {name}]" in output
    assert _last_subject(mono) == "Use pre-commit"

    # Each suggested hook, pasted as printed, gates its own project.
    _install(mono, _config(hook_repo, *PROJECTS), hook_repo.home)
    code, output = framework_commit(mono, hook_repo.home, "Still regressing")
    assert code == 1, output
    assert "  baseline: :agents/hr/baselines/TASK-001.result.json" in output


def test_hook_in_a_linked_worktree_blocks_a_regression_and_passes_a_match(
    hook_repo: HookRepo,  # noqa: F811
    tmp_path: Path,
) -> None:
    """`git worktree add`: the hook runs in the linked worktree, whose .git is a file and
    whose index lives under the main repository's .git/worktrees/NAME."""
    from support.gitrepo import recorded

    main = tmp_path / "main"
    project = recorded(main, tasks=("TASK-001",))
    _install(main, hook_repo.config(), hook_repo.home)
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", "-b", "feature", str(linked))
    assert (linked / ".git").is_file()
    there = SiloProject(root=linked, runs_dir=linked / ".silo" / "runs")

    there.add_run("TASK-001")
    code, output = framework_commit(linked, hook_repo.home, "A matching run")
    assert code == 0, output
    assert re.search(r"silo-regress check \([^\n]*\.+Passed", output)
    assert _last_subject(linked) == "A matching run"

    rerun(there, passed=False, reward=0.5)
    code, output = framework_commit(linked, hook_repo.home, "A regressing run")
    assert code == 1, output
    assert "CHANGED  TASK-001 (crm-west)  result.json" in output
    assert "  baseline: :baselines/TASK-001.result.json" in output
    assert _last_subject(linked) == "A matching run"
    assert _last_subject(main) == "Use pre-commit"

    # Accepted in the worktree: recorded there, staged there, committed there.
    assert there.cli("record", "TASK-001").exit_code == 0
    git(linked, "add", "baselines")
    code, output = framework_commit(linked, hook_repo.home, "Accept it")
    assert code == 0, output
    assert _last_subject(linked) == "Accept it"
    # The main worktree's index still holds the old baseline, and its runs match it.
    assert b'"reward": 1' in (project.baselines / "TASK-001.result.json").read_bytes()
    done = run(main, SILO, "check", "--staged", "--allow-no-runs", check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_install_hook_from_a_linked_worktree_gates_its_commits(tmp_path: Path) -> None:
    """install-hook run in a linked worktree writes the hook git runs there (the common
    hooks directory), and that hook judges the linked worktree's index."""
    from support.gitrepo import recorded

    main = tmp_path / "main"
    recorded(main, tasks=("TASK-001",))
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", "-b", "feature", str(linked))
    done = run(linked, SILO, "install-hook")
    assert done.returncode == 0, done.stderr
    there = SiloProject(root=linked, runs_dir=linked / ".silo" / "runs")
    there.add_run("TASK-001")
    done = run(linked, "git", "commit", "-q", "--allow-empty", "-m", "match", check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    rerun(there, passed=False, reward=0.5)
    done = run(linked, "git", "commit", "-q", "--allow-empty", "-m", "regress", check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "CHANGED  TASK-001 (crm-west)  result.json" in done.stdout + done.stderr
    assert "git commit --no-verify" in done.stdout + done.stderr
    assert _last_subject(linked) == "match"
