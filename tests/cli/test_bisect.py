"""``bisect`` and ``blame`` against real git histories made here, with a stand-in Silo
whose pass rate is a file in each commit (tests/support/bisect_silo.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.gitrepo import SILO, commit_all, head
from support.runnerkit import control
from support.silofixture import SiloProject, git, git_init, make_project

from silo_regress.stats.tally import Tally, serialize_tally

__all__ = ["control"]  # the fixture, used by name

BISECT_SILO = Path(__file__).parent.parent / "support" / "bisect_silo.py"


def bisect_project(root: Path, *, gate: str, extra: str = "") -> SiloProject:
    command = json.dumps([sys.executable, str(BISECT_SILO)])
    project = make_project(
        root,
        config=f'silo-command = {command}\nenvironment = "crm-west"\ngate = "{gate}"\n'
        'inputs = ["quality.json", "agent/**"]\n' + extra,
    )
    git_init(root)
    (root / ".gitignore").write_text(".silo/\n", encoding="utf-8")
    return project


def quality(project: SiloProject, **value: Any) -> None:
    (project.root / "quality.json").write_text(json.dumps(value), encoding="utf-8")


def record_good(project: SiloProject, *, rate_note: str = "") -> str:
    """The good commit: a recorded result baseline and (stats) a tally of 10 of 10."""
    project.add_run("TASK-001")
    done = project.cli("record", "TASK-001")
    assert done.exit_code == 0, done.output
    (project.baselines / "TASK-001.tally.json").write_bytes(
        serialize_tally(Tally(rollouts=10, passed=10))
    )
    return commit_all(project, "Record TASK-001" + rate_note)


def history(
    project: SiloProject, n: int, *, culprit: int, bad: dict[str, Any], name: str = "step"
) -> list[str]:
    """n commits after the good one; commit number ``culprit`` (1-based) writes ``bad``."""
    shas = []
    for i in range(1, n + 1):
        (project.root / "agent").mkdir(exist_ok=True)
        (project.root / "agent" / f"{name}{i}.txt").write_text(f"{i}\n", encoding="utf-8")
        if i == culprit:
            quality(project, **bad)
        shas.append(commit_all(project, f"Step {i}"))
    return shas


def commits_with(project: SiloProject, qualities: list[dict[str, Any]]) -> list[str]:
    """One commit after the good one for each item, each writing it as quality.json."""
    shas = []
    for i, value in enumerate(qualities, start=1):
        (project.root / "agent").mkdir(exist_ok=True)
        (project.root / "agent" / f"s{i}.txt").write_text(f"{i}\n", encoding="utf-8")
        quality(project, **value)
        shas.append(commit_all(project, f"Step {i}"))
    return shas


def project_with_setup(root: Path, *, exit_code: str) -> SiloProject:
    """A stats project with its good commit, whose bisect-setup exits with
    ``exit_code``, a Python expression over ``q`` (the commit's quality.json)."""
    script = f"import json, sys; q = json.load(open('quality.json')); sys.exit({exit_code})"
    setup = json.dumps([sys.executable, "-c", script])
    project = bisect_project(root, gate="stats", extra=f"bisect-setup = {setup}\n")
    quality(project, rate=1.0)
    record_good(project)
    return project


def worktrees_of(root: Path) -> list[str]:
    out = git(root, "worktree", "list", "--porcelain").stdout
    return [line for line in out.splitlines() if line.startswith("worktree ")]


def bisect_json(project: SiloProject, *args: str) -> tuple[int, dict[str, Any], str]:
    done = project.cli("bisect", "TASK-001", "--format", "json", *args)
    try:
        document = json.loads(done.stdout)
    except ValueError:
        document = {}
    return done.exit_code, document, done.output


def test_stats_task_culprit_found_in_worktrees(tmp_path: Path, control: Path) -> None:
    project = bisect_project(tmp_path / "p", gate="stats")
    quality(project, rate=1.0)
    record_good(project)
    shas = history(project, 12, culprit=7, bad={"rate": 0.0})
    # The failing check's rollouts at bad, made from that commit on a clean tree, count
    # for free; a run without a provenance record (made by plain silo) does not.
    assert project.cli("run", "TASK-001", "--repeat", "3").exit_code == 0
    project.add_run("TASK-001")
    before = git(project.root, "status", "--porcelain").stdout
    code, result, output = bisect_json(project, "--jobs", "2", "--budget", "80")
    assert code == 0, output
    assert result["culprit"]["commit"] == shas[6]
    assert result["culprit"]["files"] == ["agent/step7.txt", "quality.json"]
    assert result["probability"] >= 0.95
    assert result["freeRollouts"] == 10 + 3  # the tally recorded at good, the runs at bad
    assert result["rollouts"] <= 40
    assert result["before"]["mean"] > 0.8 and result["after"]["mean"] < 0.3
    # Never the user's tree or index, and no worktree left behind.
    assert git(project.root, "status", "--porcelain").stdout == before
    assert head(project.root) == shas[-1]
    assert len(worktrees_of(project.root)) == 1
    assert not (project.root / ".git" / "silo-regress-bisect.json").exists()


def test_exact_task_plain_bisection(tmp_path: Path, control: Path) -> None:
    project = bisect_project(tmp_path / "p", gate="exact")
    quality(project, rate=1.0, output="Qualified the lead for TASK-001.")
    # The recorded run must be what the stand-in writes: record one real rollout.
    commit_all(project, "Agent")
    assert project.cli("run", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    commit_all(project, "Record TASK-001")
    shas = history(project, 16, culprit=11, bad={"rate": 1.0, "output": "Something else."})
    code, result, output = bisect_json(project)
    assert code == 0, output
    assert result["culprit"]["commit"] == shas[10]
    assert result["gate"] == "exact"
    assert result["rollouts"] <= 5  # log2(16) + 1


def test_merges_are_bisected_on_the_first_parent_line(tmp_path: Path, control: Path) -> None:
    project = bisect_project(tmp_path / "p", gate="stats")
    quality(project, rate=1.0)
    record_good(project)
    history(project, 3, culprit=0, bad={})
    git(project.root, "checkout", "-qb", "feature")
    (project.root / "agent" / "feature.txt").write_text("x\n", encoding="utf-8")
    side = [commit_all(project, "Feature 1")]
    quality(project, rate=0.0)
    side.append(commit_all(project, "Feature 2: the culprit, on a side branch"))
    git(project.root, "checkout", "-q", "main")
    (project.root / "agent" / "main.txt").write_text("y\n", encoding="utf-8")
    commit_all(project, "Main moves on")
    git(project.root, "merge", "-q", "--no-ff", "-m", "Merge feature", "feature")
    merge = head(project.root)
    after = history(project, 3, culprit=0, bad={}, name="after")
    code, result, output = bisect_json(project, "--jobs", "2", "--budget", "80")
    assert code == 0, output
    assert result["commits"] == 3 + 1 + 1 + 3  # first parents only: never the side branch
    assert result["culprit"]["commit"] == merge
    assert "quality.json" in result["culprit"]["files"]
    assert after[-1] == result["bad"]
    assert not {side[0], side[1]} & {u["commit"] for u in result["untested"]}


def test_commits_that_do_not_build_or_load_are_skipped(tmp_path: Path, control: Path) -> None:
    project = project_with_setup(tmp_path / "p", exit_code="3 if q.get('nobuild') else 0")
    odd: dict[int, dict[str, Any]] = {3: {"nobuild": True}, 9: {"broken": True}}
    shas = commits_with(
        project, [{"rate": 0.0 if i >= 6 else 1.0, **odd.get(i, {})} for i in range(1, 13)]
    )
    # Every commit gets tested here: a budget past the culprit forces the skips to show.
    code, result, output = bisect_json(project, "--jobs", "2", "--budget", "120")
    assert code == 0, output
    assert result["culprit"]["commit"] == shas[5]
    reasons = {u["commit"]: u["reason"] for u in result["untested"]}
    assert set(reasons) <= {shas[2], shas[8]}
    for sha, reason in reasons.items():
        if sha == shas[2]:
            assert "bisect-setup" in reason and "exited 3" in reason
        else:
            assert "Silo could not run it" in reason
    assert len(worktrees_of(project.root)) == 1


def test_a_skipped_neighbour_of_the_culprit_is_named_as_a_suspect(
    tmp_path: Path, control: Path
) -> None:
    project = project_with_setup(tmp_path / "p", exit_code="q.get('nobuild', 0)")
    shas = commits_with(
        project,
        [
            {"rate": 0.0 if i >= 4 else 1.0, **({"nobuild": 1} if i == 4 else {})}
            for i in range(1, 7)
        ],
    )
    code, result, output = bisect_json(project, "--jobs", "2", "--budget", "120")
    assert code == 0, output
    # Commit 4 (the true culprit) cannot be built: 5 is named, 4 is its suspect.
    assert result["culprit"]["commit"] == shas[4]
    assert result["suspects"] == [shas[3]]


def _sleepy_env(control: Path, sleep: float) -> dict[str, str]:
    return {**os.environ, "FAKE_SILO_CONTROL": str(control), "FAKE_SILO_SLEEP": str(sleep)}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_leaves_a_resumable_state_and_no_worktree(
    tmp_path: Path, control: Path, sig: signal.Signals
) -> None:
    project = bisect_project(tmp_path / "p", gate="stats")
    quality(project, rate=1.0)
    record_good(project)
    shas = history(project, 10, culprit=4, bad={"rate": 0.0})
    state = project.root / ".git" / "silo-regress-bisect.json"
    args = [str(SILO), "--project", str(project.root), "bisect", "TASK-001", "--jobs", "2"]
    proc = subprocess.Popen(
        args, env=_sleepy_env(control, 0.3), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if state.exists() and json.loads(state.read_text())["rounds"] >= 1:
            break
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("no round was saved in time")
    time.sleep(0.2)  # into the next round's rollouts
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert b"interrupted" in stderr
    saved = json.loads(state.read_text())
    assert saved["rounds"] >= 1 and saved["used"] >= 2
    assert len(worktrees_of(project.root)) == 1
    assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob("silo-regress-bisect-*/tree"))
    # The same command resumes: the rounds done before count, the culprit is found.
    code, result, output = bisect_json(project, "--jobs", "2")
    assert code == 0, output
    assert result["culprit"]["commit"] == shas[3]
    assert result["rollouts"] >= saved["used"]
    assert result["rounds"] >= saved["rounds"]
    assert not state.exists()


def test_a_second_bisect_is_refused_while_one_runs(tmp_path: Path, control: Path) -> None:
    import fcntl

    project = bisect_project(tmp_path / "p", gate="stats")
    quality(project, rate=1.0)
    record_good(project)
    history(project, 4, culprit=2, bad={"rate": 0.0})
    lock = project.root / ".git" / "silo-regress-bisect.lock"
    with open(lock, "a+", encoding="utf-8") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        done = project.cli("bisect", "TASK-001")
    assert done.exit_code == 3
    assert "another silo-regress bisect is running" in done.stderr
    assert not (project.root / ".git" / "silo-regress-bisect.json").exists()


def test_a_state_for_another_range_is_kept_unless_restarted(tmp_path: Path, control: Path) -> None:
    project = bisect_project(tmp_path / "p", gate="stats")
    quality(project, rate=1.0)
    good = record_good(project)
    shas = history(project, 4, culprit=2, bad={"rate": 0.0})
    state = project.root / ".git" / "silo-regress-bisect.json"
    state.write_text(
        json.dumps(
            {
                "format": 1,
                "task": "TASK-001",
                "good": good,
                "bad": shas[1],
                "line": [good],
                "passed": {},
                "rollouts": {},
                "skipped": {},
                "used": 0,
                "rounds": 0,
                "free": 0,
            }
        )
    )
    done = project.cli("bisect", "TASK-001")
    assert done.exit_code == 3
    assert "--restart" in done.stderr
    code, result, output = bisect_json(project, "--restart", "--jobs", "2")
    assert code == 0, output
    assert result["culprit"]["commit"] == shas[1]


def test_undecided_at_the_budget_exits_1_and_keeps_the_state(tmp_path: Path, control: Path) -> None:
    project = bisect_project(tmp_path / "p", gate="stats")
    quality(project, rate=1.0)
    record_good(project)
    history(project, 8, culprit=5, bad={"rate": 0.0})
    done = project.cli("bisect", "TASK-001", "--jobs", "2", "--budget", "4")
    assert done.exit_code == 1
    assert "undecided after 4 rollouts" in done.stdout
    assert "passed" not in done.stdout.split("\n")[0]
    assert (project.root / ".git" / "silo-regress-bisect.json").exists()


def test_blame_names_the_commit_that_introduced_each_value(tmp_path: Path) -> None:
    from support.silofixture import make_result

    project = bisect_project(tmp_path / "p", gate="exact")
    project.add_run("TASK-001", result=make_result(agent_output="first", reward=1))
    assert project.cli("record", "TASK-001").exit_code == 0
    first = commit_all(project, "First record")
    project.add_run("TASK-001", result=make_result(agent_output="second", reward=1))
    assert project.cli("record", "TASK-001").exit_code == 0
    second = commit_all(project, "Agent says second")
    project.add_run("TASK-001", result=make_result(agent_output="second", reward=0.5))
    assert project.cli("record", "TASK-001").exit_code == 0
    third = commit_all(project, "Reward halves")
    done = project.cli("blame", "TASK-001", "/agentOutput", "--format", "json")
    assert done.exit_code == 0, done.output
    values = json.loads(done.stdout)["values"]
    assert values == [
        {
            "pointer": "/agentOutput",
            "value": "second",
            "commit": second,
            "subject": "Agent says second",
            "date": values[0]["date"],
            "boundary": False,
        }
    ]
    whole = json.loads(project.cli("blame", "TASK-001", "--format", "json").stdout)["values"]
    by_pointer = {v["pointer"]: v["commit"] for v in whole}
    assert by_pointer["/reward"] == third
    assert by_pointer["/toolCalls"] == first
    text = project.cli("blame", "TASK-001", "/reward").stdout
    assert third[:12] in text and "Reward halves" in text
    markdown = project.cli("blame", "TASK-001", "/reward", "--format", "markdown").stdout
    assert f"| `/reward` | `0.5` | `{third[:12]}` Reward halves |" in markdown
    missing = project.cli("blame", "TASK-001", "/nothing")
    assert missing.exit_code == 3 and "/nothing" in missing.stderr


def test_blame_of_a_stats_task_finds_the_change_in_the_tally_history(tmp_path: Path) -> None:
    project = bisect_project(tmp_path / "p", gate="stats")
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    shas = []
    for passed in (19, 20, 18, 9, 10):
        (project.baselines / "TASK-001.tally.json").write_bytes(
            serialize_tally(Tally(rollouts=20, passed=passed))
        )
        shas.append(commit_all(project, f"Tally {passed}/20"))
    done = project.cli("blame", "TASK-001", "--format", "json")
    assert done.exit_code == 0, done.output
    found = json.loads(done.stdout)
    assert [t["passed"] for t in found["tallies"]] == [19, 20, 18, 9, 10]
    assert found["changePoint"]["commit"] == shas[3]
    assert found["changePoint"]["probability"] > 0.9


@pytest.mark.parametrize("kind", ["garbage", "fifo", "huge-count"])
def test_a_forged_state_file_is_refused_by_name(tmp_path: Path, control: Path, kind: str) -> None:
    project = bisect_project(tmp_path / "p", gate="stats")
    quality(project, rate=1.0)
    good = record_good(project)
    shas = history(project, 3, culprit=2, bad={"rate": 0.0})
    state = project.root / ".git" / "silo-regress-bisect.json"
    if kind == "fifo":
        os.mkfifo(state)
    elif kind == "garbage":
        state.write_bytes(b"\x00{not json")
    else:
        line = [good, *shas]
        state.write_text(
            json.dumps(
                {
                    "format": 1,
                    "task": "TASK-001",
                    "good": good,
                    "bad": shas[-1],
                    "line": line,
                    "passed": {shas[0]: 9},
                    "rollouts": {shas[0]: 3},
                    "skipped": {},
                    "used": 3,
                    "rounds": 1,
                    "free": 0,
                }
            )
        )
    done = project.cli("bisect", "TASK-001")
    assert done.exit_code == 3
    assert str(state) in done.stderr
    assert len(worktrees_of(project.root)) == 1


def test_nothing_to_bisect_is_bad_input(tmp_path: Path, control: Path) -> None:
    project = bisect_project(tmp_path / "p", gate="stats")
    quality(project, rate=1.0)
    good = record_good(project)
    history(project, 2, culprit=1, bad={"rate": 0.0})
    same = project.cli("bisect", "TASK-001", "--good", "HEAD")
    assert same.exit_code == 3
    assert "nothing to bisect" in same.stderr
    backwards = project.cli("bisect", "TASK-001", "--good", "HEAD", "--bad", good)
    assert backwards.exit_code == 3
    assert "not an ancestor" in backwards.stderr
    assert not (project.root / ".git" / "silo-regress-bisect.json").exists()


def test_exact_bisection_skips_a_commit_whose_agent_does_not_load(
    tmp_path: Path, control: Path
) -> None:
    project = bisect_project(tmp_path / "p", gate="exact")
    quality(project, rate=1.0, output="Qualified the lead for TASK-001.")
    commit_all(project, "Agent")
    assert project.cli("run", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    commit_all(project, "Record TASK-001")
    shas = []
    for i in range(1, 9):
        (project.root / f"s{i}.txt").write_text(f"{i}\n", encoding="utf-8")
        output = "Something else." if i >= 6 else "Qualified the lead for TASK-001."
        quality(project, rate=1.0, output=output, **({"broken": True} if i == 4 else {}))
        shas.append(commit_all(project, f"Step {i}"))
    code, result, output = bisect_json(project)
    assert code == 0, output
    assert result["culprit"]["commit"] == shas[5]
    assert [u["commit"] for u in result["untested"]] == [shas[3]]
    assert "Silo could not run it" in result["untested"][0]["reason"]
    assert "Agent file not found" not in output
    assert len(worktrees_of(project.root)) == 1


def test_a_rollout_without_a_result_is_a_failed_rollout_not_a_skip(
    tmp_path: Path, control: Path
) -> None:
    project = bisect_project(tmp_path / "p", gate="stats")
    quality(project, rate=1.0)
    record_good(project)
    shas = history(project, 8, culprit=5, bad={"rate": 1.0, "mode": "crash"})
    code, result, output = bisect_json(project, "--jobs", "2", "--budget", "80")
    assert code == 0, output
    assert result["culprit"]["commit"] == shas[4]
    assert result["untested"] == []
    assert result["after"]["passed"] == 0 and result["after"]["rollouts"] >= 2


def test_a_bisect_setup_that_is_not_a_command_is_refused_by_key(tmp_path: Path) -> None:
    project = bisect_project(tmp_path / "p", gate="stats", extra='bisect-setup = "npm ci"\n')
    done = project.cli("bisect", "TASK-001")
    assert done.exit_code == 3
    assert "bisect-setup" in done.stderr
