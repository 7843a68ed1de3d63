"""status: one row per task, with the loose ends (untracked tasks, orphaned baselines)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from support.silofixture import SiloProject, make_project, make_result

from silo_regress.judging.outcome import Verdict
from silo_regress.project.config import load_config
from silo_regress.project.taskref import TaskRef
from silo_regress.render.text import format_age, render_status
from silo_regress.reports.overview import Status, build_status
from silo_regress.runs.index import index_runs
from silo_regress.store.baselines import BaselineStore

NOW = datetime(2026, 3, 16, 12, 0, 0, tzinfo=UTC)


def _project(project: SiloProject) -> None:
    project.add_run("TASK-001", env="crm-west", started="2026-03-16T09:00:00.000Z", name="run_w1")
    project.add_run("TASK-001", env="crm-east", started="2026-03-16T09:30:00.000Z", name="run_e1")
    project.add_run("TASK-002", started="2026-03-16T10:00:00.000Z", name="run_2a")
    project.add_run("TASK-003", started="2026-03-16T10:00:00.000Z", name="run_3a")
    project.add_run("TASK-004", started="2026-03-15T10:00:00.000Z", name="run_4a")
    assert project.cli("record", "--all").exit_code == 0
    # TASK-002 changes, TASK-003 crashes, TASK-004 loses its runs (orphaned),
    # TASK-008 and TASK-009 run without baselines (untracked).
    project.add_run(
        "TASK-002", started="2026-03-16T11:00:00.000Z", name="run_2b", result=make_result(reward=0)
    )
    project.add_run(
        "TASK-003", started="2026-03-16T11:59:30.000Z", name="run_3b", files={"result.json": None}
    )
    for path in project.runs_dir.glob("run_4a/*"):
        path.unlink()
    project.add_run("TASK-008", started="2026-03-14T12:00:00.000Z", name="run_8a")
    project.add_run("TASK-009", env="crm-west", started="2026-03-16T11:00:00.000Z", name="run_9w")
    project.add_run("TASK-009", env="crm-east", started="2026-03-16T11:00:00.000Z", name="run_9e")


def _status(project: SiloProject) -> Status:
    """Status of the project of :func:`_project`, seen at the fixed time NOW."""
    _project(project)
    config = load_config(project.root)
    store = BaselineStore(config.baselines_dir, config.artifacts)
    return build_status(config, index_runs(config.runs_dir), store, now=NOW)


def test_build_status_rows(project: SiloProject) -> None:
    status = _status(project)
    rows = [
        (
            str(r.task),
            r.environment,
            r.baselines,
            r.newest_run,
            r.run_age_seconds,
            r.verdict,
            r.note,
        )
        for r in status.rows
    ]
    both = ("result.json", "state-diff.json")
    assert rows == [
        ("crm-east/TASK-001", "crm-east", both, "run_e1", 9000.0, Verdict.MATCH, ""),
        ("crm-west/TASK-001", "crm-west", both, "run_w1", 10800.0, Verdict.MATCH, ""),
        ("TASK-002", "crm-west", both, "run_2b", 3600.0, Verdict.CHANGED, ""),
        ("TASK-003", "crm-west", both, "run_3b", 30.0, Verdict.INCOMPLETE_RUN, ""),
        ("TASK-004", None, both, None, None, Verdict.MISSING_RUN, "no run"),
        ("TASK-008", "crm-west", (), "run_8a", 172800.0, None, "no baseline"),
        ("crm-east/TASK-009", "crm-east", (), "run_9e", 3600.0, None, "no baseline"),
        ("crm-west/TASK-009", "crm-west", (), "run_9w", 3600.0, None, "no baseline"),
    ]
    assert status.report.summary() == {
        "changed": 1,
        "incomplete-run": 2,
        "match": 5,
        "missing-run": 2,
    }
    assert status.rows[2].task == TaskRef("TASK-002")


def test_render_status_table(project: SiloProject) -> None:
    status = _status(project)
    assert render_status(status) == (
        "TASK               ENVIRONMENT  BASELINES                     NEWEST RUN  AGE      VERDICT\n"  # noqa: E501
        "crm-east/TASK-001  crm-east     result.json, state-diff.json  run_e1      2h ago   match\n"
        "crm-west/TASK-001  crm-west     result.json, state-diff.json  run_w1      3h ago   match\n"
        "TASK-002           crm-west     result.json, state-diff.json  run_2b      1h ago   changed\n"  # noqa: E501
        "TASK-003           crm-west     result.json, state-diff.json  run_3b      30s ago  incomplete-run\n"  # noqa: E501
        "TASK-004           -            result.json, state-diff.json  -           -        missing-run (no run)\n"  # noqa: E501
        "TASK-008           crm-west     -                             run_8a      2d ago   no baseline\n"  # noqa: E501
        "crm-east/TASK-009  crm-east     -                             run_9e      1h ago   no baseline\n"  # noqa: E501
        "crm-west/TASK-009  crm-west     -                             run_9w      1h ago   no baseline\n"  # noqa: E501
        "\n"
        # Every count in tasks: 2 + 1 + 1 + 1 + 3 = 8 rows.
        "8 tasks: 2 match, 1 changed, 1 missing-run, 1 incomplete-run, 3 no baseline\n"
    )
    colored = render_status(status, color=True)
    assert "\x1b[33mTASK-008" in colored and "\x1b[31mTASK-002" in colored


def test_status_command_lists_untracked_and_orphaned(project: SiloProject) -> None:
    _project(project)
    result = project.cli("status")
    assert result.exit_code == 0, result.output  # status reports; it does not fail
    lines = result.stdout.splitlines()
    assert lines[0].split() == [
        "TASK",
        "ENVIRONMENT",
        "BASELINES",
        "NEWEST",
        "RUN",
        "AGE",
        "VERDICT",
    ]
    assert lines[5].split()[0] == "TASK-004" and lines[5].endswith("missing-run (no run)")
    assert lines[6].split()[0] == "TASK-008" and lines[6].endswith("no baseline")
    assert lines[-1].endswith("3 no baseline")
    assert "run_4a: skipped, no run.json" in result.stderr


def test_status_of_an_empty_project(project: SiloProject) -> None:
    result = project.cli("status")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[1:] == [
        "(no baselines and no runs)",
        "",
        "0 tasks: nothing to show",
    ]


def test_format_age() -> None:
    assert [format_age(s) for s in (None, -5, 0, 59, 60, 3599, 3600, 86399, 86400 * 3)] == [
        "-",
        "0s ago",
        "0s ago",
        "59s ago",
        "1m ago",
        "59m ago",
        "1h ago",
        "23h ago",
        "3d ago",
    ]


def test_untracked_tasks_are_named_as_record_would_name_them(tmp_path: Path) -> None:
    """With ``environment`` set, that environment's runs go by the bare task id."""
    project = make_project(tmp_path, config='environment = "crm-west"\n')
    project.add_run("TASK-009", env="crm-west", started="2026-03-16T11:00:00.000Z")
    project.add_run("TASK-009", env="crm-east", started="2026-03-16T11:00:00.000Z")
    config = load_config(project.root)
    status = build_status(config, index_runs(config.runs_dir), BaselineStore.of(config), now=NOW)
    assert sorted(str(r.task) for r in status.rows) == ["TASK-009", "crm-east/TASK-009"]
    assert project.cli("record", "--all").exit_code == 0
    assert sorted(project.baseline_bytes()) == [
        ".silo-regress-format",
        "TASK-009.result.json",
        "TASK-009.state-diff.json",
        "crm-east/TASK-009.result.json",
        "crm-east/TASK-009.state-diff.json",
    ]
