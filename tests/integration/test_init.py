"""init, install-hook, the plain git hook and the GitHub Actions job, for real."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

import pytest
import yaml
from support.gitrepo import readme_snippet, recorded, rerun, run
from support.silofixture import SiloProject, git, git_init
from support.treestate import snapshot

from silo_regress.recording import scaffold

# --- init ---------------------------------------------------------------------------


def _bare_dir(root: Path) -> SiloProject:
    root.mkdir(parents=True)
    git_init(root)
    return SiloProject(root=root, runs_dir=root / ".silo" / "runs")


def test_init_sets_a_project_up_and_twice_changes_nothing(tmp_path: Path) -> None:
    project = _bare_dir(tmp_path / "agent")
    first = project.cli("init")
    assert first.exit_code == 0, first.output
    assert first.stdout.splitlines()[:3] == [
        'created    silo-regress.toml: config: runs-dir = ".silo/runs", '
        'baselines-dir = "baselines"',
        "created    baselines/.gitattributes: `* -text diff` for baselines",
        "created    .gitignore: .silo/ ignored",
    ]
    # No pyproject.toml (a Node project): the standalone file, keys at the top level.
    assert not (project.root / "pyproject.toml").exists()
    assert (project.root / "silo-regress.toml").read_text() == (
        'runs-dir = ".silo/runs"\nbaselines-dir = "baselines"\n'
    )
    attributes = (project.baselines / ".gitattributes").read_text().splitlines()
    assert "* -text diff" in attributes
    assert attributes[-1] == "*.json merge=silo-regress"
    merge = git(project.root, "check-attr", "merge", "--", "baselines/TASK-1.tally.json")
    assert merge.stdout == "baselines/TASK-1.tally.json: merge: silo-regress\n"
    assert ': git config merge.silo-regress.driver "silo-regress merge-driver %O %A %B %P"\n' in (
        first.stdout
    )
    # .venv/ too: every hook init prints looks for silo-regress in .venv/bin.
    assert (project.root / ".gitignore").read_text() == ".silo/\n.venv/\n"
    check = git(project.root, "check-attr", "text", "diff", "--", "baselines/TASK-1.result.json")
    assert check.stdout.splitlines() == [
        "baselines/TASK-1.result.json: text: unset",
        "baselines/TASK-1.result.json: diff: set",
    ]
    assert git(project.root, "check-ignore", "-q", ".silo/runs/run_1", check=False).returncode == 0
    before = snapshot(project.root)
    again = project.cli("init")
    assert again.exit_code == 0
    assert [line.split()[0] for line in again.stdout.splitlines()[:3]] == ["unchanged"] * 3
    assert snapshot(project.root) == before


def test_init_keeps_what_is_there(tmp_path: Path) -> None:
    project = _bare_dir(tmp_path / "agent")
    pyproject = project.root / "pyproject.toml"
    pyproject.write_bytes(b'[project]\r\nname = "agent"\r\n')
    (project.root / ".gitignore").write_text("node_modules")
    (project.baselines).mkdir()
    (project.baselines / ".gitattributes").write_text("*.md text\n")
    result = project.cli("init")
    assert result.exit_code == 0, result.output
    assert [line.split()[0] for line in result.stdout.splitlines()[:3]] == ["updated"] * 3
    assert pyproject.read_bytes() == (
        b'[project]\r\nname = "agent"\r\n\r\n[tool.silo-regress]\r\nruns-dir = ".silo/runs"'
        b'\r\nbaselines-dir = "baselines"\r\n'
    )
    assert (project.root / ".gitignore").read_text() == "node_modules\n.silo/\n.venv/\n"
    assert (project.baselines / ".gitattributes").read_text().startswith("*.md text\n# silo")
    before = snapshot(project.root)
    assert project.cli("init").exit_code == 0
    assert snapshot(project.root) == before


def test_init_follows_the_configured_baselines_directory(tmp_path: Path) -> None:
    project = _bare_dir(tmp_path / "agent")
    config = '[tool.silo-regress]\nbaselines-dir = "silo/expected"\n'
    (project.root / "pyproject.toml").write_text(config)
    (project.root / ".gitignore").write_text("/.silo/\n")
    result = project.cli("init")
    assert result.stdout.splitlines()[:3] == [
        "unchanged  pyproject.toml: [tool.silo-regress] section",
        "created    silo/expected/.gitattributes: `* -text diff` for baselines",
        "unchanged  .gitignore: .silo/ ignored",
    ]
    assert "        files: ^silo/expected/.*\\.json$\n" in result.stdout
    assert (project.root / "pyproject.toml").read_text() == config


def test_init_leaves_invalid_toml_alone(tmp_path: Path) -> None:
    project = _bare_dir(tmp_path / "agent")
    (project.root / "pyproject.toml").write_text("[tool.silo-regress\n")
    result = project.cli("init")
    assert result.exit_code == 3
    assert result.stderr.startswith(
        f"silo-regress: error: {project.root / 'pyproject.toml'}: not valid TOML, so it is left"
    )
    assert (project.root / "pyproject.toml").read_text() == "[tool.silo-regress\n"
    assert not (project.root / ".gitignore").exists()


def _indented(text: str) -> str:
    return "".join(f"    {line}" if line.strip() else line for line in text.splitlines(True))


def test_init_prints_the_snippets_of_the_readme(tmp_path: Path) -> None:
    project = _bare_dir(tmp_path / "agent")
    (project.root / "package.json").write_text('{"name": "agent"}\n')
    (project.root / "package-lock.json").write_text('{"lockfileVersion": 3}\n')
    out = project.cli("init").stdout
    assert _indented(readme_snippet("pre-commit-local")) in out
    documented = readme_snippet("github-actions", document="docs/install.md")
    assert _indented(documented) in out
    top = scaffold.Layout(prefix="", baselines="baselines")
    assert documented == scaffold.workflow(top, scaffold.find_node(project.root, top=None))
    hooks = yaml.safe_load(readme_snippet("pre-commit-local"))["repos"][0]["hooks"]
    ours = yaml.safe_load((Path(__file__).parents[2] / ".pre-commit-hooks.yaml").read_text())
    defaults = {"pass_filenames": True, "require_serial": False, "always_run": False}
    for local, published in zip(hooks, ours, strict=True):
        # The local entry finds the tool first (sh -c FINDER $0 ARGS...), then runs
        # the published hook's command with $0 naming the hook for SKIP=.
        sh, dash_c, _finder, name, *command = shlex.split(local["entry"])
        assert (sh, dash_c, name) == ("sh", "-c", published["id"])
        assert (local["id"], command) == (published["id"], shlex.split(published["entry"])[1:])
        for key, default in defaults.items():
            assert local.get(key, default) == published.get(key, default), key


# --- install-hook and the plain git hook ---------------------------------------------


def test_install_hook_writes_once_and_refuses_foreign_hooks(tmp_path: Path) -> None:
    project = recorded(tmp_path / "repo")
    hook = project.root / ".git" / "hooks" / "pre-commit"
    first = project.cli("install-hook")
    assert first.exit_code == 0, first.output
    assert first.stdout == (
        "created    .git/hooks/pre-commit: runs silo-regress check --staged --allow-no-runs\n"
    )
    assert os.access(hook, os.X_OK)
    script = hook.read_text()
    assert script.startswith(f"#!/bin/sh\n{scaffold.HOOK_MARKER}\n")
    assert "exec silo-regress check --staged --allow-no-runs\n" in script
    assert project.cli("install-hook").stdout.startswith("unchanged  .git/hooks/pre-commit")

    hook.write_text("#!/bin/sh\nmake lint\n")
    refused = project.cli("install-hook")
    assert refused.exit_code == 3
    assert refused.stderr == (
        f"silo-regress: error: {hook}: a pre-commit hook is already there; add "
        "`silo-regress check --staged --allow-no-runs` to it, or pass --force\n"
    )
    hook.write_text("#!/usr/bin/env bash\n# File generated by pre-commit\nINSTALL_PYTHON=x\n")
    assert "add the silo-regress hooks to .pre-commit-config.yaml" in (
        project.cli("install-hook").stderr
    )
    assert project.cli("install-hook", "--force").stdout.startswith("updated ")
    assert hook.read_text() == script


def test_install_hook_honours_hooks_path_and_subdirectory_projects(tmp_path: Path) -> None:
    root = tmp_path / "mono repo"
    root.mkdir()
    git_init(root)
    git(root, "config", "core.hooksPath", "tools/hooks")
    sub = root / "agents" / "crm"
    sub.mkdir(parents=True)
    (sub / "pyproject.toml").write_text("[tool.silo-regress]\n")
    result = SiloProject(root=sub, runs_dir=sub / ".silo" / "runs").cli("install-hook")
    assert result.exit_code == 0, result.output
    script = (root / "tools" / "hooks" / "pre-commit").read_text()
    assert "exec silo-regress --project agents/crm check --staged --allow-no-runs\n" in script


def _commit(project: SiloProject, *args: str) -> tuple[int, str]:
    """``git commit`` as a user would run it, from a shell without the venv on PATH."""
    done = run(project.root, "git", "commit", *args, path="/usr/bin:/bin", check=False)
    return done.returncode, done.stdout + done.stderr


def test_plain_hook_judges_what_the_commit_will_really_contain(tmp_path: Path) -> None:
    project = recorded(tmp_path / "repo")
    assert project.cli("install-hook").exit_code == 0
    (project.root / "notes.txt").write_text("notes\n")
    git(project.root, "add", "notes.txt")
    assert _commit(project, "-q", "-m", "Notes") == (
        0,
        "4 match (4 artifacts of 2 tasks) (baselines from git index)\n",
    )

    rerun(project, passed=False, reward=0.5)
    (project.root / "notes.txt").write_text("more notes\n")
    git(project.root, "add", "notes.txt")
    code, output = _commit(project, "-q", "-m", "More notes")
    assert code == 1
    assert "CHANGED  TASK-001 (crm-west)  result.json" in output
    assert "    - reward 1 -> 0.5" in output
    assert "  baseline: :baselines/TASK-001.result.json" in output
    assert (
        "If the new behaviour is intended, record it and stage the baselines: "
        "silo-regress record TASK-001 && git add baselines\n"
    ) in output
    # This hook is git's own, which SKIP= does not reach: the advice names the way that does.
    assert "or skip the hook once: git commit --no-verify\n" in output
    assert "SKIP=" not in output

    # Recorded and staged, but `git commit PATH` commits only PATH: from a temporary
    # index (GIT_INDEX_FILE) that still holds the old baseline, so it must be blocked.
    assert project.cli("record", "TASK-001").exit_code == 0
    git(project.root, "add", "baselines")
    assert _commit(project, "-q", "-m", "Only notes", "notes.txt")[0] == 1
    assert _commit(project, "-q", "-m", "Accept the new behaviour")[0] == 0

    # `git commit -a` stages the re-recorded baseline into index.lock for the hook.
    rerun(project, reward=0.25)
    assert project.cli("record", "TASK-001").exit_code == 0
    assert _commit(project, "-q", "-m", "Blocked: not staged", "--allow-empty")[0] == 1
    assert _commit(project, "-q", "-a", "-m", "Accept reward 0.25")[0] == 0
    assert git(project.root, "status", "--porcelain").stdout == ""

    shutil.rmtree(project.root / ".silo")
    code, output = _commit(project, "-q", "--allow-empty", "-m", "Fresh clone")
    assert code == 0
    assert "silo-regress: no runs under .silo/runs/, nothing to compare" in output


def test_plain_hook_without_silo_regress_says_so(tmp_path: Path) -> None:
    project = recorded(tmp_path / "repo")
    hook = project.root / ".git" / "hooks" / "pre-commit"
    hook.write_text(scaffold.hook_script(executable=None, project=""))
    hook.chmod(0o755)
    code, output = _commit(project, "-q", "--allow-empty", "-m", "x")
    assert code == 1
    assert "silo-regress: not found; install it, or remove" in output


def test_plain_hook_in_a_linked_worktree(tmp_path: Path) -> None:
    """In a linked worktree git exports an absolute GIT_DIR to the hook."""
    project = recorded(tmp_path / "repo")
    assert project.cli("install-hook").exit_code == 0
    worktree = tmp_path / "second worktree"
    git(project.root, "worktree", "add", "-q", "-b", "side", str(worktree))
    side = SiloProject(root=worktree, runs_dir=worktree / ".silo" / "runs", counter=50)
    rerun(side, reward=0.5)
    code, output = _commit(side, "-q", "--allow-empty", "-m", "Blocked")
    assert code == 1
    assert "    - reward 1 -> 0.5" in output
    assert side.cli("record", "TASK-001").exit_code == 0
    assert _commit(side, "-q", "-a", "-m", "Accept")[0] == 0
    assert git(project.root, "log", "-1", "--format=%s", "side").stdout == "Accept\n"


def test_init_infers_environment_agent_and_inputs_in_a_node_project(tmp_path: Path) -> None:
    project = _bare_dir(tmp_path / "agent")
    (project.root / "package.json").write_text('{"name": "agent"}\n')
    (project.root / "src").mkdir()
    (project.root / "src" / "crm.agent.ts").write_text("export default 1;\n")
    (project.root / "node_modules" / "x").mkdir(parents=True)
    (project.root / "node_modules" / "x" / "other.agent.ts").write_text("not ours\n")
    project.add_run("TASK-002", env="crm-west")
    result = project.cli("init")
    assert result.exit_code == 0, result.output
    assert (project.root / "silo-regress.toml").read_text() == (
        'runs-dir = ".silo/runs"\nbaselines-dir = "baselines"\nenvironment = "crm-west"\n'
        'agent = "src/crm.agent.ts"\ninputs = ["src/crm.agent.ts"]\n'
    )
    assert 'environment = "crm-west", agent = "src/crm.agent.ts"' in result.stdout
    # The quick start's dead end is gone: an unqualified record resolves through it.
    project.add_run("TASK-002", env="crm-east")
    assert project.cli("record", "TASK-002").exit_code == 0
    # The runs (no provenance record) predate the agent file just written: stale by time.
    assert "STALE RUN" in project.cli("check").stdout
    os.utime(project.root / "src" / "crm.agent.ts", (0, 0))
    assert project.cli("check").exit_code == 0


def test_init_infers_nothing_it_cannot_tell(tmp_path: Path) -> None:
    project = _bare_dir(tmp_path / "agent")
    (project.root / "a.agent.ts").write_text("a\n")
    (project.root / "b.agent.ts").write_text("b\n")
    project.add_run("TASK-001", env="crm-west")
    project.add_run("TASK-001", env="crm-east")
    assert project.cli("init").exit_code == 0
    text = (project.root / "silo-regress.toml").read_text()
    assert "environment" not in text and "agent" not in text


def test_init_writes_through_a_symlinked_pyproject_inside_the_repository(tmp_path: Path) -> None:
    project = _bare_dir(tmp_path / "agent")
    (project.root / "shared").mkdir()
    shared = project.root / "shared" / "pyproject.toml"
    shared.write_text('[project]\nname = "agent"\n')
    (project.root / "pyproject.toml").symlink_to(shared)
    result = project.cli("init")
    assert result.exit_code == 0, result.output
    assert (project.root / "pyproject.toml").is_symlink()
    assert "[tool.silo-regress]" in shared.read_text()
    assert not (project.root / "silo-regress.toml").exists()


@pytest.mark.parametrize(
    "name", ["pyproject.toml", ".gitignore", "baselines/.gitattributes", "silo-regress.toml"]
)
def test_init_never_writes_through_a_link_out_of_the_repository(tmp_path: Path, name: str) -> None:
    """A cloned repository can hold links to anywhere: init appends to none of them,
    and a dangling one never creates its target."""
    project = _bare_dir(tmp_path / "agent")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    victim = outside / "bashrc"
    victim.write_text("export PATH=/usr/bin\n")
    link = project.root / name
    link.parent.mkdir(parents=True, exist_ok=True)
    if name == "pyproject.toml":
        victim.write_text('[project]\nname = "victim"\n')
    link.symlink_to(victim)
    before = victim.read_bytes()
    if name == "silo-regress.toml":  # only written when there is no pyproject
        link.unlink()
        link.symlink_to(outside / "never-made")
    result = project.cli("init")
    assert result.exit_code == 3, result.output
    assert str(link) in result.output
    if name != "silo-regress.toml":
        assert f"outside {project.root}, so it is not written" in result.output
    assert victim.read_bytes() == before
    assert not (outside / "never-made").exists()


def test_init_from_a_subdirectory_sets_up_the_project(tmp_path: Path, monkeypatch: object) -> None:
    from typer.testing import CliRunner

    from silo_regress.cli import app

    project = _bare_dir(tmp_path / "agent")
    (project.root / "silo-regress.toml").write_text("")
    (project.root / "src").mkdir()
    monkeypatch.chdir(project.root / "src")  # type: ignore[attr-defined]
    result = CliRunner().invoke(app, ["init"])
    assert result.exit_code == 0, result.output
    assert (project.root / "baselines" / ".gitattributes").is_file()
    assert not (project.root / "src" / "silo-regress.toml").exists()
