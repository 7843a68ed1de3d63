"""diff --from and log read tally files (baselines/TASK.tally.json) as pass counts moving,
in real git repositories: a changed tally is shown, never ignored, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

from support.gitrepo import commit_all, recorded
from support.silofixture import SiloProject

from silo_regress.stats.tally import Tally, serialize_tally

LEAD = "Lead qualified"


def write_tally(project: SiloProject, passed: int, rollouts: int = 10, *, lead: int = 9) -> None:
    tally = Tally(
        rollouts=rollouts,
        passed=passed,
        checks=((LEAD, lead), ("Polite reply", rollouts)),
        reward_sum=passed,
        reward_squares=passed,
    )
    (project.baselines / "TASK-001.tally.json").write_bytes(serialize_tally(tally))


def tallied(tmp_path: Path) -> SiloProject:
    """TASK-001 recorded with a tally of 9/10, then a commit that moves it to 6/10."""
    project = recorded(tmp_path)
    write_tally(project, 9)
    commit_all(project, "TASK-001 passes 9 in 10")
    write_tally(project, 6, lead=5)
    commit_all(project, "TASK-001 now passes 6 in 10")
    return project


def test_diff_between_commits_shows_the_pass_counts_moving(tmp_path: Path) -> None:
    project = tallied(tmp_path)
    done = project.cli("diff", "--from", "HEAD~1", "--to", "HEAD")
    assert done.exit_code == 0, done.output
    assert "TASK-001  tally.json  changed" in done.stdout
    assert "  - tally: 9/10 -> 6/10 passed (90% -> 60%)" in done.stdout
    assert f"  - check '{LEAD}': 9/10 -> 5/10 passed" in done.stdout
    assert "Polite reply" not in done.stdout  # a check that did not move is not listed
    assert "1 task changed from HEAD~1 to HEAD; 1 unchanged" in done.stdout


def test_diff_json_and_markdown_carry_the_counts(tmp_path: Path) -> None:
    project = tallied(tmp_path)
    document = json.loads(project.cli("diff", "--from", "HEAD~1", "--format", "json").stdout)
    (task,) = document["tasks"]
    (change,) = task["artifacts"]
    assert change["artifact"] == "tally.json" and change["change"] == "changed"
    assert change["tally"]["before"] == {"passed": 9, "rollouts": 10}
    assert change["tally"]["after"] == {"passed": 6, "rollouts": 10}
    assert change["tally"]["checks"][0]["label"] == LEAD
    assert task["summary"].startswith("tally: 9/10 -> 6/10 passed")
    markdown = project.cli("diff", "--from", "HEAD~1", "--format", "markdown").stdout
    assert "tally: 9/10 -> 6/10 passed (90% -> 60%)" in markdown


def test_diff_to_the_working_tree_shows_an_added_and_a_removed_tally(tmp_path: Path) -> None:
    project = recorded(tmp_path)
    write_tally(project, 7)
    added = project.cli("diff", "--from", "HEAD")
    assert added.exit_code == 0, added.output
    assert "TASK-001  tally.json  added" in added.stdout
    assert "  - tally: 7/10 passed (70%)" in added.stdout
    commit_all(project, "tally")
    (project.baselines / "TASK-001.tally.json").unlink()
    removed = project.cli("diff", "--from", "HEAD")
    assert "TASK-001  tally.json  removed" in removed.stdout
    assert "  - tally removed (was 7/10 passed)" in removed.stdout


def test_a_broken_or_relaid_tally_is_named_not_a_crash(tmp_path: Path) -> None:
    project = tallied(tmp_path)
    path = project.baselines / "TASK-001.tally.json"
    path.write_text(path.read_text().replace('"passed": 6', '"passed": 12'))
    broken = project.cli("diff", "--from", "HEAD")
    assert broken.exit_code == 0, broken.output
    assert "TASK-001  tally.json  unreadable" in broken.stdout
    assert "/passed is 12, more than the 10 rollouts" in broken.stdout
    # Same counts, other layout: a format-only change, not a move.
    write_tally(project, 6, lead=5)
    path.write_bytes(json.dumps(json.loads(path.read_bytes())).encode())
    relaid = project.cli("diff", "--from", "HEAD")
    assert "TASK-001  tally.json  format-only" in relaid.stdout
    assert "->" not in relaid.stdout


def test_log_shows_each_commit_that_moved_the_tally(tmp_path: Path) -> None:
    project = tallied(tmp_path)
    done = project.cli("log", "TASK-001")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    newest = next(line for line in lines if "now passes 6 in 10" in line)
    assert "tally: 9/10 -> 6/10 passed (90% -> 60%)" in newest
    first = next(line for line in lines if "passes 9 in 10" in line and "now" not in line)
    assert "tally: 9/10 passed (90%)" in first
    document = json.loads(project.cli("log", "TASK-001", "--format", "json").stdout)
    moved = document["commits"][0]["artifacts"][0]
    assert moved["tally"]["after"] == {"passed": 6, "rollouts": 10}
