"""Every verdict that fails the gate ends with its next step, and the step, run as
printed from where it was printed, fixes it.

The steps are grouped once per kind (not one per artifact), in every format, and
repeat the options the user gave (-C DIR, --agent, --timeout).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support.gitrepo import BIN, agent_project, commit_all, rerun
from support.silofixture import SiloProject, git, git_init, make_project

from silo_regress.judging.outcome import (
    Invocation,
    Outcome,
    Report,
    Verdict,
)
from silo_regress.judging.remedies import StaleInputs
from silo_regress.project.taskref import TaskRef
from silo_regress.render.advice import advise

STAMP = "2026-03-16T10:00:01.000Z"


@pytest.fixture(autouse=True)
def _quiet_silo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAKE_SILO_CONTROL", raising=False)
    monkeypatch.setenv("FAKE_SILO_MODE", "ok")


def _shell(cwd: Path, command: str) -> subprocess.CompletedProcess[str]:
    """A printed command, run by a shell in ``cwd`` with the venv's silo-regress first."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"{command}:\n{done.stdout}\n{done.stderr}"
    return done


def _after(text: str, why: str) -> str:
    """The command printed after ``why: `` on one line."""
    (line,) = [line for line in text.splitlines() if line.startswith(why)]
    return line.split(": ", 1)[1]


def test_advice_is_grouped_once_per_kind_and_repeats_the_options() -> None:
    def outcome(task: str, artifact: str, verdict: Verdict, **more: object) -> Outcome:
        return Outcome(TaskRef(task), "crm-west", artifact, verdict, **more)  # type: ignore[arg-type]

    stale = [
        outcome(task, artifact, Verdict.STALE_RUN, remedy=StaleInputs(("a.agent.ts",)))
        for task in ("TASK-001", "TASK-002")
        for artifact in ("result.json", "state-diff.json")
    ]
    outcomes = (
        *stale,
        outcome("TASK-003", "result.json", Verdict.INCOMPLETE_RUN, run_name="run_1"),
        outcome("TASK-004", "result.json", Verdict.NOT_CANONICAL),
        outcome("TASK-004", "state-diff.json", Verdict.NOT_CANONICAL),
    )
    invocation = Invocation(
        project="agents/crm", baselines="agents/crm/baselines", agent="a.agent.ts", timeout=30
    )
    steps = advise(Report(outcomes, invocation=invocation))
    kinds = [s.kind for s in steps]
    assert kinds.count(Verdict.STALE_RUN) == 2  # run, or check --run: once for 4 artifacts
    assert kinds.count(Verdict.NOT_CANONICAL) == 1
    assert steps[0].why == "2 stale runs (a.agent.ts changed since they were made); make fresh ones"
    assert steps[0].commands == (
        "silo-regress -C agents/crm run TASK-001 TASK-002 --agent a.agent.ts --timeout 30",
    )
    incomplete = [s for s in steps if s.kind is Verdict.INCOMPLETE_RUN]
    assert incomplete[0].commands == (
        "silo-regress -C agents/crm check --run TASK-003 --agent a.agent.ts --timeout 30",
    )
    assert [s.commands for s in steps if s.kind is Verdict.NOT_CANONICAL] == [
        ("silo-regress -C agents/crm fmt",)
    ]


def _volatile_project(root: Path) -> SiloProject:
    root.mkdir(parents=True)
    (root / "silo-regress.toml").write_text("")
    project = SiloProject(root=root, runs_dir=root / ".silo" / "runs")
    project.add_run("TASK-001")
    project.add_run("TASK-002")
    assert project.cli("record", "--all").exit_code == 0
    for task in ("TASK-001", "TASK-002"):
        baseline = project.baselines / f"{task}.result.json"
        text = baseline.read_text().replace('"error": null', f'"error": "{STAMP}"')
        baseline.write_text(text)
        run = next(p for p in sorted(project.runs_dir.iterdir()) if task_of(p) == task)
        (run / "result.json").write_text(text)
    return project


def task_of(run: Path) -> str:
    return str(json.loads((run / "run.json").read_text())["taskId"])


def test_volatile_prints_the_tasks_table_lines_and_pasting_them_fixes_it(tmp_path: Path) -> None:
    project = _volatile_project(tmp_path / "p")
    done = project.cli("check")
    assert done.exit_code == 1
    text = done.stdout
    head = "Volatile content: if it varies by run, stop comparing it (in silo-regress.toml):\n"
    assert head in text
    block = text.split(head, 1)[1].split("\nor, if it is fixed data", 1)[0]
    lines = [line.strip() for line in block.splitlines()]
    assert lines == [
        '[tasks."crm-west/TASK-001"]',
        'ignore = ["result.json:/error"]',
        '[tasks."crm-west/TASK-002"]',
        'ignore = ["result.json:/error"]',
    ]
    assert 'volatile-exempt = ["result.json:/error"]' in text
    assert "[tool.silo-regress" not in text
    (project.root / "silo-regress.toml").write_text("\n".join(lines) + "\n")
    fixed = project.cli("check")
    assert fixed.exit_code == 0, fixed.output


def test_volatile_lines_in_a_pyproject_go_under_tool_silo_regress(tmp_path: Path) -> None:
    root = tmp_path / "p"
    project = _volatile_project(root)
    (root / "silo-regress.toml").unlink()
    (root / "pyproject.toml").write_text('[project]\nname = "p"\n\n[tool.silo-regress]\n')
    done = project.cli("check", "--format", "json")
    steps = json.loads(done.stdout)["nextSteps"]
    ignore = next(s for s in steps if s["verdict"] == "volatile")
    assert ignore["config"][0] == '[tool.silo-regress.tasks."crm-west/TASK-001"]'
    with (root / "pyproject.toml").open("a") as handle:
        handle.write("\n".join(ignore["config"]) + "\n")
    assert project.cli("check").exit_code == 0


def test_not_canonical_says_fmt_and_fmt_fixes_it(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    for baseline in project.baselines.glob("TASK-001.*.json"):
        baseline.write_text(baseline.read_text().replace("\n  ", "\n    "))
    done = project.cli("check")
    assert done.exit_code == 1
    command = _after(done.stdout, "Rewrite the baselines in canonical form")
    assert command == f"silo-regress -C {project.root} fmt"
    assert done.stdout.count("Rewrite the baselines") == 1  # once for both artifacts
    _shell(tmp_path, command)
    assert project.cli("check").exit_code == 0


def test_stale_run_says_which_input_and_the_printed_run_fixes_it(tmp_path: Path) -> None:
    project = agent_project(tmp_path / "p")
    assert project.cli("run", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    (project.root / "silo.agent.ts").write_text("export default 7;\n")
    done = project.cli("check")
    assert done.exit_code == 1
    why = "1 stale run (silo.agent.ts changed since it was made); make fresh ones"
    command = _after(done.stdout, why)
    assert command == f"silo-regress -C {project.root} run TASK-001"
    assert "refresh it with" not in done.stdout  # said once, in the next steps
    import time

    time.sleep(1.1)  # fake Silo names runs by the second
    _shell(tmp_path, command)
    assert project.cli("check").exit_code == 0


def test_missing_run_in_a_fresh_clone_says_check_run_and_that_fixes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Run from beside the project: paths in the advice then do not depend on how deep the
    # directory pytest started in happens to be.
    monkeypatch.chdir(tmp_path)
    project = agent_project(tmp_path / "p")
    assert project.cli("run", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    shutil.rmtree(project.runs_dir)
    done = project.cli("check", "--format", "json")
    assert done.exit_code == 1
    steps = json.loads(done.stdout)["nextSteps"]
    assert [s["verdict"] for s in steps] == ["missing-run", "missing-run"]
    run_it, remove = steps
    assert run_it["commands"] == [f"silo-regress -C {project.root} check --run TASK-001"]
    assert remove["commands"] == [
        "git rm -q -- p/baselines/TASK-001.result.json p/baselines/TASK-001.state-diff.json"
    ]
    _shell(tmp_path, run_it["commands"][0])
    assert project.cli("check").exit_code == 0


def test_a_monorepo_hook_prints_paths_that_work_from_the_top(tmp_path: Path) -> None:
    mono = tmp_path / "mono"
    mono.mkdir()
    git_init(mono)
    (mono / ".gitignore").write_text(".silo/\n")
    project = make_project(mono / "agents" / "crm")
    project.add_run("TASK-002")
    assert project.cli("record", "--all").exit_code == 0
    commit_all(mono, "A project below the top")
    rerun(project, "TASK-002", passed=False, reward=0.5)
    done = subprocess.run(
        [BIN / "silo-regress", "-C", "agents/crm", "check", "--staged", "--format", "markdown"],
        cwd=mono,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "silo-regress -C agents/crm record TASK-002\ngit add agents/crm/baselines\n" in (
        done.stdout
    )
    _shell(mono, "silo-regress -C agents/crm record TASK-002 && git add agents/crm/baselines")
    again = subprocess.run(
        [BIN / "silo-regress", "-C", "agents/crm", "check", "--staged"],
        cwd=mono,
        capture_output=True,
        text=True,
        check=False,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert (
        "agents/crm/baselines/TASK-002.result.json"
        in git(mono, "diff", "--cached", "--name-only").stdout
    )


def test_github_format_ends_with_the_next_steps(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    for baseline in project.baselines.glob("TASK-001.*.json"):
        baseline.write_text(baseline.read_text().replace("\n  ", "\n    "))
    done = project.cli("check", "--format", "github")
    assert done.stdout.rstrip().endswith(
        f"Rewrite the baselines in canonical form (format 1): silo-regress -C {project.root} fmt"
    )
