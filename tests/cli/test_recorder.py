"""record: which run, which name, which bytes; and refusing without writing anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.silofixture import SiloProject, make_project, make_result, silo_json
from support.treestate import snapshot

from silo_regress.canon.canonical import canonicalize
from silo_regress.project.config import load_config
from silo_regress.project.taskref import TaskRef
from silo_regress.recording.recorder import choose_runs
from silo_regress.runs.index import index_runs


def _states(stdout: str) -> dict[str, str]:
    """``{path: new|changed|unchanged}`` from record's output."""
    found = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("new", "changed", "unchanged"):
            found[parts[1]] = parts[0]
    return found


def test_baselines_are_the_canonical_bytes_of_the_run(project: SiloProject) -> None:
    odd = make_result(reward=0.6666666666666666, agent_output={"z": 1e21, "a": "Zoë 🚀", "n": 1e-7})
    raw = json.dumps(odd, indent=4).encode()  # Python's spacing, ASCII escapes, no newline
    path = project.add_run("TASK-005", files={"result.json": raw})
    assert project.cli("record", "TASK-005").exit_code == 0
    written = (project.baselines / "TASK-005.result.json").read_bytes()
    assert written == canonicalize(raw, source="x").text
    assert written == canonicalize(written, source="x").text
    text = written.decode("utf-8")
    assert '"a": "Zoë 🚀",\n    "n": 1e-7,\n    "z": 1e+21\n' in text
    assert '"reward": 0.6666666666666666,' in text
    assert (path / "result.json").read_bytes() == raw  # the run is never touched


def test_record_reports_new_changed_unchanged(project: SiloProject) -> None:
    project.add_run("TASK-002", started="2026-03-16T09:00:00.000Z")
    first = project.cli("record", "TASK-002")
    assert _states(first.stdout) == {
        "baselines/TASK-002.result.json": "new",
        "baselines/TASK-002.state-diff.json": "new",
    }
    project.add_run("TASK-002", started="2026-03-16T10:00:00.000Z", result=make_result(reward=0))
    second = project.cli("record", "TASK-002")
    assert _states(second.stdout) == {
        "baselines/TASK-002.result.json": "changed",
        "baselines/TASK-002.state-diff.json": "unchanged",
    }
    third = project.cli("record", "TASK-002")
    assert set(_states(third.stdout).values()) == {"unchanged"}


def test_record_takes_the_newest_complete_run_and_says_which(project: SiloProject) -> None:
    project.add_run("TASK-002", started="2026-03-16T08:00:00.000Z", name="run_oldest")
    project.add_run(
        "TASK-002",
        started="2026-03-16T09:00:00.000Z",
        name="run_complete",
        result=make_result(reward=0.75),
    )
    project.add_run(
        "TASK-002",
        started="2026-03-16T10:00:00.000Z",
        name="run_crashed",
        files={"result.json": None},
    )
    project.add_run(
        "TASK-002",
        started="2026-03-16T11:00:00.000Z",
        name="run_truncated",
        files={"result.json": b'{"passed": true,'},
    )
    result = project.cli("record", "TASK-002")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(
        "TASK-002: from run run_complete (crm-west, started 2026-03-16T09:00:00.000Z)\n"
        "  note: passed over newer run(s) without a complete result.json: "
        "run_truncated, run_crashed\n"
    )
    assert json.loads((project.baselines / "TASK-002.result.json").read_bytes())["reward"] == 0.75
    # check still compares with the newest run, which crashed.
    assert project.cli("check").exit_code == 1


def test_record_with_no_complete_run_is_refused(project: SiloProject) -> None:
    project.add_run("TASK-002", name="run_crashed", files={"result.json": None})
    result = project.cli("record", "TASK-002")
    assert result.exit_code == 3
    assert result.stderr == (
        "silo-regress: error: .silo/runs/run_crashed: task TASK-002 has no complete run to "
        "record (its newest run has no parseable result.json); run the task again\n"
    )
    assert not project.baselines.exists()


def test_record_a_named_run(project: SiloProject) -> None:
    project.add_run(
        "TASK-002",
        started="2026-03-16T08:00:00.000Z",
        name="run_old",
        result=make_result(reward=0.25),
    )
    project.add_run("TASK-002", started="2026-03-16T09:00:00.000Z", name="run_new")
    project.add_run("TASK-003", name="run_other")
    project.add_run("TASK-002", name="run_broken", files={"result.json": b"{"})

    by_name = project.cli("record", "--run-id", "run_old")
    assert by_name.exit_code == 0, by_name.output
    assert "TASK-002: from run run_old" in by_name.stdout
    assert json.loads((project.baselines / "TASK-002.result.json").read_bytes())["reward"] == 0.25

    with_ref = project.cli("record", "TASK-002", "--run-id", "run_new")
    assert with_ref.exit_code == 0
    assert "TASK-002: from run run_new" in with_ref.stdout

    before = project.baseline_bytes()
    for args, message in (
        (
            ("TASK-002", "--run-id", "run_other"),
            "run_other is a run of crm-west/TASK-003, not of TASK-002",
        ),
        (("TASK-002", "TASK-003", "--run-id", "run_new"), "--run-id records one run"),
        (
            ("--run-id", "run_broken"),
            ".silo/runs/run_broken/result.json: ends early at line 1 column 2 (truncated file?)",
        ),
        (("--run-id", "run_404"), ".silo/runs/run_404: no such run"),
    ):
        result = project.cli("record", *args)
        assert result.exit_code == 3, (args, result.output)
        assert message in result.stderr, args
    assert project.baseline_bytes() == before


def test_record_all_qualifies_only_task_ids_of_several_environments(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    project.add_run("TASK-001", env="crm-west")
    project.add_run("TASK-001", env="crm-east")
    project.add_run("TASK-002", env="crm-west")
    project.add_run("TASK-007", env="crm-east")
    project.add_run("TASK-009", env="crm-west", files={"result.json": None})  # nothing to record
    result = project.cli("record", "--all")
    assert result.exit_code == 0, result.output
    assert sorted(project.baseline_bytes()) == [
        ".silo-regress-format",
        "TASK-002.result.json",
        "TASK-002.state-diff.json",
        "TASK-007.result.json",
        "TASK-007.state-diff.json",
        "crm-east/TASK-001.result.json",
        "crm-east/TASK-001.state-diff.json",
        "crm-west/TASK-001.result.json",
        "crm-west/TASK-001.state-diff.json",
    ]
    assert "TASK-009" not in result.stdout
    assert project.cli("check").exit_code == 0

    configured = make_project(tmp_path / "q", config='environment = "crm-west"\n')
    configured.add_run("TASK-001", env="crm-west")
    configured.add_run("TASK-001", env="crm-east")
    configured.add_run("TASK-002", env="crm-east")
    assert configured.cli("record", "--all").exit_code == 0
    assert sorted(configured.baseline_bytes()) == [
        ".silo-regress-format",
        "TASK-001.result.json",
        "TASK-001.state-diff.json",
        "crm-east/TASK-001.result.json",
        "crm-east/TASK-001.state-diff.json",
        "crm-east/TASK-002.result.json",
        "crm-east/TASK-002.state-diff.json",
    ]
    assert configured.cli("check").exit_code == 0


def test_choose_runs_api(project: SiloProject) -> None:
    project.add_run("TASK-001", env="crm-west", name="run_w")
    project.add_run("TASK-001", env="crm-east", name="run_e")
    config = load_config(project.root)
    index = index_runs(config.runs_dir)
    choices = choose_runs(config, index, [], all_tasks=True)
    assert [(str(c.ref), c.run.name) for c in choices] == [
        ("crm-east/TASK-001", "run_e"),
        ("crm-west/TASK-001", "run_w"),
    ]
    (choice,) = choose_runs(config, index, [TaskRef("TASK-001", "crm-west")])
    assert choice.run.name == "run_w" and choice.ref.qualified


def test_volatile_content_is_refused_naming_file_and_pointer(project: SiloProject) -> None:
    project.add_run("TASK-001", started="2026-03-16T08:00:00.000Z")
    assert project.cli("record", "TASK-001").exit_code == 0
    # The run's own clock (14:25 to 14:25, so 14:15 to 14:35 with the margin) tells
    # the wall-clock times copied into the output from the simulated one.
    output = {
        "startedAt": "2026-03-16T14:25:00.000Z",
        "note": "Booked 2026-03-16T14:30:00Z",
        "meeting": "2026-03-20T10:00:00Z",
    }
    project.add_run(
        "TASK-002",
        name="run_clock",
        started="2026-03-16T14:25:00.000Z",
        result=make_result(agent_output=output),
    )
    project.add_run(
        "TASK-001",
        started="2026-03-16T09:00:00.000Z",
        name="run_fine",
        result=make_result(reward=0.5),
    )
    before = snapshot(project.root)
    result = project.cli("record", "TASK-001", "TASK-002")
    assert result.exit_code == 3, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("silo-regress: error: refusing to record volatile content: ")
    assert (
        ".silo/runs/run_clock/result.json at /agentOutput/note: "
        "wall-clock date-time '2026-03-16T14:30:00Z'" in result.stderr
    )
    assert ".silo/runs/run_clock/result.json at /agentOutput/startedAt: wall-clock" in (
        result.stderr
    )
    assert "/agentOutput/meeting" not in result.stderr
    # All or nothing: TASK-001's fine change was not written either.
    assert snapshot(project.root) == before


def test_volatile_run_id_in_a_state_diff_is_refused(project: SiloProject) -> None:
    state = {"scalars": [{"field": "lastRun", "to": "run_20260316101502_3k9"}], "collections": {}}
    project.add_run("TASK-002", name="run_x", state_diff=state)
    result = project.cli("record", "TASK-002")
    assert result.exit_code == 3
    assert "state-diff.json at /scalars/0/to: Silo run id 'run_20260316101502_3k9'" in result.stderr
    assert not project.baselines.exists()


def test_exempted_and_ignored_paths_can_be_recorded(tmp_path: Path) -> None:
    config = (
        'volatile-exempt = ["result.json:/agentOutput/note"]\n'
        'ignore = ["/agentOutput/startedAt", "/checks/*/detail"]\n'
    )
    project = make_project(tmp_path / "p", config=config)
    output = {"startedAt": "2026-03-16T10:00:00Z", "note": "Booked 2026-03-16T14:30:00Z"}
    project.add_run(
        "TASK-002", started="2026-03-16T09:00:00.000Z", result=make_result(agent_output=output)
    )
    result = project.cli("record", "TASK-002")
    assert result.exit_code == 0, result.output
    baseline = json.loads((project.baselines / "TASK-002.result.json").read_bytes())
    assert baseline["agentOutput"] == {
        "note": "Booked 2026-03-16T14:30:00Z",
        "startedAt": "<ignored by silo-regress>",
    }
    assert {c["detail"] for c in baseline["checks"]} == {"<ignored by silo-regress>"}
    # The ignored values may vary from run to run; the exempted one may not.
    varied = {**output, "startedAt": "2026-03-17T08:00:00Z"}
    project.add_run(
        "TASK-002", started="2026-03-16T10:00:00.000Z", result=make_result(agent_output=varied)
    )
    checked = project.cli("check")
    assert checked.exit_code == 0, checked.output
    assert project.cli("fmt", "--check").exit_code == 0
    moved = {**output, "note": "Booked 2026-03-16T15:00:00Z"}
    project.add_run(
        "TASK-002", started="2026-03-16T11:00:00.000Z", result=make_result(agent_output=moved)
    )
    assert project.cli("check").exit_code == 1


def test_record_refuses_baselines_of_another_format(project: SiloProject) -> None:
    project.add_run("TASK-002")
    project.baselines.mkdir()
    (project.baselines / ".silo-regress-format").write_bytes(b"2\n")
    result = project.cli("record", "TASK-002")
    assert result.exit_code == 3
    assert result.stderr.startswith(
        "silo-regress: error: baselines/.silo-regress-format: baselines are in format '2'"
    )
    assert project.baseline_bytes() == {".silo-regress-format": b"2\n"}


def test_record_refuses_invalid_artifacts(project: SiloProject) -> None:
    project.add_run("TASK-002", name="run_dup", files={"state-diff.json": b'{"a": 1, "a": 2}\n'})
    project.add_run("TASK-003", name="run_nostate", files={"state-diff.json": None})
    project.add_run(
        "TASK-004",
        name="run_latin1",
        files={"state-diff.json": silo_json({"n": "x"})[:-3] + b'\xe9"}\n'},
    )
    for task, message in (
        ("TASK-002", ".silo/runs/run_dup/state-diff.json: duplicate key 'a' at /a"),
        ("TASK-003", ".silo/runs/run_nostate/state-diff.json: missing, so run run_nostate cannot"),
        ("TASK-004", ".silo/runs/run_latin1/state-diff.json: not valid UTF-8"),
    ):
        result = project.cli("record", task)
        assert result.exit_code == 3, (task, result.output)
        assert result.stderr.startswith(f"silo-regress: error: {message}"), result.stderr
    assert not project.baselines.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "name the tasks to record"),
        (("--all", "TASK-002"), "--all records every task"),
        (("--all", "--run-id", "run_x"), "--all records every task"),
    ],
)
def test_record_usage_errors(project: SiloProject, args: tuple[str, ...], message: str) -> None:
    project.add_run("TASK-002")
    result = project.cli("record", *args)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"silo-regress: error: {message}")
    assert not project.baselines.exists()


def test_record_only_the_configured_artifacts(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", config='artifacts = ["result.json"]\n')
    project.add_run("TASK-002", files={"state-diff.json": b"garbage"})
    assert project.cli("record", "TASK-002").exit_code == 0
    assert sorted(project.baseline_bytes()) == [".silo-regress-format", "TASK-002.result.json"]
    assert project.cli("check").exit_code == 0
