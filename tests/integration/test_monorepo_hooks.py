"""The hooks `init` prints for a project below the top of its repository (a monorepo),
pasted where each tool reads them (the repository's top) and driven for real: the
pre-commit framework (local and published hooks), husky's way of running a hook, and
lefthook's commands. Each blocks a regressing run and passes once it is recorded.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import yaml
from support.gitrepo import BIN, commit_all, run, system_path
from support.silofixture import SiloProject, git, git_init, make_result
from test_node_workflow import printed_blocks
from test_precommit import NO_VENV, HookRepo, hook_repo  # noqa: F401  (the fixture)

PREFIX = "agents/crm"


def _monorepo(tmp_path: Path) -> tuple[Path, SiloProject, list[str]]:
    """MONO/agents/crm: a Node project set up by `init`, one task recorded and committed."""
    top = tmp_path / "mono"
    project_dir = top / PREFIX
    project_dir.mkdir(parents=True)
    git_init(top)
    (project_dir / "package.json").write_text('{"name": "crm"}\n')
    (top / "README.md").write_text("other projects live here too\n")
    project = SiloProject(root=project_dir, runs_dir=project_dir / ".silo" / "runs")
    result = project.cli("init", "--hook", "all")
    assert result.exit_code == 0, result.output
    project.add_run("TASK-001")
    assert project.cli("record", "--all").exit_code == 0
    commit_all(top, "Set up the crm agent")
    return top, project, printed_blocks(result.stdout)


def _commit(top: Path, message: str, *, env: dict[str, str], path: str) -> tuple[int, str]:
    (top / "README.md").write_text(f"{message}\n")
    git(top, "add", "README.md")
    done = run(top, "git", "commit", "-q", "-m", message, env=env, path=path, check=False)
    return done.returncode, done.stdout + done.stderr


def _gate(
    top: Path,
    project: SiloProject,
    commit: Callable[[str], tuple[int, str]],
    *,
    skip_line: str,
) -> None:
    code, output = commit("Unrelated change")
    assert code == 0, output

    project.add_run("TASK-001", result=make_result(passed=False, reward=0.5))
    code, output = commit("Blocked")
    assert code == 1, output
    assert "CHANGED  TASK-001 (crm-west)  result.json" in output
    assert "    - reward 1 -> 0.5" in output
    assert f"  baseline: :{PREFIX}/baselines/TASK-001.result.json" in output
    assert skip_line in output
    assert "no silo-regress project found" not in output

    assert project.cli("record", "TASK-001").exit_code == 0
    git(top, "add", PREFIX)
    code, output = commit("Accept the new behaviour")
    assert code == 0, output


def test_printed_snippets_name_the_project_and_its_baselines(tmp_path: Path) -> None:
    _, _, blocks = _monorepo(tmp_path)
    local, remote, husky, lefthook, workflow = blocks
    hooks = yaml.safe_load(local)["repos"][0]["hooks"]
    pattern = re.compile(hooks[0]["files"])
    assert pattern.search(f"{PREFIX}/baselines/TASK-001.result.json")
    assert not pattern.search("baselines/TASK-001.result.json")
    assert not pattern.search("agents/other/baselines/TASK-001.result.json")
    for hook in hooks:
        assert f" --project {PREFIX} " in hook["entry"]
    published = yaml.safe_load(remote)["repos"][0]["hooks"]
    assert [h["args"] for h in published] == [["--project", PREFIX]] * 2
    assert published[0]["files"] == hooks[0]["files"]
    assert f"--project {PREFIX} check --staged --allow-no-runs" in husky
    commands = yaml.safe_load(lefthook)["pre-commit"]["commands"]
    assert commands["silo-regress-fmt"]["glob"] == f"{PREFIX}/baselines/**/*.json"
    steps = yaml.safe_load(workflow)["jobs"]["silo-regress"]["steps"]
    assert [s["with"]["project"] for s in steps if "with" in s and "command" in s["with"]] == [
        PREFIX,
        PREFIX,
    ]


def test_local_pre_commit_snippet_blocks_a_regression_at_the_monorepo_root(
    tmp_path: Path,
) -> None:
    top, project, blocks = _monorepo(tmp_path)
    home = tmp_path / "pre-commit-home"
    (top / ".pre-commit-config.yaml").write_text(blocks[0])
    run(top, BIN / "pre-commit", "install", env={"PRE_COMMIT_HOME": str(home)})
    commit_all(top, "Use pre-commit")
    env = {"PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}

    _gate(
        top,
        project,
        lambda message: _commit(top, message, env=env, path=system_path()),
        skip_line="or skip this hook once: SKIP=silo-regress-check git commit",
    )

    # The fmt hook sees the project's baselines from the top: a hand-indented one fails.
    baseline = project.baselines / "TASK-001.result.json"
    baseline.write_bytes(baseline.read_bytes().replace(b"\n  ", b"\n    "))
    git(top, "add", PREFIX)
    done = run(top, "git", "commit", "-q", "-m", "x", env=env, path=system_path(), check=False)
    assert done.returncode == 1
    output = done.stdout + done.stderr
    assert re.search(r"silo-regress fmt \(staged baselines are canonical\)\.+Failed", output)
    assert f":{PREFIX}/baselines/TASK-001.result.json is not in canonical form" in output


def test_published_hooks_with_project_args_block_a_regression_at_the_monorepo_root(
    hook_repo: HookRepo,  # noqa: F811
    tmp_path: Path,
) -> None:
    top, project, blocks = _monorepo(tmp_path)
    config = re.sub(r"repo: \S+", f"repo: {hook_repo.path}", blocks[1], count=1)
    config = re.sub(r"rev: \S+", f"rev: {hook_repo.rev}", config, count=1)
    (top / ".pre-commit-config.yaml").write_text(config)
    env = {"PRE_COMMIT_HOME": str(hook_repo.home), "PRE_COMMIT_COLOR": "never"}
    run(top, BIN / "pre-commit", "install", env=env)
    commit_all(top, "Use the published hooks")

    _gate(
        top,
        project,
        lambda message: _commit(top, message, env=env, path=NO_VENV),
        skip_line="or skip this hook once: SKIP=silo-regress-check git commit",
    )


def test_husky_snippet_blocks_a_regression_at_the_monorepo_root(tmp_path: Path) -> None:
    """As husky 9 runs it: core.hooksPath points at .husky/_, whose pre-commit runs
    `sh -e .husky/pre-commit` from the top of the repository."""
    top, project, blocks = _monorepo(tmp_path)
    (top / ".husky" / "_").mkdir(parents=True)
    (top / ".husky" / "pre-commit").write_text(blocks[2])
    runner = top / ".husky" / "_" / "pre-commit"
    runner.write_text('#!/bin/sh\nexec sh -e .husky/pre-commit "$@"\n')
    runner.chmod(0o755)
    git(top, "config", "core.hooksPath", ".husky/_")
    commit_all(top, "Use husky")

    _gate(
        top,
        project,
        lambda message: _commit(top, message, env={}, path=system_path()),
        skip_line="or skip the hook once: git commit --no-verify",
    )


def test_husky_snippet_finds_the_project_venv_off_path(tmp_path: Path) -> None:
    top, project, blocks = _monorepo(tmp_path)
    venv_bin = project.root / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "silo-regress").symlink_to(BIN / "silo-regress")
    project.add_run("TASK-001", result=make_result(passed=False, reward=0.5))
    done = subprocess.run(
        ["sh", "-e", "-c", blocks[2]],
        cwd=top,
        env={"PATH": NO_VENV},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "    - reward 1 -> 0.5" in done.stdout


def test_lefthook_commands_block_a_regression_at_the_monorepo_root(tmp_path: Path) -> None:
    """lefthook runs each command's `run:` with sh at the top of the repository, with
    {staged_files} replaced by the staged files its glob matches."""
    top, project, blocks = _monorepo(tmp_path)
    commands = yaml.safe_load(blocks[3])["pre-commit"]["commands"]
    hook = top / ".git" / "hooks" / "pre-commit"
    check, fmt = commands["silo-regress-check"], commands["silo-regress-fmt"]
    assert fmt["glob"] == f"{PREFIX}/baselines/**/*.json"
    env = " ".join(f"{k}={shlex.quote(str(v))}" for k, v in check["env"].items())
    lines = [
        "#!/bin/bash",
        "set -e",
        f"env {env} sh -c {shlex.quote(check['run'])}",
        f"files=$(git diff --cached --name-only --diff-filter=ACM -- '{PREFIX}/baselines/*.json'"
        " | tr '\\n' ' ')",
        f"run_fmt={shlex.quote(fmt['run'].replace('{staged_files}', '__FILES__'))}",
        'if [ -n "$files" ]; then sh -c "${run_fmt//__FILES__/$files}"; fi',
    ]
    hook.write_text("\n".join(lines) + "\n")
    hook.chmod(0o755)

    _gate(
        top,
        project,
        lambda message: _commit(top, message, env={}, path=system_path()),
        skip_line="or skip the hook once: git commit --no-verify",
    )
    assert shutil.which("sh")


# A project directory a shell would run if a snippet pasted it unquoted.
HOSTILE = "we ird $(touch PWNED) 'q' #x/crm: a"


def test_snippets_for_a_project_path_with_spaces_and_shell_characters(tmp_path: Path) -> None:
    top = tmp_path / "mono"
    project_dir = top / HOSTILE
    project_dir.mkdir(parents=True)
    git_init(top)
    (project_dir / "package.json").write_text('{"name": "crm"}\n')
    project = SiloProject(root=project_dir, runs_dir=project_dir / ".silo" / "runs")
    result = project.cli("init", "--hook", "all")
    assert result.exit_code == 0, result.output
    local, remote, husky, lefthook, workflow = printed_blocks(result.stdout)
    hooks = yaml.safe_load(local)["repos"][0]["hooks"]
    for hook in hooks:
        words = shlex.split(hook["entry"])
        assert words[words.index("--project") + 1] == HOSTILE
    assert re.search(hooks[0]["files"], f"{HOSTILE}/baselines/TASK-001.result.json")
    assert yaml.safe_load(remote)["repos"][0]["hooks"][1]["args"] == ["--project", HOSTILE]
    steps = yaml.safe_load(workflow)["jobs"]["silo-regress"]["steps"]
    assert steps[2]["working-directory"] == HOSTILE
    assert steps[-1]["with"]["project"] == HOSTILE
    commands = yaml.safe_load(lefthook)["pre-commit"]["commands"]
    assert commands["silo-regress-fmt"]["glob"] == f"{HOSTILE}/baselines/**/*.json"

    project.add_run("TASK-001")
    assert project.cli("record", "--all").exit_code == 0
    commit_all(top, "Set up")
    (top / ".pre-commit-config.yaml").write_text(local)
    home = tmp_path / "pre-commit-home"
    env = {"PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    run(top, BIN / "pre-commit", "install", env=env)
    project.add_run("TASK-001", result=make_result(passed=False, reward=0.5))
    code, output = _commit(top, "Blocked", env=env, path=system_path())
    assert code == 1, output
    assert "    - reward 1 -> 0.5" in output
    done = subprocess.run(
        ["sh", "-e", "-c", husky],
        cwd=top,
        env={"PATH": system_path()},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "    - reward 1 -> 0.5" in done.stdout
    assert not list(tmp_path.rglob("PWNED"))
