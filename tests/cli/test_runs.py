"""Run discovery: which directory is a run, whose run it is, and which one is newest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.silofixture import SiloProject, make_project, make_result, silo_json, unreadable

from silo_regress.runs.index import Run, Unidentified, index_runs, newest_complete, read_run

SAME_SECOND = {
    # Silo names runs by start second and pid in base 36: "_zz" sorts after "_100"
    # although it started 800 ms earlier.
    "run_20260316101502_zz": "2026-03-16T10:15:02.100Z",
    "run_20260316101502_100": "2026-03-16T10:15:02.900Z",
}


def _two_rollouts_in_one_second(project: SiloProject) -> None:
    for (name, started), reward in zip(SAME_SECOND.items(), (0.25, 1), strict=True):
        project.add_run("TASK-003", name=name, started=started, result=make_result(reward=reward))


def test_newest_run_is_chosen_by_started_at_never_by_directory_name(
    project: SiloProject,
) -> None:
    _two_rollouts_in_one_second(project)
    assert sorted(SAME_SECOND)[-1] == "run_20260316101502_zz"  # the trap: name order

    index = index_runs(project.runs_dir)
    newest = index.newest("crm-west", "TASK-003")
    assert newest is not None and newest.name == "run_20260316101502_100"
    assert [r.name for r in index.runs_of("crm-west", "TASK-003")] == [
        "run_20260316101502_100",
        "run_20260316101502_zz",
    ]

    recorded = project.cli("record", "TASK-003")
    assert recorded.exit_code == 0, recorded.output
    assert "from run run_20260316101502_100" in recorded.stdout
    baseline = json.loads((project.baselines / "TASK-003.result.json").read_bytes())
    assert baseline["reward"] == 1

    # A baseline taken from the older rollout is a change against the newest one.
    older = project.cli("record", "--run-id", "run_20260316101502_zz")
    assert older.exit_code == 0, older.output
    checked = project.cli("check")
    assert checked.exit_code == 1
    assert "CHANGED  TASK-003 (crm-west)  result.json  (run run_20260316101502_100)" in (
        checked.stdout
    )
    assert "reward 0.25 -> 1" in checked.stdout


def test_started_at_is_compared_as_a_moment_not_as_text(project: SiloProject) -> None:
    # 11:00+02:00 is 09:00Z: earlier than 10:00Z although it sorts later as text.
    project.add_run("TASK-001", started="2026-03-16T10:00:00.000Z", name="run_a")
    project.add_run("TASK-001", started="2026-03-16T11:00:00.000+02:00", name="run_b")
    # Equal moments fall back to the directory name.
    project.add_run("TASK-002", started="2026-03-16T10:00:00.000Z", name="run_x")
    project.add_run("TASK-002", started="2026-03-16T10:00:00.000Z", name="run_y")
    index = index_runs(project.runs_dir)
    assert index.newest("crm-west", "TASK-001").name == "run_a"  # type: ignore[union-attr]
    assert index.newest("crm-west", "TASK-002").name == "run_y"  # type: ignore[union-attr]


def test_runs_directory_missing(project: SiloProject) -> None:
    assert not project.runs_dir.exists()
    index = index_runs(project.runs_dir)
    assert not index.exists and index.by_task == {} and index.unidentified == ()

    one = project.cli("record", "TASK-001")
    assert one.exit_code == 3
    assert one.stderr.startswith("silo-regress: error: .silo/runs: runs directory does not exist")
    every = project.cli("record", "--all")
    assert every.exit_code == 3
    assert "the runs directory does not exist" in every.stderr
    assert not project.baselines.exists()

    # With nothing recorded there is nothing to compare, which is never a pass (exit 3,
    # saying where it looked); with baselines, each is missing-run.
    nothing = project.cli("check")
    assert nothing.exit_code == 3
    assert "no baselines to check: no baseline files under baselines/" in nothing.stderr
    project.baselines.mkdir()
    (project.baselines / ".silo-regress-format").write_bytes(b"1\n")
    (project.baselines / "TASK-001.result.json").write_bytes(silo_json(make_result()))
    checked = project.cli("check")
    assert checked.exit_code == 1
    assert "MISSING RUN  TASK-001  result.json" in checked.stdout
    assert "no run of TASK-001 under .silo/runs/" in checked.stdout


def test_runs_directory_empty(project: SiloProject) -> None:
    project.runs_dir.mkdir(parents=True)
    every = project.cli("record", "--all")
    assert every.exit_code == 3
    assert "silo-regress: error: .silo/runs: no complete run to record" in every.stderr
    one = project.cli("record", "TASK-001")
    assert one.exit_code == 3
    assert "no run of task TASK-001 (tasks with runs: none)" in one.stderr
    assert not project.baselines.exists()


def test_runs_directory_that_is_a_file(project: SiloProject) -> None:
    project.runs_dir.parent.mkdir(parents=True)
    project.runs_dir.write_text("not a directory\n")
    for args in (("check",), ("record", "--all"), ("status",)):
        result = project.cli(*args)
        assert result.exit_code == 3, (args, result.output)
        assert "runs directory is a file, not a directory" in result.stderr
        assert str(project.runs_dir) in result.stderr


def _odd_directories(project: SiloProject) -> dict[str, str]:
    """Every kind of directory that is not a usable run, with the reason expected."""
    runs = project.runs_dir
    runs.mkdir(parents=True, exist_ok=True)
    (runs / "run_20260316090000_empty").mkdir()
    (runs / "run_20260316090001_trace").mkdir()
    (runs / "run_20260316090001_trace" / "trace.jsonl").write_bytes(b'{"at":"x"}\n')
    project.add_run(name="run_20260316090002_trunc", files={"run.json": b'{\n  "runId": "ru'})
    project.add_run(name="run_20260316090003_utf8", files={"run.json": b'{"taskId": "\xff"}\n'})
    project.add_run(name="run_20260316090004_list", files={"run.json": b"[]\n"})
    project.add_run(
        name="run_20260316090005_nostart",
        files={"run.json": silo_json({"environment": "crm-west", "taskId": "TASK-001"})},
    )
    project.add_run(name="run_20260316090006_dotdot", env="../x")
    project.add_run(name="run_20260316090007_slash", task="a/b")
    project.add_run(name="run_20260316090008_dot", task=".hidden")
    project.add_run(name="run_20260316090009_ctrl", task="TASK\n001")
    project.add_run(
        name="run_20260316090010_when",
        files={
            "run.json": silo_json(
                {"environment": "crm-west", "taskId": "TASK-001", "startedAt": "yesterday"}
            )
        },
    )
    # Foreign entries: skipped without a word.
    (runs / "notes.txt").write_text("remember to rerun TASK-004\n")
    (runs / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    (runs / ".cache").mkdir()
    return {
        "run_20260316090000_empty": "no run.json",
        "run_20260316090001_trace": "no run.json",
        "run_20260316090002_trunc": "run.json is not valid JSON",
        "run_20260316090003_utf8": "run.json is not valid JSON",
        "run_20260316090004_list": "run.json is not a JSON object",
        "run_20260316090005_nostart": "run.json has no string 'startedAt'",
        "run_20260316090006_dotdot": "run.json environment '../x' is refused",
        "run_20260316090007_slash": "run.json taskId 'a/b' is refused",
        "run_20260316090008_dot": "run.json taskId '.hidden' is refused",
        "run_20260316090009_ctrl": "run.json taskId 'TASK\\n001' is refused",
        "run_20260316090010_when": "run.json startedAt 'yesterday' is not ISO 8601",
    }


def test_directories_that_are_not_runs_are_set_aside_with_a_reason(
    project: SiloProject,
) -> None:
    expected = _odd_directories(project)
    project.add_run("TASK-001", started="2026-03-16T08:00:00.000Z", name="run_good")
    index = index_runs(project.runs_dir)
    assert [r.name for r in index.runs_of("crm-west", "TASK-001")] == ["run_good"]
    assert index.task_keys() == [("crm-west", "TASK-001")]
    reasons = {u.path.name: u.reason for u in index.unidentified}
    assert set(reasons) == set(expected)
    for name, reason in expected.items():
        assert reason in reasons[name], name


def test_check_and_record_warn_about_skipped_directories_and_carry_on(
    project: SiloProject,
) -> None:
    expected = _odd_directories(project)
    project.add_run("TASK-001", started="2026-03-16T08:00:00.000Z", name="run_good")
    recorded = project.cli("record", "--all")
    assert recorded.exit_code == 0, recorded.output
    assert "from run run_good" in recorded.stdout
    checked = project.cli("check")
    assert checked.exit_code == 0, checked.output
    for result in (recorded, checked):
        for name in expected:
            assert f"silo-regress: warning: .silo/runs/{name}: skipped" in result.stderr
        assert "notes.txt" not in result.stderr and ".DS_Store" not in result.stderr
    # Only the good run's task was recorded, under the baselines directory only.
    assert sorted(project.baseline_bytes()) == [
        ".silo-regress-format",
        "TASK-001.result.json",
        "TASK-001.state-diff.json",
    ]
    assert not (project.root / "x").exists()
    assert not (project.root.parent / "x").exists()
    assert sorted(p.name for p in project.root.iterdir()) == [
        ".silo",
        "baselines",
        "pyproject.toml",
    ]


def test_unsafe_names_in_run_json_never_become_paths(project: SiloProject) -> None:
    project.add_run("TASK-001", env="../../outside", name="run_escape")
    project.add_run("../../../etc/passwd", env="crm-west", name="run_escape2")
    result = project.cli("record", "--all")
    assert result.exit_code == 3
    assert "no complete run to record" in result.stderr
    assert "run_escape: skipped, run.json environment '../../outside' is refused" in (result.stderr)
    by_name = project.cli("record", "--run-id", "run_escape")
    assert by_name.exit_code == 3
    assert "no such run (or its run.json is unreadable)" in by_name.stderr
    assert not project.baselines.exists()
    assert sorted(p.name for p in project.root.parent.iterdir()) == ["home", "project"]


def _recorded_then_newer(project: SiloProject, name: str, files: dict[str, bytes | None]) -> None:
    """TASK-002 recorded from run_old, then a newer run ``name`` with ``files`` replaced."""
    project.add_run("TASK-002", started="2026-03-16T09:00:00.000Z", name="run_old")
    assert project.cli("record", "TASK-002").exit_code == 0
    project.add_run("TASK-002", started="2026-03-16T10:00:00.000Z", name=name, files=files)


def test_newest_run_without_result_is_incomplete_for_both_artifacts(
    project: SiloProject,
) -> None:
    # The crashed rollout: run.json and trace.jsonl, no result.json (nor state-diff.json).
    _recorded_then_newer(project, "run_crashed", {"result.json": None, "state-diff.json": None})
    checked = project.cli("check", "--format", "json")
    assert checked.exit_code == 1
    results = json.loads(checked.stdout)["results"]
    assert [(r["artifact"], r["status"], r["runId"]) for r in results] == [
        ("result.json", "incomplete-run", "run_crashed"),
        ("state-diff.json", "incomplete-run", "run_crashed"),
    ]
    assert all("run_crashed/result.json is missing" in r["detail"] for r in results)

    # record takes the newest complete run instead, and says which.
    recorded = project.cli("record", "TASK-002")
    assert recorded.exit_code == 0, recorded.output
    assert "from run run_old" in recorded.stdout
    assert recorded.stdout.count("unchanged") == 2


@pytest.mark.parametrize(
    ("content", "detail"),
    [
        (b'{\n  "passed": true,\n  "reward": 0.', "ends early"),
        (b"", "is empty"),
        (b'{"passed": true, "note": "\xff\xfe"}\n', "not valid UTF-8"),
        (b"[1, 2]\n", "is not a JSON object"),
        (b'{"passed": NaN}\n', "NaN is not valid JSON"),
    ],
    ids=["truncated", "empty", "invalid-utf8", "not-object", "nan"],
)
def test_unparsable_result_in_newest_run_is_incomplete_never_a_fallback(
    project: SiloProject, content: bytes, detail: str
) -> None:
    _recorded_then_newer(project, "run_bad", {"result.json": content})
    index = index_runs(project.runs_dir)
    assert newest_complete(index, "crm-west", "TASK-002").name == "run_old"  # type: ignore[union-attr]
    checked = project.cli("check")
    assert checked.exit_code == 1
    assert checked.stdout.count("INCOMPLETE RUN  TASK-002 (crm-west)") == 2
    assert detail in checked.stdout
    assert "run_old" not in checked.stdout


def test_unparsable_state_diff_in_newest_run(project: SiloProject) -> None:
    project.add_run("TASK-002", started="2026-03-16T09:00:00.000Z")
    assert project.cli("record", "TASK-002").exit_code == 0
    before = project.baseline_bytes()
    project.add_run(
        "TASK-002",
        started="2026-03-16T10:00:00.000Z",
        name="run_half",
        files={"state-diff.json": b'{\n  "scalars": [\n'},
    )
    checked = project.cli("check", "--format", "json")
    assert checked.exit_code == 1
    statuses = {r["artifact"]: r["status"] for r in json.loads(checked.stdout)["results"]}
    assert statuses == {"result.json": "match", "state-diff.json": "incomplete-run"}
    # Its result is complete, so record picks it, then refuses the broken artifact.
    recorded = project.cli("record", "TASK-002")
    assert recorded.exit_code == 3
    assert recorded.stderr.startswith(
        "silo-regress: error: .silo/runs/run_half/state-diff.json: ends early"
    )
    assert project.baseline_bytes() == before


def test_read_run_identifies_task_and_start(project: SiloProject) -> None:
    path = project.add_run("TASK-007", env="crm-east", started="2026-03-16T10:15:02.123Z")
    run = read_run(path)
    assert isinstance(run, Run)
    assert (run.environment, run.task_id, run.started_at) == (
        "crm-east",
        "TASK-007",
        "2026-03-16T10:15:02.123Z",
    )
    assert run.started.microsecond == 123000 and run.started.utcoffset() is not None
    gone = read_run(path.parent / "run_missing")
    assert isinstance(gone, Unidentified) and "no run.json" in gone.reason


def test_unreadable_run_json_is_skipped_with_a_warning(project: SiloProject) -> None:
    path = project.add_run("TASK-001", name="run_locked")
    with unreadable(path / "run.json"):
        result = project.cli("record", "TASK-001")
    assert result.exit_code == 3
    assert "run_locked: skipped, cannot read run.json: Permission denied" in result.stderr
    assert "no run of task TASK-001" in result.stderr


def test_unreadable_result_is_an_error_naming_the_file(project: SiloProject) -> None:
    path = project.add_run("TASK-001", name="run_locked")
    with unreadable(path / "result.json"):
        result = project.cli("record", "TASK-001")
    assert result.exit_code == 3
    assert "run_locked/result.json" in result.stderr
    assert "Permission denied" in result.stderr
    assert not project.baselines.exists()


def test_an_unqualified_task_with_runs_in_two_environments(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    project.add_run("TASK-001", env="crm-west")
    project.add_run("TASK-001", env="crm-east")
    for args in (("record", "TASK-001"), ("check", "TASK-001"), ("diff", "TASK-001")):
        result = project.cli(*args)
        assert result.exit_code == 3, (args, result.output)
        assert "task TASK-001 has runs in several environments (crm-east, crm-west)" in (
            result.stderr
        )
    assert not project.baselines.exists()

    configured = make_project(tmp_path / "q", config='environment = "crm-east"\n')
    configured.add_run("TASK-001", env="crm-west")
    configured.add_run("TASK-001", env="crm-east", name="run_east")
    result = configured.cli("record", "TASK-001")
    assert result.exit_code == 0, result.output
    assert "from run run_east (crm-east," in result.stdout
    assert sorted(configured.baseline_bytes()) == [
        ".silo-regress-format",
        "TASK-001.result.json",
        "TASK-001.state-diff.json",
    ]
    assert configured.cli("check", "TASK-001").exit_code == 0
