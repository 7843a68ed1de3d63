"""`init` in a Node project (package.json, no pyproject.toml): the workflow, hooks and
snippets it prints work there as printed, at the top of a repository and below it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.actionrunner import ActionRun, load_action, run_action
from support.gitrepo import BIN, FAKE_SILO, commit_all, run
from support.silofixture import SiloProject, git, git_init

from silo_regress.recording import scaffold

ROOT = Path(__file__).resolve().parents[2]
ACTION = load_action(ROOT / "action.yml")
BASH = shutil.which("bash") or "/bin/bash"  # found here: a step's PATH may lack it
LOCKFILE = {
    "name": "crm-agent",
    "version": "1.0.0",
    "lockfileVersion": 3,
    "requires": True,
    "packages": {"": {"name": "crm-agent", "version": "1.0.0"}},
}


def node_project(root: Path, *, lockfile: bool = True) -> SiloProject:
    """A Silo project as Node teams have them; its Silo is tests/fake_silo.py."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "package.json").write_text('{"name": "crm-agent", "version": "1.0.0"}\n')
    if lockfile:
        (root / "package-lock.json").write_text(json.dumps(LOCKFILE, indent=2) + "\n")
    (root / "silo.agent.ts").write_text("export default 1;\n")
    command = json.dumps([sys.executable, str(FAKE_SILO)])
    (root / "silo-regress.toml").write_text(
        f'silo-command = {command}\nenvironment = "crm-west"\nagent = "silo.agent.ts"\n'
    )
    return SiloProject(root=root, runs_dir=root / ".silo" / "runs")


def printed_blocks(stdout: str) -> list[str]:
    """The snippets init printed (indented by four spaces), in order, unindented."""
    blocks: list[list[str]] = []
    previous_indented = False
    for line in stdout.splitlines(True):
        indented = line.startswith("    ")
        if indented and not previous_indented:
            blocks.append([])
        if indented:
            blocks[-1].append(line[4:])
        previous_indented = indented or (previous_indented and not line.strip())
    return ["".join(b) for b in blocks]


def _init(project: SiloProject, *args: str) -> list[str]:
    result = project.cli("init", "--hook", "all", *args)
    assert result.exit_code == 0, result.output
    blocks = printed_blocks(result.stdout)
    assert len(blocks) == 5, result.stdout  # pre-commit local, remote, husky, lefthook, CI
    return blocks


def _repository(tmp_path: Path, prefix: str, *, lockfile: bool = True) -> SiloProject:
    top = tmp_path / "origin"
    top.mkdir()
    git_init(top)
    return node_project(top / prefix if prefix else top, lockfile=lockfile)


# --- the workflow ----------------------------------------------------------------------


def _expression(condition: str, event: str) -> bool:
    assert condition == "github.event_name == 'pull_request'", condition
    return event == "pull_request"


def run_workflow(
    workflow: dict[str, Any],
    workspace: Path,
    tmp_path: Path,
    *,
    event: str = "pull_request",
    path: str | None = None,
) -> list[tuple[str, int, str]]:
    """Every step of the job, as the runner would: run: lines with bash in their
    working-directory, the silo-regress action through its own steps (its install is
    the development one), actions/* skipped. Stops at the first failure, like GitHub."""
    (job,) = workflow["jobs"].values()
    bare = path or f"{BIN}{os.pathsep}/usr/bin{os.pathsep}/bin"  # npm, node, git
    done: list[tuple[str, int, str]] = []
    for number, step in enumerate(job["steps"]):
        name = step.get("name", step.get("uses", ""))
        if "if" in step and not _expression(step["if"], event):
            continue
        uses = step.get("uses", "")
        if uses.startswith(("actions/checkout@", "actions/setup-node@")):
            continue
        if uses:
            assert uses == f"{scaffold.ACTION}@{scaffold.SOURCE_REF}", uses
            result: ActionRun = run_action(
                ACTION,
                action_path=ROOT,
                workspace=workspace,
                runner_temp=tmp_path / "runner-temp",
                inputs={k: str(v) for k, v in step["with"].items()},
                skip={"install": {"bin": str(BIN)}},
                env={"GITHUB_BASE_REF": "main", "GITHUB_EVENT_NAME": event},
            )
            done.append((name, result.code, result.log + "\n" + result.summary))
        else:
            script = tmp_path / f"workflow-step-{number}.sh"
            script.write_text(step["run"])
            cwd = workspace / step.get("working-directory", ".")
            ran = subprocess.run(
                [BASH, "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                cwd=cwd,
                env={"PATH": bare, "HOME": os.environ.get("HOME", "/root"), "CI": "true"},
                capture_output=True,
                text=True,
                check=False,
            )
            done.append((name, ran.returncode, ran.stdout + ran.stderr))
        if done[-1][1] != 0:
            break
    return done


def _clone(origin: Path, tmp_path: Path) -> Path:
    """The pull request's checkout: full history (fetch-depth 0), no runs (.silo ignored)."""
    workspace = tmp_path / "workspace"
    run(tmp_path, "git", "clone", "-q", origin, workspace)
    git(workspace, "checkout", "-q", "-b", "pull-request")
    return workspace


@pytest.mark.parametrize("prefix", ["", "agents/crm"])
def test_init_workflow_runs_in_a_node_project(tmp_path: Path, prefix: str) -> None:
    project = _repository(tmp_path, prefix)
    blocks = _init(project, "--write")
    top = tmp_path / "origin"
    written = top / ".github" / "workflows" / "silo-regress.yml"
    assert written.read_text() == blocks[4]
    workflow = yaml.safe_load(blocks[4])
    steps = workflow["jobs"]["silo-regress"]["steps"]
    assert steps[0] == {"uses": "actions/checkout@v4", "with": {"fetch-depth": 0}}
    (node_step,) = [s for s in steps if "npm" in s.get("run", "")]
    assert node_step["run"].splitlines()[-1] == "npm ci --no-audit --no-fund"
    assert node_step.get("working-directory", "") == prefix
    for step in steps:
        if step.get("uses", "").startswith(scaffold.ACTION):
            assert step["with"].get("project", "") == prefix
    # The hooks printed look in .venv/bin: init ignores it though none is there yet.
    assert ".venv/" in (project.root / ".gitignore").read_text().splitlines()

    assert project.cli("run", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    commit_all(top, "silo-regress set up, TASK-001 recorded")
    workspace = _clone(top, tmp_path)
    (workspace / "NOTES.md").write_text("unrelated\n")
    commit_all(workspace, "Notes")

    done = run_workflow(workflow, workspace, tmp_path)

    assert [(name, code) for name, code, _ in done] == [
        ("Install the project's Node packages (Silo among them)", 0),
        ("Behaviour changes in this pull request", 0),
        ("Newest runs match the baselines", 0),
    ], done
    summary = (tmp_path / "runner-temp" / "step-summary.md").read_text()
    assert "### Behaviour changes: `origin/main` → `working tree`" in summary
    assert "## silo-regress check: ✅ passed" in summary
    runs = workspace / prefix / ".silo" / "runs"
    assert len(list(runs.iterdir())) == 1, "check --run started Silo in the fresh checkout"
    assert (workspace / prefix / "node_modules").is_dir() or "up to date" in done[0][2]


def test_init_workflow_fails_a_pull_request_that_changes_behaviour(tmp_path: Path) -> None:
    project = _repository(tmp_path, "agents/crm")
    workflow = yaml.safe_load(_init(project)[4])
    assert project.cli("run", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    top = tmp_path / "origin"
    commit_all(top, "Record TASK-001")
    workspace = _clone(top, tmp_path)
    baseline = workspace / "agents" / "crm" / "baselines" / "TASK-001.result.json"
    baseline.write_text(baseline.read_text().replace('"reward": 1', '"reward": 0.5', 1))
    commit_all(workspace, "Hand-edit a baseline")

    done = run_workflow(workflow, workspace, tmp_path)

    assert [code for _, code, _ in done] == [0, 0, 1]
    summary = (tmp_path / "runner-temp" / "step-summary.md").read_text()
    assert "| `TASK-001` | `result.json` | changed |" in summary  # diff --from
    assert "## silo-regress check: ❌ failed" in summary
    # Annotated where GitHub finds the file: from the top of the repository (the reward
    # rose against the hand-edited baseline: an improvement, so a notice).
    assert "::notice file=agents/crm/baselines/TASK-001.result.json,line=" in done[-1][2]


def test_init_workflow_without_a_lockfile_installs_and_says_when_node_is_missing(
    tmp_path: Path,
) -> None:
    project = _repository(tmp_path, "", lockfile=False)
    workflow = yaml.safe_load(_init(project)[4])
    steps = workflow["jobs"]["silo-regress"]["steps"]
    (node_step,) = [s for s in steps if "npm" in s.get("run", "")]
    assert node_step["run"].splitlines()[-1] == "npm install --no-audit --no-fund"
    commit_all(tmp_path / "origin", "Set up")
    workspace = _clone(tmp_path / "origin", tmp_path)

    # A runner image without Node: the first step says what is missing, nothing else runs.
    empty = tmp_path / "no-node"
    empty.mkdir()
    done = run_workflow(workflow, workspace, tmp_path, path=str(empty))
    assert len(done) == 1
    _name, code, output = done[0]
    assert code == 1
    assert output == (
        "::error title=silo-regress::npm is not on PATH: this job needs Node "
        "(actions/setup-node) to install the project's packages and run Silo\n"
    )

    done = run_workflow(workflow, workspace, tmp_path, event="push")
    assert [name for name, _, _ in done] == [
        "Install the project's Node packages (Silo among them)",
        "Newest runs match the baselines",
    ]
    assert (workspace / "package-lock.json").is_file()  # npm install made one


def test_init_reads_the_node_version_file_and_a_workspace_lockfile(tmp_path: Path) -> None:
    """npm workspaces: the lockfile at the top, package.json in the project."""
    project = _repository(tmp_path, "agents/crm", lockfile=False)
    top = tmp_path / "origin"
    (top / "package-lock.json").write_text(json.dumps(LOCKFILE) + "\n")
    (top / ".nvmrc").write_text("22\n")
    steps = yaml.safe_load(_init(project)[4])["jobs"]["silo-regress"]["steps"]
    assert steps[1] == {"uses": "actions/setup-node@v4", "with": {"node-version-file": ".nvmrc"}}
    assert steps[2]["working-directory"] == "agents/crm"
    assert steps[2]["run"].splitlines()[-1] == "npm ci --no-audit --no-fund"


def test_init_ignores_the_project_venv_and_names_no_ref_that_does_not_exist(
    tmp_path: Path,
) -> None:
    project = _repository(tmp_path, "")
    (project.root / ".venv" / "bin").mkdir(parents=True)
    result = project.cli("init", "--hook", "all")
    assert "updated    .gitignore: .venv/ ignored" in result.stdout
    assert (project.root / ".gitignore").read_text() == ".silo/\n.venv/\n"
    assert git(project.root, "check-ignore", "-q", ".venv/bin", check=False).returncode == 0
    assert (
        project.cli("init").stdout.count("unchanged") == 5
    )  # config, .gitattributes, the merge driver, .gitignore, workflow
    remote = yaml.safe_load(printed_blocks(result.stdout)[1])["repos"][0]
    # No tag is published: a placeholder a user must fill in, never a ref like v0.4.0.
    assert (remote["repo"], remote["rev"]) == (scaffold.SOURCE_URL, "REF")
    assert "v" + _release() not in result.stdout
    assert "are placeholders: replace them" in result.stdout
    assert [h["id"] for h in remote["hooks"]] == ["silo-regress-fmt", "silo-regress-check"]


def _release() -> str:
    from silo_regress import __version__

    return re.sub(r"\.dev\d+$", "", __version__)


def test_init_write_keeps_a_workflow_someone_edited(tmp_path: Path) -> None:
    project = _repository(tmp_path, "")
    workflow = tmp_path / "origin" / ".github" / "workflows" / "silo-regress.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text("name: ours\n")
    result = project.cli("init", "--write")
    shown = ".github/workflows/silo-regress.yml"
    assert f"kept       {shown}: GitHub Actions (differs: delete it" in result.stdout
    assert workflow.read_text() == "name: ours\n"


def test_release_tag_names_the_release_a_dev_version_leads_to() -> None:
    assert scaffold.release_tag("0.3.0") == "v0.3.0"
    assert scaffold.release_tag("0.4.0.dev2") == "v0.4.0"
