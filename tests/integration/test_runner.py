"""The runner against a stand-in for Silo's command line (tests/fake_silo.py).

Every test drives the real ``run`` / ``check --run`` / ``record --repeat``: the
real CLI starts real processes, which write real run directories.
"""

from __future__ import annotations

import itertools
import json
import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.runnerkit import (
    FAKE_SILO,
    LONG_OUTPUTS,
    SILO_REGRESS,
    argv_of,
    behave,
    fake_pids,
    made_by_fake_silo,
    new_runs,
    overlaps,
    processes_under,
    silo_project,
    survivors,
)
from support.silofixture import make_project, make_result


def test_run_starts_silo_per_task_in_parallel_and_ties_each_run_to_its_task(
    tmp_path: Path, control: Path
) -> None:
    project = silo_project(tmp_path, "jobs = 3\n")
    behave(control, **{"TASK-001": {"sleep": 0.6}, "TASK-002": {"sleep": 0.6}})
    (project.root / "agents").mkdir()
    result = project.cli("run", "TASK-001", "TASK-002", "crm-east/TASK-001")
    assert result.exit_code == 0, result.output
    runs = new_runs(project)
    assert sorted((r["environment"], r["taskId"]) for r in runs) == [
        ("crm-east", "TASK-001"),
        ("crm-west", "TASK-001"),
        ("crm-west", "TASK-002"),
    ]
    for run in runs:
        label = f"{run['environment']}/{run['taskId']}"
        assert f"{label}: passed (.silo/runs/{run['dir'].name})\n" in result.stdout
        assert argv_of(run["dir"]) == ["run", "--env", run["environment"], "--task", run["taskId"]]
    slow = [r for r in runs if r["environment"] == "crm-west"]
    assert overlaps(slow[0], slow[1])  # started together, not one after the other
    assert "3 rollouts in" in result.stdout and "3 passed" in result.stdout
    assert "[3/3]" in result.stderr  # plain progress lines when stderr is not a terminal


def test_jobs_1_runs_one_rollout_at_a_time(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path, "jobs = 4\n")
    behave(control, **{t: {"sleep": 0.2} for t in ("TASK-001", "TASK-002", "TASK-003")})
    result = project.cli("run", "--jobs", "1", "TASK-001", "TASK-002", "TASK-003")
    assert result.exit_code == 0, result.output
    runs = sorted(new_runs(project), key=lambda r: r["startedAt"])
    assert len(runs) == 3
    assert not any(overlaps(a, b) for a, b in itertools.pairwise(runs))
    assert "1 at a time" in result.stderr


def test_default_is_every_baselined_task(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path, environment=False)
    project.add_run("TASK-001", env="crm-west")
    project.add_run("TASK-002", env="crm-east")
    project.add_run("TASK-009", env="crm-west")  # has runs but no baseline: not run
    assert project.cli("record", "TASK-001", "TASK-002").exit_code == 0
    before = {r["dir"].name for r in new_runs(project)}
    result = project.cli("run")
    assert result.exit_code == 0, result.output
    made = sorted(
        (r["environment"], r["taskId"]) for r in new_runs(project) if r["dir"].name not in before
    )
    assert made == [("crm-east", "TASK-002"), ("crm-west", "TASK-001")]


def test_config_and_flags_choose_agent_and_command_per_environment(
    tmp_path: Path, control: Path
) -> None:
    wrapper = tmp_path / "east-silo"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_SILO}" "$@"\n')
    wrapper.chmod(0o755)
    project = silo_project(
        tmp_path,
        'agent = "agents/main.ts"\n\n[tool.silo-regress.environments.crm-east]\n'
        f'agent = "agents/east.ts"\nsilo-command = ["{wrapper}"]\n',
    )
    (project.root / "agents").mkdir()
    for name in ("main.ts", "east.ts", "other.ts"):
        (project.root / "agents" / name).write_text("export default {}\n")
    result = project.cli("run", "TASK-001", "crm-east/TASK-001")
    assert result.exit_code == 0, result.output
    agents = {r["environment"]: argv_of(r["dir"])[-2:] for r in new_runs(project)}
    assert agents == {
        "crm-west": ["--agent", "agents/main.ts"],
        "crm-east": ["--agent", "agents/east.ts"],
    }
    result = project.cli("run", "--agent", "agents/other.ts", "crm-east/TASK-002")
    assert result.exit_code == 0, result.output
    (run,) = [r for r in new_runs(project) if r["taskId"] == "TASK-002"]
    assert argv_of(run["dir"])[-2:] == ["--agent", "agents/other.ts"]


# --- check --run --------------------------------------------------------------


def test_check_run_compares_only_the_runs_it_just_made(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path)
    project.add_run("TASK-001", result=make_result(agent_output="Old answer."))
    assert project.cli("record", "TASK-001").exit_code == 0
    # A stale run that sorts as the newest (its clock was ahead) and matches the baseline:
    project.add_run(
        "TASK-001",
        started="2099-01-01T00:00:00.000Z",
        result=make_result(agent_output="Old answer."),
    )
    assert project.cli("check").exit_code == 0
    result = project.cli("check", "--run")
    assert result.exit_code == 1, result.output
    assert "CHANGED" in result.stdout
    (made,) = [r for r in new_runs(project) if made_by_fake_silo(r["dir"])]
    assert made["dir"].name in result.stdout


def test_check_run_passes_when_silo_reproduces_the_baseline(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path, "jobs = 3\n")
    tasks = ("TASK-001", "TASK-002", "crm-east/TASK-001")
    assert project.cli("run", *tasks).exit_code == 0
    assert project.cli("record", *tasks).exit_code == 0
    # Each task's agentOutput names its task: a run handed to the wrong task would not match.
    result = project.cli("check", "--run")
    assert result.exit_code == 0, result.output
    assert "6 match" in result.stdout
    assert len(new_runs(project)) == 6


def test_check_run_with_a_shard_runs_only_that_shards_tasks(tmp_path: Path, control: Path) -> None:
    from silo_regress.judging.sharding import parse_shard, shard_of
    from silo_regress.project.taskref import TaskRef

    project = silo_project(tmp_path)
    tasks = [f"TASK-{n:03d}" for n in range(1, 7)]
    assert project.cli("run", *tasks).exit_code == 0
    assert project.cli("record", *tasks).exit_code == 0
    before = {r["dir"].name for r in new_runs(project)}
    shard = parse_shard("1/2")
    mine = {t for t in tasks if shard_of(TaskRef(t), shard.count) == shard.index}
    assert mine and mine != set(tasks)  # the test needs both shards non-empty
    result = project.cli("check", "--run", "--shard", "1/2")
    made = [r for r in new_runs(project) if r["dir"].name not in before]
    assert {r["taskId"] for r in made} == mine
    assert result.exit_code == 0, result.output


def test_a_failed_verifier_check_is_a_run_not_a_configuration_error(
    tmp_path: Path, control: Path
) -> None:
    project = silo_project(tmp_path)
    behave(control, **{"TASK-001": {"mode": "fail"}})
    result = project.cli("run", "TASK-001")
    assert result.exit_code == 0, result.output  # Silo exited 1, but a complete run exists
    assert "a verifier check failed (Silo exited 1)" in result.stdout
    assert project.cli("record", "TASK-001").exit_code == 0
    result = project.cli("check", "--run")
    assert result.exit_code == 0, result.output


def test_a_crash_leaves_an_incomplete_run_that_check_run_reports(
    tmp_path: Path, control: Path
) -> None:
    project = silo_project(tmp_path)
    assert project.cli("run", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    behave(control, **{"TASK-001": {"mode": "crash"}})
    result = project.cli("run", "TASK-001")
    assert result.exit_code == 1, result.output
    assert "left no complete result.json" in result.stdout
    assert "TypeError: Cannot read properties of undefined" in result.stdout
    result = project.cli("check", "--run")
    assert result.exit_code == 1, result.output
    assert "INCOMPLETE RUN" in result.stdout


# --- repeats and flaky tasks --------------------------------------------------


def test_repeats_of_one_task_run_concurrently_and_are_all_collected(
    tmp_path: Path, control: Path
) -> None:
    project = silo_project(tmp_path)
    behave(control, **{"TASK-001": {"sleep": 0.3}})
    result = project.cli("run", "--repeat", "4", "--jobs", "4", "TASK-001")
    assert result.exit_code == 0, result.output
    assert "crm-west/TASK-001: stable, 4 of 4 rollouts byte-identical" in result.stdout
    runs = new_runs(project)
    assert len(runs) == 4
    assert any(overlaps(a, b) for a in runs for b in runs if a is not b)


def test_flaky_task_lists_the_paths_that_vary_and_exits_1(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path)
    tasks: dict[str, dict[str, Any]] = {
        "TASK-001": {"mode": "vary", "outputs": LONG_OUTPUTS, "passed": [True, True, False]},
        "TASK-002": {"mode": "ok"},
    }
    behave(control, **tasks)
    result = project.cli("run", "--repeat", "3", "-j", "2", "TASK-001", "TASK-002")
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert "crm-west/TASK-001: FLAKY, 3 distinct results in 3 complete runs" in out
    assert "  result.json /agentOutput: 3 values\n" in out
    # Each distinct value with its count, and a word diff against the most common one.
    assert '    1 rollout: "I qualified the lead and logged a note for the account owner."\n' in out
    assert '    1 rollout: "Lead qualified; a note is in the audit log."\n' in out
    assert "words: [-I-]{+Lead+} qualified[- the lead and logged-]{+;+} a note" in out
    assert "  result.json /checks/2/passed: true x2, false x1\n" in out
    assert "  result.json /checksPassed: 3 x2, 2 x1\n" in out
    assert (
        "  to make it stable, ignore what varies (in pyproject.toml):\n"
        '    [tool.silo-regress.tasks."crm-west/TASK-001"]\n'
        "    ignore = [\n"
        '      "result.json:/agentOutput",\n'
        '      "result.json:/checks/2/passed",\n'
        '      "result.json:/checksFailed",\n'
        '      "result.json:/checksPassed",\n'
        "    ]\n"
        "  or accept every distinct result as a variant:\n"
        "    silo-regress record --repeat 3 --variants TASK-001\n"
    ) in out
    assert "state-diff.json" not in out  # it did not vary
    assert "crm-west/TASK-002: stable, 3 of 3 rollouts byte-identical" in out


def test_the_printed_ignore_line_makes_the_task_stable(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path, 'ignore = ["state-diff.json:/scalars"]\n')
    behave(control, **{"TASK-001": {"mode": "vary", "outputs": LONG_OUTPUTS[:2]}})
    result = project.cli("run", "--repeat", "2", "TASK-001")
    assert result.exit_code == 1, result.output
    (line,) = [x.strip() for x in result.stdout.splitlines() if x.strip().startswith("ignore =")]
    assert line == 'ignore = ["state-diff.json:/scalars", "result.json:/agentOutput"]'  # kept
    pyproject = project.root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(text.replace('ignore = ["state-diff.json:/scalars"]', line))
    result = project.cli("run", "--repeat", "2", "TASK-001")
    assert result.exit_code == 0, result.output
    assert "crm-west/TASK-001: stable, 2 of 2 rollouts byte-identical\n" in result.stdout
    assert "ignore" not in result.stdout and "--variants" not in result.stdout


def test_ignored_paths_cannot_make_a_task_flaky(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path, 'ignore = ["result.json:/agentOutput"]\n')
    behave(control, **{"TASK-001": {"mode": "vary", "outputs": LONG_OUTPUTS}})
    result = project.cli("run", "--repeat", "3", "TASK-001")
    assert result.exit_code == 0, result.output
    assert "stable, 3 of 3" in result.stdout


def test_record_repeat_refuses_a_flaky_task_unless_forced(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path)
    behave(control, **{"TASK-001": {"mode": "vary", "outputs": LONG_OUTPUTS[:2]}})
    result = project.cli("record", "--repeat", "2", "TASK-001", "TASK-002")
    assert result.exit_code == 1, result.output
    assert "refusing to record crm-west/TASK-001" in result.stderr
    assert "/agentOutput: 2 values" in result.stdout
    assert project.baseline_bytes() == {}  # all or nothing: TASK-002 was stable, still not written
    result = project.cli("record", "--repeat", "2", "--force", "TASK-001", "TASK-002")
    assert result.exit_code == 0, result.output
    assert sorted(project.baseline_bytes()) == [
        ".silo-regress-format",
        "TASK-001.result.json",
        "TASK-001.state-diff.json",
        "TASK-001.tally.json",  # record --repeat N keeps the pass counts too (issue 22)
        "TASK-002.result.json",
        "TASK-002.state-diff.json",
        "TASK-002.tally.json",
    ]
    # The recorded run is one of those just made, the newest complete one.
    newest = max(
        (r for r in new_runs(project) if r["taskId"] == "TASK-001"), key=lambda r: r["startedAt"]
    )
    assert f"from run {newest['dir'].name}" in result.stdout


def test_record_repeat_records_a_stable_task(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path)
    result = project.cli("record", "--repeat", "3", "crm-east/TASK-004")
    assert result.exit_code == 0, result.output
    assert "stable, 3 of 3" in result.stdout
    assert "crm-east/TASK-004.result.json" in project.baseline_bytes()
    assert project.cli("check").exit_code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["record", "--force", "TASK-001"], "--force only applies with --repeat"),
        (["record", "--repeat", "2", "--run", "run_x"], "give no --run"),
        (["run", "--repeat", "0", "TASK-001"], "--repeat"),
        (["check", "--agent", "a.ts"], "--agent only apply with --run, which starts Silo"),
        (["check", "--timeout", "5", "-j", "2"], "--jobs and --timeout only apply with --run"),
        (["record", "--agent", "a.ts", "TASK-001"], "--agent only apply with --repeat"),
        (["record", "--run-id", "a", "--run", "b"], "give --run-id once"),
    ],
)
def test_runner_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    project = silo_project(tmp_path)
    result = project.cli(*args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert not project.runs_dir.exists()


# --- failures of the setup: exit 3 --------------------------------------------


def test_silo_command_not_found(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project", config='silo-command = ["no-such-silo-7f3"]\n')
    result = project.cli("run", "crm-west/TASK-001")
    assert result.exit_code == 3, result.output
    assert result.stderr.startswith("silo-regress: error: pyproject.toml [tool.silo-regress]")
    assert "'no-such-silo-7f3' is not on PATH" in result.stderr
    assert not project.runs_dir.exists()


NPM_404 = """npm error code E404
npm error 404 Not Found - GET https://registry.npmjs.org/silo
npm error 404
npm error 404  The requested resource 'silo@*' could not be found or you do not have permission \
to access it.
npm error A complete log of this run can be found in: /root/.npm/_logs/debug-0.log
"""


def fake_program(directory: Path, name: str, stderr: str, code: int) -> Path:
    """A program that prints ``stderr`` and exits ``code``, as npx or a wrapper would."""
    directory.mkdir(exist_ok=True)
    path = directory / name
    body = f"import sys\nsys.stderr.write({stderr!r})\nsys.exit({code})\n"
    path.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_the_default_silo_command_without_silo_names_the_config_key_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No silo-command in config: the default `npx --no silo`, and npm answers 404.
    bin_dir = tmp_path / "bin"
    fake_program(bin_dir, "npx", NPM_404, 1)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    project = make_project(tmp_path / "project", config='environment = "crm-west"\n')
    result = project.cli("run", "TASK-001", "TASK-002")
    assert result.exit_code == 3, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("silo-regress: error")]
    assert errors == [
        "silo-regress: error: pyproject.toml [tool.silo-regress]: silo-command "
        "['npx', '--no', 'silo'] cannot start Silo: npm has no package 'silo' to run "
        "(404 Not Found from the registry); set silo-command to how you start Silo in this "
        'project, e.g. silo-command = ["npm", "run", "--silent", "silo", "--"] for a '
        'package.json script, or ["node_modules/.bin/silo"]'
    ]
    result = project.cli("record", "--repeat", "2", "TASK-001")
    assert result.exit_code == 3, result.output
    assert result.stderr.count("silo-command ['npx', '--no', 'silo'] cannot start Silo") == 1


def test_a_wrapper_whose_command_is_not_found_names_the_environments_silo_command(
    tmp_path: Path, control: Path
) -> None:
    wrapper = fake_program(tmp_path / "bin", "silo-east", "sh: 1: silo: not found\n", 127)
    project = silo_project(
        tmp_path, f'\n[tool.silo-regress.environments.crm-east]\nsilo-command = ["{wrapper}"]\n'
    )
    result = project.cli("run", "crm-east/TASK-001", "TASK-001")
    assert result.exit_code == 3, result.output
    assert (
        "silo-regress: error: pyproject.toml [tool.silo-regress] environments.crm-east: "
        f"silo-command ['{wrapper}'] cannot start Silo: command not found "
        "(sh: 1: silo: not found); set silo-command"
    ) in result.stderr
    assert [r["environment"] for r in new_runs(project)] == ["crm-west"]  # the other one ran


def test_agent_and_timeout_wherever_rollouts_start(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path)
    (project.root / "agents").mkdir()
    (project.root / "agents" / "other.ts").write_text("export default {}\n")
    assert project.cli("run", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    result = project.cli("check", "--run", "--agent", "agents/other.ts", "--timeout", "30")
    assert result.exit_code == 0, result.output
    result = project.cli(
        "record", "--repeat", "2", "--agent", "agents/other.ts", "--timeout", "30", "TASK-002"
    )
    assert result.exit_code == 0, result.output
    made = [r for r in new_runs(project) if made_by_fake_silo(r["dir"])]
    assert [argv_of(r["dir"])[-2:] for r in made].count(["--agent", "agents/other.ts"]) == 3
    behave(control, **{"TASK-001": {"mode": "hang"}})
    started = time.monotonic()
    result = project.cli("check", "--run", "--timeout", "0.5")
    assert time.monotonic() - started < 10
    # It began (its run directory is there, unfinished): the agent's failure, judged as
    # an incomplete run, not an infrastructure error.
    assert result.exit_code == 1, result.output
    assert "timed out, process group killed" in result.stderr
    assert "incomplete-run  TASK-001" in result.stdout


def test_record_run_id_and_its_deprecated_spelling(tmp_path: Path) -> None:
    project = silo_project(tmp_path)
    project.add_run("TASK-001", name="run_a")
    result = project.cli("record", "--run-id", "run_a")
    assert result.exit_code == 0, result.output
    assert "deprecated" not in result.stderr
    result = project.cli("record", "--run", "run_a")
    assert result.exit_code == 0, result.output
    assert (
        "record --run is deprecated (check --run starts Silo): use --run-id RUN_ID" in result.stderr
    )
    helped = project.cli("record", "--help")
    assert "--run-id RUN_ID" in helped.stdout and "--run " not in helped.stdout


def test_agent_file_missing(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path, 'agent = "agents/missing.ts"\n')
    result = project.cli("run", "TASK-001")
    assert result.exit_code == 3, result.output
    assert "agents/missing.ts: agent file not found" in result.stderr
    assert fake_pids(control) == []  # refused before starting anything
    result = project.cli("run", "--agent", "nope.ts", "TASK-001")
    assert result.exit_code == 3
    assert "nope.ts: agent file not found (--agent 'nope.ts'" in result.stderr


def test_unknown_environment_relays_silos_own_message(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path)
    result = project.cli("run", "crm-nowhere/TASK-001", "TASK-001")
    assert result.exit_code == 3, result.output
    assert (
        "silo-regress: error: crm-nowhere/TASK-001: Silo exited 1 without writing a run: "
        'Error: Unknown environment "crm-nowhere". Available environments: crm-west, crm-east'
    ) in result.stderr
    assert [r["environment"] for r in new_runs(project)] == ["crm-west"]  # kept going


def test_check_run_stops_at_a_configuration_error_instead_of_checking_old_runs(
    tmp_path: Path, control: Path
) -> None:
    project = silo_project(tmp_path)
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    behave(control, **{"TASK-001": {"mode": "config-error", "message": 'Unknown task "TASK-001"'}})
    result = project.cli("check", "--run")
    assert result.exit_code == 3, result.output
    assert 'Error: Unknown task "TASK-001"' in result.stderr
    assert "1 of 1 rollouts left no run to check even after 1 retry" in result.stderr
    assert "infra-error: crm-west/TASK-001" in result.stderr
    assert "so nothing was compared" in result.stderr
    assert result.stdout == ""


def test_disk_full_while_silo_writes(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path)
    behave(control, **{"TASK-001": {"mode": "enospc"}})
    result = project.cli("run", "TASK-001")
    assert result.exit_code == 3, result.output
    assert "crm-west/TASK-001: the disk is full, Silo could not write its run" in result.stderr
    assert "ENOSPC: no space left on device" in result.stderr


def test_exit_0_without_a_new_run_points_at_runs_dir(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path, 'runs-dir = "elsewhere/runs"\n')
    result = project.cli("run", "TASK-001")
    assert result.exit_code == 3, result.output
    assert "Silo exited 0 but no new run appeared under elsewhere/runs/" in result.stderr
    assert "is runs-dir right?" in result.stderr


def test_unqualified_baseline_without_runs_or_environment(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path, environment=False)
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    for run in project.runs_dir.iterdir():  # a fresh clone: baselines, no runs
        for file in run.iterdir():
            file.unlink()
        run.rmdir()
    result = project.cli("run")
    assert result.exit_code == 3, result.output
    assert "cannot tell which environment to run task TASK-001 in" in result.stderr
    assert "set 'environment' in pyproject.toml [tool.silo-regress]" in result.stderr


# --- timeouts and Ctrl-C: no orphans ------------------------------------------


def test_timeout_kills_the_process_group_and_keeps_going(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path, "timeout = 1\n")
    # It ignores SIGTERM, so the runner has to escalate to SIGKILL.
    behave(control, **{"TASK-001": {"mode": "hang", "ignore_term": True}})
    started = time.monotonic()
    result = project.cli("run", "-j", "2", "TASK-001", "TASK-002")
    assert time.monotonic() - started < 10
    # It began and left its directory unfinished: a failed rollout (exit 1), not an
    # infrastructure error to retry.
    assert result.exit_code == 1, result.output
    assert (
        "crm-west/TASK-001: timed out after 1 s; its process group was killed; it left "
        in result.stdout
    )
    assert [r["taskId"] for r in new_runs(project) if "taskId" in r] == ["TASK-002"]
    pids = fake_pids(control)
    assert len(pids) == 3  # two Silos and the hanging one's child
    assert survivors(pids) == []
    assert processes_under(project.root) == []


def test_ctrl_c_stops_every_rollout_and_exits_130(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path)
    behave(control, **{"TASK-001": {"mode": "hang"}, "TASK-002": {"mode": "hang"}})
    proc = subprocess.Popen(
        [
            str(SILO_REGRESS),
            "--project",
            str(project.root),
            "run",
            "-j",
            "2",
            "TASK-001",
            "TASK-002",
            "TASK-003",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # A test run from a background job inherits an ignored SIGINT; a terminal's is default.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 20
    while len(fake_pids(control)) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(fake_pids(control)) == 4, "both hanging Silos and their children started"
    proc.send_signal(signal.SIGINT)
    try:
        _, stderr = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert b"silo-regress: error: interrupted" in stderr
    assert survivors(fake_pids(control)) == []
    assert processes_under(project.root) == []
    assert not any(r.get("taskId") == "TASK-003" for r in new_runs(project))  # never started


def test_sigterm_is_handled_like_ctrl_c(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path)
    behave(control, **{"TASK-001": {"mode": "hang"}})
    proc = subprocess.Popen(
        [str(SILO_REGRESS), "--project", str(project.root), "run", "TASK-001"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 20
    while len(fake_pids(control)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.terminate()
    proc.communicate(timeout=20)
    assert proc.returncode == 130
    assert survivors(fake_pids(control)) == []


def test_progress_bar_on_a_terminal(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path)
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [str(SILO_REGRESS), "--project", str(project.root), "run", "TASK-001"],
        stdout=subprocess.PIPE,
        stderr=follower,
        env={**os.environ, "COLUMNS": "100"},
    )
    os.close(follower)
    stdout, _ = proc.communicate(timeout=30)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert proc.returncode == 0
    assert b"running 1 rollout, 1 at a time" in shown
    assert b"[1/1]" not in shown  # the bar, not the plain lines
    assert b"crm-west/TASK-001: passed" in stdout


def test_docs_runner_config_example_is_valid(tmp_path: Path) -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "runner.md"
    marker = "<!-- snippet:runner-config -->\n```toml\n"
    block = page.read_text(encoding="utf-8").split(marker, 1)[1].split("```", 1)[0]
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text(block, encoding="utf-8")
    from silo_regress.project.config import load_config

    config = load_config(root)
    assert config.silo_command == ("npx", "--no", "silo")
    assert config.jobs == 4
    east, west = config.settings_for("crm-east"), config.settings_for("crm-west")
    assert (east.agent, east.timeout) == ("agents/east.agent.ts", 900)
    assert (west.agent, west.timeout) == ("silo.agent.ts", 600)


def test_variation_wording() -> None:
    from silo_regress.canon.jsondiff import MISSING
    from silo_regress.cli.runner import render_stability
    from silo_regress.project.config import Config
    from silo_regress.project.taskref import TaskRef
    from silo_regress.runner import Task
    from silo_regress.runner.stability import Distinct, Stability, Variation

    def said(*values: Distinct) -> str:
        task = Task(TaskRef("TASK-001"), "crm-west", "TASK-001")
        varied = Stability(task, 2, (), (), 2, (Variation("result.json", "/p", values),))
        config = Config(project=Path("/p"), runs_dir=Path("/p/r"), baselines_dir=Path("/p/b"))
        return render_stability([varied], config=config).splitlines()[1]

    assert said(Distinct(True, 2), Distinct(False, 1)) == "  result.json /p: true x2, false x1"
    assert said(Distinct(MISSING, 2), Distinct(3, 1)) == "  result.json /p: (absent) x2, 3 x1"
    assert (
        said(Distinct("completed", 1), Distinct("timeout", 1))
        == '  result.json /p: "completed" x1, "timeout" x1'
    )
    assert said(Distinct("Lead qualified.", 1), Distinct("Done", 1)) == "  result.json /p: 2 values"
    assert said(Distinct({"label": "x"}, 1), Distinct(None, 1)) == "  result.json /p: 2 values"


def test_long_values_are_clipped_and_their_word_diff_too() -> None:
    from silo_regress.behaviour.result import word_diff
    from silo_regress.cli.runner import render_stability
    from silo_regress.project.config import Config
    from silo_regress.project.taskref import TaskRef
    from silo_regress.runner import Task
    from silo_regress.runner.stability import Distinct, Stability, Variation

    long_a = "word " * 100 + "end A"
    long_b = "word " * 100 + "end B"
    values = (Distinct(long_a, 2), Distinct(long_b, 1, word_diff(long_a, long_b)))
    task = Task(TaskRef("TASK-001"), "crm-west", "TASK-001")
    varied = Stability(task, 3, (), (), 2, (Variation("result.json", "/agentOutput", values),))
    config = Config(project=Path("/p"), runs_dir=Path("/p/r"), baselines_dir=Path("/p/b"))
    lines = render_stability([varied], config=config).splitlines()
    assert lines[2].startswith('    2 rollouts: "word word') and lines[2].endswith("…")
    assert len(lines[2]) <= len("    2 rollouts: ") + 120
    assert lines[4].strip().startswith("words: word word") and "[-A-]{+B+}" in lines[4]


def test_every_rollout_started_gets_its_provenance_record(tmp_path: Path, control: Path) -> None:
    from silo_regress.runs.provenance import read_provenance

    project = silo_project(tmp_path)
    (project.root / "agents").mkdir()
    (project.root / "agents" / "x.ts").write_text("export default {}\n")
    assert project.cli("run", "--agent", "agents/x.ts", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    assert project.cli("check", "--run", "--agent", "agents/x.ts").exit_code == 0
    done = project.cli("record", "--repeat", "2", "--agent", "agents/x.ts", "TASK-002")
    assert done.exit_code == 0, done.output
    made = [r["dir"] for r in new_runs(project) if made_by_fake_silo(r["dir"])]
    assert len(made) == 4
    for run_dir in made:
        record = read_provenance(run_dir)
        assert record is not None, run_dir
        assert record.agent == "agents/x.ts"
        assert (record.environment, record.task_id) == tuple(
            json.loads((run_dir / "run.json").read_text())[k] for k in ("environment", "taskId")
        )
