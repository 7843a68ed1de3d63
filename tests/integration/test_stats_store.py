"""Tally files in the baselines directory: fmt rewrites or refuses them, status marks
the tasks they gate, and check reads them from git with --against."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support.runnerkit import control
from test_stats_gate_cli import STATS, check, passes, recorded

__all__ = ["control"]  # the fixture, used by name


def test_fmt_rewrites_a_reformatted_tally_and_check_flags_it(tmp_path: Path, control: Path) -> None:
    project = recorded(tmp_path, control)
    path = project.baselines / "TASK-001.tally.json"
    canonical = path.read_bytes()
    path.write_text(json.dumps(json.loads(canonical)), encoding="utf-8")  # one line
    flagged = project.cli("fmt", "--check")
    assert flagged.exit_code == 1, flagged.output
    assert "not-canonical   baselines/TASK-001.tally.json" in flagged.output
    done = project.cli("fmt")
    assert done.exit_code == 0, done.output
    assert "reformatted     baselines/TASK-001.tally.json" in done.output
    assert path.read_bytes() == canonical
    assert project.cli("fmt", "--check").exit_code == 0


def test_fmt_refuses_an_impossible_tally_and_changes_nothing(tmp_path: Path, control: Path) -> None:
    project = recorded(tmp_path, control)
    path = project.baselines / "TASK-001.tally.json"
    broken = path.read_text().replace('"rollouts": 10', '"rollouts": 5')
    path.write_text(broken, encoding="utf-8")
    done = project.cli("fmt")
    assert done.exit_code != 0
    assert "invalid         baselines/TASK-001.tally.json: /passed is 9, more than the 5" in (
        done.output
    )
    assert path.read_text() == broken


def test_status_marks_a_stats_task_with_its_tally(tmp_path: Path, control: Path) -> None:
    project = recorded(tmp_path, control)
    done = project.cli("status")
    assert done.exit_code == 0, done.output
    row = next(line for line in done.stdout.splitlines() if line.startswith("TASK-001"))
    assert "stats gate, tally 9/10" in row


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_check_against_a_commit_reads_the_tally_committed_there(
    tmp_path: Path, control: Path
) -> None:
    project = recorded(tmp_path, control, extra=STATS)
    root = project.root
    _git(root, "init", "-q")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "baseline")
    # the working tree's tally now says the task always failed; HEAD's says 9 of 10
    path = project.baselines / "TASK-001.tally.json"
    path.write_text(path.read_text().replace('"passed": 9', '"passed": 0'), encoding="utf-8")
    passes(control, 1, 9)
    against = check(project, "--repeat", "10", "--against", "HEAD", "--format", "json")
    task = json.loads(against.stdout)["stats"]["tasks"][0]
    assert task["baseline"]["passed"] == 9 and task["tier"] == "regression"
    assert against.exit_code == 1


def test_status_marks_an_exact_task_recorded_from_rollouts_that_differ(
    tmp_path: Path, control: Path
) -> None:
    from support.runnerkit import silo_project

    project = silo_project(tmp_path)
    passes(control, 2, 1)
    forced = project.cli("record", "--repeat", "3", "--force", "--jobs", "1", "TASK-001")
    assert forced.exit_code == 0, forced.output
    row = next(line for line in project.cli("status").stdout.splitlines() if "TASK-001" in line)
    assert "varies" in row


def test_a_rollout_that_crashed_mid_round_is_named_and_counted_as_failed(
    tmp_path: Path, control: Path
) -> None:
    from support.runnerkit import behave

    project = recorded(tmp_path, control)
    behave(control, **{"TASK-001": {"mode": "vary", "modes": ["ok", "crash", "ok", "ok"]}})
    from test_check_repeat import restart_count

    restart_count(control)
    done = check(project, "--repeat", "4", "--format", "json")
    assert "1 of 4 rollouts left no complete result.json" in done.stderr, done.output
    assert "each counts as a failed rollout" in done.stderr
    task = json.loads(done.stdout)["stats"]["tasks"][0]
    # Silo's exit status counts a crash as a failure; leaving it out would let 5 crashes
    # in 5 pass any gate (issue 31).
    assert task["rollouts_used"] == 4 and task["candidate"]["passed"] == 3
    assert len(task["without_result"]) == 1


def test_merge_judges_every_shards_stats_tasks_as_one_suite(tmp_path: Path, control: Path) -> None:
    from support.runnerkit import silo_project

    gated = '\n[tool.silo-regress.tasks.TASK-001]\ngate = "stats"\n'
    gated += '[tool.silo-regress.tasks.TASK-003]\ngate = "stats"\n'  # shard 1 of 2; 001: 2
    project = silo_project(tmp_path, gated)
    passes(control, 9, 1)
    args = ("record", "--repeat", "10", "--jobs", "1", "TASK-001", "TASK-003")
    assert project.cli(*args).exit_code == 0
    reports = []
    for k in (1, 2):
        passes(control, 1, 9)
        path = tmp_path / f"shard-{k}.json"
        done = project.cli(
            "check",
            "--run",
            "--repeat",
            "10",
            "--jobs",
            "1",
            "--shard",
            f"{k}/2",
            "--format",
            "json",
            "-o",
            str(path),
            "TASK-001",
            "TASK-003",
        )
        assert done.exit_code in (0, 1), done.output
        reports.append(str(path))
    documents = [json.loads(Path(p).read_text()) for p in reports]
    judged = [len(d["stats"]["tasks"]) if "stats" in d else 0 for d in documents]
    assert judged == [1, 1]  # each task judged by its own shard
    merged = project.cli("merge", *reports, "--format", "json")
    stats = json.loads(merged.stdout)["stats"]
    assert {t["task"] for t in stats["tasks"]} == {"TASK-001", "TASK-003"}
    assert stats["suite"]["tasks"] == 2
    assert stats["suite"]["verdict"] == "suite-regression"  # TASK-001 fell to 1 in 10
    assert merged.exit_code == 1
