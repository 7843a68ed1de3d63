"""action.yml, the composite GitHub Action: its steps run here with bash
(tests/support/actionrunner.py) against the bundled example, and the file is linted for what
a runner cannot check."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.actionrunner import ActionRun, load_action, run_action
from support.fakegithub import FakeGitHub, serving
from support.gitrepo import BIN, agent_project, commit_all, run
from support.silofixture import git, git_init

from silo_regress import __version__

__all__ = ["control"]
from support.runnerkit import control

ROOT = Path(__file__).resolve().parents[2]
ACTION = load_action(ROOT / "action.yml")
EXAMPLE = ROOT / "examples" / "crm-demo"


def _action_checkout(target: Path) -> Path:
    """What `uses: OWNER/silo-regress@REF` checks out: the repository at that ref."""
    target.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md", "action.yml"):
        shutil.copy(ROOT / name, target / name)
    shutil.copytree(
        ROOT / "silo_regress",
        target / "silo_regress",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    return target


def _example(workspace: Path) -> Path:
    """A repository holding the bundled example, its baselines recorded and committed."""
    shutil.copytree(EXAMPLE, workspace, ignore=shutil.ignore_patterns("ci"))
    git_init(workspace)
    run(workspace, BIN / "silo-regress", "record", "--all")
    commit_all(workspace, "Record the example")
    return workspace


@dataclass(frozen=True)
class Installed:
    action_path: Path
    bin: Path
    first: ActionRun  # the run that installed it: default inputs but `check`


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """slow: the action's install step pip-installs its own checkout once (about 20 s)."""
    base = tmp_path_factory.mktemp("action")
    action_path = _action_checkout(base / "action")
    workspace = _example(base / "workspace")
    first = run_action(
        ACTION,
        action_path=action_path,
        workspace=workspace,
        runner_temp=base / "runner-temp",
        inputs={"command": "check"},
    )
    assert first.code == 0, first.log
    return Installed(
        action_path=action_path, bin=Path(first.outputs["install"]["bin"]), first=first
    )


def _run(installed: Installed, workspace: Path, tmp_path: Path, **inputs: str) -> ActionRun:
    return run_action(
        ACTION,
        action_path=installed.action_path,
        workspace=workspace,
        runner_temp=tmp_path / "runner-temp",
        inputs=inputs,
        skip={"install": {"bin": str(installed.bin)}},
    )


def test_action_installs_its_own_checkout_and_passes_a_matching_project(
    installed: Installed,
) -> None:
    first = installed.first
    assert first.ran == ["Check the action's inputs", "Install silo-regress", "Run silo-regress"]
    assert f"silo-regress {__version__}\n" in first.stdout
    assert installed.bin.name == "bin" and (installed.bin / "silo-regress").is_file()
    assert installed.bin.parent.name == "silo-regress-venv"  # its own venv, not the project's
    assert first.outputs["run"]["exit-code"] == "0"
    report = json.loads(Path(first.outputs["run"]["report"]).read_text())
    assert report["summary"]["match"] == 15
    assert first.summary.startswith("## silo-regress check: ✅ passed\n")
    assert "::error" not in first.stdout
    assert "html" not in first.outputs["run"]  # html: false


def test_action_annotates_summarises_and_pages_a_change(
    installed: Installed, tmp_path: Path
) -> None:
    workspace = _example(tmp_path / "workspace")
    baseline = workspace / "baselines" / "TASK-002.result.json"
    baseline.write_text(baseline.read_text().replace('"reward": 1', '"reward": 0.5', 1))

    done = _run(installed, workspace, tmp_path, command="check", html="true")

    assert done.code == 1, done.log
    assert done.outputs["run"]["exit-code"] == "1"
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::notice ")]
    assert len(annotations) == 1  # TASK-002's reward rose: an improvement is a notice
    assert annotations[0].startswith("::notice file=baselines/TASK-002.result.json,line=")
    assert not [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert "title=silo-regress%3A TASK-002 (crm-west) result.json changed::" in annotations[0]
    # The text report is in the log once (check's), not again from the rendering.
    assert done.stdout.count("CHANGED  TASK-002 (crm-west)  result.json") == 1
    assert done.summary.startswith("## silo-regress check: ❌ failed\n")
    assert "| `TASK-002 (crm-west)` | improvement | **changed** |" in done.summary
    page = Path(done.outputs["run"]["html"])
    assert page.parent == tmp_path / "runner-temp" / "silo-regress-report"
    assert "<html" in page.read_text() and "TASK-002" in page.read_text()


def test_action_without_summary_or_annotations_still_fails_the_step(
    installed: Installed, tmp_path: Path
) -> None:
    workspace = _example(tmp_path / "workspace")
    baseline = workspace / "baselines" / "TASK-003.result.json"
    baseline.write_text(baseline.read_text().replace('"passed": true', '"passed": false', 1))

    done = _run(
        installed, workspace, tmp_path, command="check", summary="false", annotations="false"
    )

    assert done.code == 1
    assert done.summary == ""
    assert "::error" not in done.stdout
    assert "CHANGED  TASK-003 (crm-west)  result.json" in done.stdout


# A project directory whose name a shell would run if it were ever pasted into a script.
HOSTILE = "agents/crm $(touch PWNED) `touch PWNED` ;touch PWNED; \"q\" 'x' $HOME *"


def test_action_runs_silo_first_in_a_project_whose_path_is_hostile(
    installed: Installed, tmp_path: Path
) -> None:
    """`check --run` in a monorepo project, named with spaces, quotes, `$()` and `;`:
    the path reaches silo-regress as one argument and nothing in it runs."""
    workspace = tmp_path / "workspace"
    project = agent_project(workspace / HOSTILE)
    assert project.cli("run", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    git(project.root, "add", "-A")
    git(project.root, "commit", "-qm", "Record TASK-001")
    before = len(list(project.runs_dir.iterdir()))

    done = _run(installed, workspace, tmp_path, command="check --run", project=HOSTILE)

    assert done.code == 0, done.log
    assert len(list(project.runs_dir.iterdir())) == before + 1  # Silo ran once more
    assert done.summary.startswith("## silo-regress check: ✅ passed\n")
    assert not list(tmp_path.rglob("PWNED")), "a shell evaluated the project input"
    assert not list(Path.cwd().glob("PWNED"))


def test_action_diff_from_writes_the_behaviour_changes_to_the_summary(
    installed: Installed, tmp_path: Path
) -> None:
    workspace = _example(tmp_path / "workspace")
    baseline = workspace / "baselines" / "TASK-002.result.json"
    baseline.write_text(baseline.read_text().replace('"reward": 1', '"reward": 0.5', 1))
    commit_all(workspace, "Lower TASK-002's reward")

    done = _run(installed, workspace, tmp_path, command="diff --from", **{"from": "HEAD~1"})

    assert done.code == 0, done.log
    assert done.summary.startswith("### Behaviour changes: `HEAD~1` → `working tree`\n")
    assert "| `TASK-002` | `result.json` | changed |" in done.summary
    assert "TASK-002" in done.stdout  # the text form in the log


def test_action_diff_from_outside_a_pull_request_needs_a_ref(
    installed: Installed, tmp_path: Path
) -> None:
    workspace = _example(tmp_path / "workspace")
    done = _run(installed, workspace, tmp_path, command="diff --from")
    assert done.code == 2
    assert done.stdout == (
        "::error title=silo-regress action::command diff --from needs the from input outside "
        "a pull request (e.g. from: origin/main)\n"
    )


def test_action_refuses_a_ref_that_is_not_one(installed: Installed, tmp_path: Path) -> None:
    workspace = _example(tmp_path / "workspace")
    done = _run(
        installed, workspace, tmp_path, command="diff --from", **{"from": "HEAD; touch PWNED"}
    )
    assert done.code == 3, done.log
    assert "HEAD; touch PWNED" in done.stderr
    assert not list(tmp_path.rglob("PWNED"))


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (
            {"command": "check --fix"},
            "unknown command input 'check --fix': use one of check --run, check, diff --from",
        ),
        ({"command": "record --all"}, "unknown command input 'record --all'"),
        ({"command": "check\n::set-output name=x::y"}, "unknown command input 'check%0A::set"),
        ({"html": "yes"}, "input html is 'yes': use true or false"),
        ({"summary": ""}, "input summary is '': use true or false"),
        ({"fail-on": "everything"}, "unknown fail-on input 'everything'"),
        ({"command": "check", "from": "main"}, "input from is for command diff --from"),
        ({"version": "--index-url=https://evil.invalid"}, "must not start with '-'"),
        ({"project": "no/such dir"}, "input project 'no/such dir' is not a directory under"),
        ({"report-format": "xml"}, "unknown report-format input 'xml': use json, junit, markdown"),
        ({"suite-gate": "loud"}, "unknown suite-gate input 'loud': use fail, warn or off"),
        ({"repeat": "ten"}, "input repeat is 'ten': use a whole number of rollouts"),
        ({"max-repeat": "0"}, "input max-repeat is '0': use a whole number of rollouts"),
        ({"command": "check", "repeat": "8"}, "input repeat is for command check --run"),
        ({"comment": "maybe"}, "input comment is 'maybe': use true or false"),
    ],
)
def test_action_refuses_bad_inputs_before_installing_anything(
    tmp_path: Path, inputs: dict[str, str], message: str
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    done = run_action(
        ACTION,
        action_path=tmp_path / "no-action-checkout",
        workspace=workspace,
        runner_temp=tmp_path / "runner-temp",
        inputs=inputs,
    )
    assert done.code == 2
    assert done.ran == ["Check the action's inputs"]
    (line,) = done.stdout.splitlines()
    assert line.startswith("::error title=silo-regress action::")
    assert message in line
    assert not (tmp_path / "runner-temp" / "silo-regress-venv").exists()


def test_an_unknown_input_name_is_refused_by_the_runner_here(tmp_path: Path) -> None:
    """GitHub only warns about an undeclared input; the runner of these tests refuses it,
    so every workflow the tests run (init's too) names only inputs that exist."""
    with pytest.raises(AssertionError, match=r"unexpected input\(s\) \['comand'\]"):
        run_action(
            ACTION,
            action_path=tmp_path,
            workspace=tmp_path,
            runner_temp=tmp_path / "t",
            inputs={"comand": "check"},
        )


# --- lint ------------------------------------------------------------------------------


def _run_steps() -> list[dict[str, object]]:
    return [s for s in ACTION["runs"]["steps"] if "run" in s]


def test_action_yml_passes_every_input_through_env_never_into_a_script() -> None:
    assert ACTION["runs"]["using"] == "composite"
    steps = ACTION["runs"]["steps"]
    ids = {s["id"] for s in steps if "id" in s}
    used: set[str] = set()
    for step in steps:
        run_text = str(step.get("run", ""))
        assert "${{" not in run_text, f"an expression inside run: of {step['name']!r}"
        for key in ("env", "with"):
            for value in (step.get(key) or {}).values():
                used |= set(re.findall(r"inputs\.([\w-]+)", str(value)))
        used |= set(re.findall(r"inputs\.([\w-]+)", str(step.get("if", ""))))
        for expression in re.findall(r"steps\.([\w-]+)\.outputs", json.dumps(step)):
            assert expression in ids, expression
        if "run" in step:
            assert step["shell"] == "bash"
            # Every variable of ours a script reads is set by its own env: mapping.
            read = set(re.findall(r"\$\{?(SILO_REGRESS_\w+)", run_text))
            assert read <= set(step.get("env") or {}), (step["name"], read)
    assert used == set(ACTION["inputs"]), "every input is used, and only declared ones"
    for name, spec in ACTION["inputs"].items():
        assert spec.get("description"), name
        assert isinstance(spec.get("default"), str), name  # every input is optional
    for output in ACTION["outputs"].values():
        (step_id,) = re.findall(r"steps\.([\w-]+)\.outputs", output["value"])
        assert step_id in ids


def test_action_scripts_are_valid_bash() -> None:
    for step in _run_steps():
        checked = subprocess.run(
            ["bash", "-n"], input=str(step["run"]), capture_output=True, text=True, check=False
        )
        assert checked.returncode == 0, (step["name"], checked.stderr)


def test_action_install_refuses_an_old_python(tmp_path: Path) -> None:
    """A runner whose python3 is older than 3.11: one named error, nothing installed."""
    shims = tmp_path / "old-python"
    shims.mkdir()
    fake = shims / "python3"
    fake.write_text(
        f"#!/bin/sh\nif [ \"$1\" = -V ]; then echo 'Python 3.10.12'; exit 0; fi\n"
        f'if [ "$1" = -c ]; then exit 1; fi\nexec {sys.executable} "$@"\n'
    )
    fake.chmod(0o755)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    done = run_action(
        ACTION,
        action_path=tmp_path,
        workspace=workspace,
        runner_temp=tmp_path / "runner-temp",
        env={"PATH": f"{shims}:/usr/bin:/bin"},
    )
    assert done.code == 3
    assert done.ran[-1] == "Install silo-regress"
    assert (
        "::error title=silo-regress action::silo-regress needs Python 3.11 or newer, "
        f"{fake} is Python 3.10.12: set the python-version input"
    ) in done.stdout


# --- the stats gate and the pull-request comment ---------------------------------------


def _stats_workspace(tmp_path: Path, control: Path, *, config: str = "") -> Path:
    """A workspace whose project has a gate = "stats" task with a 9/10 tally, and whose
    stand-in Silo now passes 1 rollout in 10: a regression of the suite and the task."""
    from test_stats_gate_cli import STATS, passes, recorded

    project = recorded(tmp_path / "workspace", control, extra=config + STATS)
    passes(control, 1, 9)
    return project.root.parent


def _pull_request(tmp_path: Path, api: FakeGitHub, control: Path) -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 12}}))
    return {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": "acme/agents",
        "GITHUB_API_URL": api.base,
        "GITHUB_SHA": "0123456789abcdef",
        "NO_PROXY": "127.0.0.1",
        "no_proxy": "127.0.0.1",
        "FAKE_SILO_CONTROL": str(control),
        "FAKE_SILO_PIDS": str(control.with_name("pids")),
    }


def test_action_runs_the_stats_gate_and_keeps_one_comment_per_project(
    installed: Installed, tmp_path: Path, control: Path
) -> None:
    workspace = _stats_workspace(tmp_path, control)
    api = FakeGitHub()
    with serving(api):
        env = _pull_request(tmp_path, api, control)
        runs = [
            run_action(
                ACTION,
                action_path=installed.action_path,
                workspace=workspace,
                runner_temp=tmp_path / f"runner-temp-{n}",
                inputs={
                    "command": "check --run",
                    "project": "project",
                    "repeat": "10",
                    "suite-gate": "fail",
                    "report-format": "junit",
                    "github-token": "job-token",
                },
                skip={"install": {"bin": str(installed.bin)}},
                env=env,
            )
            for n in range(2)  # a second push updates the same comment
        ]
    for done in runs:
        assert done.code == 1, done.log
        assert "pull-request comment" in done.stdout
    assert "pull-request comment created" in runs[0].stdout
    assert "pull-request comment updated" in runs[1].stdout
    report = json.loads(Path(runs[1].outputs["run"]["report"]).read_text())
    assert (
        report["repeat"]["count"] == 10
        and report["stats"]["suite"]["verdict"] == "suite-regression"
    )
    junit = Path(runs[1].outputs["run"]["report-file"])
    assert junit.suffix == ".xml" and "<testsuite" in junit.read_text()
    (comment,) = api.comments
    body = comment["body"]
    assert body.startswith("<!-- silo-regress:project -->\n## silo-regress `project`: ❌ failed")
    assert body.index("suite-regression") < body.index("### Regressions (1)")
    assert "TASK-001 regression: passed 9/10 -> 1/10" in body
    assert {auth for _, _, auth in api.requests} == {"Bearer job-token"}
    assert "job-token" not in runs[1].log  # the token is never printed
    assert runs[1].summary.startswith("## silo-regress check: ❌ failed\n\n**Failed: suite-")


def test_action_on_a_fork_pull_request_puts_the_comment_in_the_summary(
    installed: Installed, tmp_path: Path, control: Path
) -> None:
    # No repeat input: the project's `repeat` key decides how many rollouts.
    workspace = _stats_workspace(tmp_path, control, config="repeat = 10\n")
    api = FakeGitHub(read_only=True)  # a fork's token: every write is 403
    with serving(api):
        done = run_action(
            ACTION,
            action_path=installed.action_path,
            workspace=workspace,
            runner_temp=tmp_path / "runner-temp",
            inputs={"command": "check --run", "project": "project"},
            skip={"install": {"bin": str(installed.bin)}},
            env=_pull_request(tmp_path, api, control),
        )
    assert done.code == 1, done.log  # the verdict, not a permission failure
    assert done.outputs["run"]["exit-code"] == "1"
    report = json.loads(Path(done.outputs["run"]["report"]).read_text())
    assert report["repeat"]["count"] == 10  # from the config, the input being empty
    assert "HTTP 403" in done.stdout and "::warning" not in done.stdout
    assert api.comments == []
    assert "> silo-regress did not comment on the pull request: the token may not" in (done.summary)
    assert "<!-- silo-regress:project -->" in done.summary
