"""The hooks under the real pre-commit framework, installed from this repository.

pre-commit installs a hook repository by pip-installing it into a virtualenv, which
takes seconds; one PRE_COMMIT_HOME is shared by the whole session so that happens
once. The hook repository is a temporary git repository holding a copy of this
working tree's package (uncommitted changes included): pre-commit clones what is
committed, and `pre-commit try-repo` would leave out files nobody has added yet.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.gitrepo import BIN, commit_all, readme_snippet, recorded, rerun, run, system_path
from support.silofixture import SiloProject, git, git_init, make_result

HERE = Path(__file__).resolve().parents[2]
# Captured before any test points HOME at a temporary directory, so pip's cache is reused.
USER_ENVIRONMENT = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


@dataclass(frozen=True)
class HookRepo:
    path: Path
    rev: str
    home: Path  # PRE_COMMIT_HOME

    def config(self) -> str:
        """The README's configuration for this repository, pointed at the copy."""
        snippet = readme_snippet("pre-commit-remote")
        snippet = re.sub(r"repo: \S+", f"repo: {self.path}", snippet, count=1)
        return re.sub(r"rev: \S+", f"rev: {self.rev}", snippet, count=1)


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> HookRepo:
    root = tmp_path_factory.mktemp("hook-repo")
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(HERE / name, root / name)
    shutil.copytree(
        HERE / "silo_regress",
        root / "silo_regress",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    git_init(root)
    rev = commit_all(root, "silo-regress under test")
    repo = HookRepo(path=root, rev=rev, home=tmp_path_factory.mktemp("pre-commit-home"))
    # Install the hook environment once, with the user's HOME (pip's cache) intact.
    warm = tmp_path_factory.mktemp("warm-up")
    git_init(warm)
    (warm / ".pre-commit-config.yaml").write_text(repo.config())
    env = {**USER_ENVIRONMENT, "PRE_COMMIT_HOME": str(repo.home)}
    run(warm, BIN / "pre-commit", "install-hooks", env=env)
    return repo


def _framework_project(root: Path, config: str, home: Path) -> SiloProject:
    project = recorded(root)
    (root / ".pre-commit-config.yaml").write_text(config)
    run(root, BIN / "pre-commit", "install", env={"PRE_COMMIT_HOME": str(home)})
    commit_all(project, "Use pre-commit")
    return project


# A commit from a shell without the venv on PATH: the published hooks need none.
NO_VENV = "/usr/bin:/bin"


def _commit(project: SiloProject, home: Path, *args: str, path: str = NO_VENV) -> tuple[int, str]:
    done = run(
        project.root,
        "git",
        "commit",
        "-q",
        *args,
        env={"PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"},
        path=path,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def _gate(project: SiloProject, home: Path, *, path: str = NO_VENV) -> None:
    """Blocked while the newest run differs; allowed once recorded and staged; no runs."""

    def commit(*args: str) -> tuple[int, str]:
        return _commit(project, home, *args, path=path)

    (project.root / "notes.txt").write_text("notes\n")
    git(project.root, "add", "notes.txt")
    code, output = commit("-m", "Notes")
    assert code == 0, output
    assert re.search(r"silo-regress check \(newest runs match[^\n]*\.+Passed", output)

    rerun(project, passed=False, reward=0.5)
    (project.root / "notes.txt").write_text("more notes\n")
    git(project.root, "add", "notes.txt")
    code, output = commit("-m", "More notes")
    assert code == 1
    assert re.search(r"silo-regress check \(newest runs match[^\n]*\.+Failed", output)
    assert "CHANGED  TASK-001 (crm-west)  result.json" in output
    assert "    - now FAILS (passed: true -> false)" in output
    assert "    - reward 1 -> 0.5" in output
    # The hook judged the staged baselines, says so, and how to get past it.
    assert "  baseline: :baselines/TASK-001.result.json" in output
    assert "silo-regress record TASK-001 && git add baselines" in output
    assert "or skip this hook once: SKIP=silo-regress-check git commit\n" in output
    assert "--no-verify" not in output, "pre-commit runs this hook: SKIP= is the way"

    assert project.cli("record", "TASK-001").exit_code == 0
    git(project.root, "add", "baselines/")
    code, output = commit("-m", "Accept the stricter check")
    assert code == 0, output
    assert re.search(r"silo-regress fmt \(staged baselines are canonical\)\.+Passed", output)
    assert git(project.root, "status", "--porcelain").stdout == ""

    shutil.rmtree(project.root / ".silo")
    code, output = commit("--allow-empty", "-m", "Fresh clone")
    assert code == 0, output
    assert "Passed" in output


def test_published_hooks_gate_commits(hook_repo: HookRepo, tmp_path: Path) -> None:
    project = _framework_project(tmp_path / "agent", hook_repo.config(), hook_repo.home)
    _gate(project, hook_repo.home)


def test_published_fmt_hook_rejects_non_canonical_and_volatile_baselines(
    hook_repo: HookRepo, tmp_path: Path
) -> None:
    project = _framework_project(tmp_path / "agent", hook_repo.config(), hook_repo.home)
    baseline = project.baselines / "TASK-001.result.json"
    canonical = baseline.read_bytes()
    baseline.write_bytes(canonical.replace(b"\n  ", b"\n    "))  # 4-space indent
    git(project.root, "add", "baselines")
    code, output = _commit(project, hook_repo.home, "-m", "Hand-edited baseline")
    assert code == 1
    assert re.search(r"silo-regress fmt \(staged baselines are canonical\)\.+Failed", output)
    assert (
        "not-canonical   baselines/TASK-001.result.json: would be rewritten by `silo-regress fmt`"
        in output
    )
    assert "1 of 1 baseline files need attention; run `silo-regress fmt` to rewrite them" in output

    assert project.cli("fmt").exit_code == 0
    assert baseline.read_bytes() == canonical
    # No run at hand: only a time from the last 30 days of this clock is judged.
    today = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    baseline.write_bytes(canonical.replace(b'"error": null', b'"error": "' + today + b'"'))
    git(project.root, "add", "baselines")
    code, output = _commit(project, hook_repo.home, "-m", "A timestamp")
    assert code == 1
    assert "volatile        baselines/TASK-001.result.json: /error" in output


def test_published_hooks_block_a_baseline_whose_name_maps_to_no_task(
    hook_repo: HookRepo, tmp_path: Path
) -> None:
    project = _framework_project(tmp_path / "agent", hook_repo.config(), hook_repo.home)
    (project.baselines / "crm~west").mkdir()
    shutil.copy(
        project.baselines / "TASK-001.result.json",
        project.baselines / "crm~west/TASK-001.result.json",
    )
    git(project.root, "add", "baselines")
    code, output = _commit(project, hook_repo.home, "-m", "A hand-made baseline")
    assert code == 1
    assert re.search(r"silo-regress fmt \(staged baselines are canonical\)\.+Failed", output)
    assert re.search(r"silo-regress check \(newest runs match[^\n]*\.+Failed", output)
    why = "named like a baseline, but its environment name 'crm~west' is refused"
    assert f"refused         baselines/crm~west/TASK-001.result.json: {why}" in output
    assert f"  :baselines/crm~west/TASK-001.result.json: {why}" in output


def test_readme_local_configuration_gates_commits(hook_repo: HookRepo, tmp_path: Path) -> None:
    """The snippet `init` prints: language system, the silo-regress on PATH."""
    project = _framework_project(
        tmp_path / "agent", readme_snippet("pre-commit-local"), hook_repo.home
    )
    _gate(project, hook_repo.home, path=system_path())  # a developer's activated venv


def test_local_configuration_finds_the_project_venv_off_path(
    hook_repo: HookRepo, tmp_path: Path
) -> None:
    """A commit from a shell (or IDE) without the venv on PATH is still gated: the entry
    finds .venv/bin/silo-regress; with no tool anywhere it says how to go on."""
    project = _framework_project(
        tmp_path / "agent", readme_snippet("pre-commit-local"), hook_repo.home
    )
    (project.root / "notes.txt").write_text("notes\n")
    git(project.root, "add", "notes.txt")
    code, output = _commit(project, hook_repo.home, "-m", "No tool anywhere")
    assert code == 1
    assert "silo-regress is not on PATH nor in .venv/bin or venv/bin" in output
    assert "SKIP=silo-regress-check git commit" in output

    venv_bin = project.root / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "silo-regress").symlink_to(BIN / "silo-regress")
    ignore = project.root / ".gitignore"
    ignore.write_text(ignore.read_text() + ".venv/\n")
    git(project.root, "add", ".gitignore")
    _gate(project, hook_repo.home)  # PATH is /usr/bin:/bin only


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def test_published_hook_blocks_a_commit_made_from_a_stale_run(
    hook_repo: HookRepo, tmp_path: Path
) -> None:
    """Change the agent, stage it, commit without re-running Silo: blocked with stale-run."""
    from support.gitrepo import repo_project

    from silo_regress.runs.provenance import Provenance, write_provenance

    project = repo_project(tmp_path / "agent", config='agent = "silo.agent.ts"\n')
    (project.root / "silo.agent.ts").write_text("export default 1;\n")
    (project.root / "flaky.agent.ts").write_text("export default 2;\n")
    time.sleep(0.05)
    project.add_run("TASK-001", started=_now())
    assert project.cli("record", "TASK-001").exit_code == 0
    (project.root / ".pre-commit-config.yaml").write_text(hook_repo.config())
    run(project.root, BIN / "pre-commit", "install", env={"PRE_COMMIT_HOME": str(hook_repo.home)})
    commit_all(project, "Record TASK-001")

    time.sleep(0.05)
    (project.root / "silo.agent.ts").write_text("export default 'changed';\n")
    git(project.root, "add", "silo.agent.ts")
    code, output = _commit(project, hook_repo.home, "-m", "A new agent, not re-run")
    assert code == 1
    assert "STALE RUN  TASK-001 (crm-west)  result.json" in output
    assert "silo.agent.ts was modified at" in output
    assert "1 stale run (silo.agent.ts changed since it was made); make fresh ones: " in output
    assert "silo-regress run TASK-001\n" in output
    assert "or skip this hook once: SKIP=silo-regress-check git commit" in output

    time.sleep(0.05)
    project.add_run("TASK-001", started=_now())  # re-run: a newer run, same behaviour
    code, output = _commit(project, hook_repo.home, "-m", "A new agent, re-run")
    assert code == 0, output

    # An experimental run with another agent, then an unrelated commit: the hook
    # names the run as stale (made by flaky.agent.ts), never as a behaviour change.
    flaky = project.add_run("TASK-001", started=_now(), result=make_result(passed=False))
    from silo_regress.project.config import load_config
    from silo_regress.runs.provenance import start_batch

    record: Provenance = start_batch(load_config(project.root)).record_for(
        environment="crm-west",
        task_id="TASK-001",
        agent="flaky.agent.ts",
        silo_command=("npx", "silo", "run"),
    )
    write_provenance(flaky, record)
    (project.root / "notes.txt").write_text("unrelated\n")
    git(project.root, "add", "notes.txt")
    code, output = _commit(project, hook_repo.home, "-m", "Unrelated")
    assert code == 1
    assert "STALE RUN  TASK-001" in output
    assert "it was made by agent flaky.agent.ts, not the configured silo.agent.ts" in output
    assert "CHANGED" not in output and "now FAILS" not in output
