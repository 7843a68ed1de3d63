"""`review`'s keys through a real pseudo-terminal (pexpect), and its scripted forms.

Every key: [a]ccept, accept [p]aths (asked again on a bad pointer), [r]eject (the
run is discarded, never deleted), [s]kip, accept [A]ll, [u]ndo, [d]iff, [q]uit and
Ctrl-C; the closing line counts every item exactly once.
"""

from __future__ import annotations

import json
import os
import sys
import time

import pytest
from support.reviewkit import PROMPT, changes, finish, spawn, text
from support.silofixture import SiloProject, make_result

from silo_regress.runs.discards import DISCARD_DIR
from silo_regress.store.transaction import writer_lock

pexpect = pytest.importorskip("pexpect")


def test_skip_every_item_counts_each_once(project: SiloProject) -> None:
    changes(project)
    before = project.baseline_bytes()
    child = spawn(project)
    for position in ("1/3", "2/3", "3/3"):
        child.expect(rf"\[{position}\]")
        child.expect(PROMPT)
        child.send("s")
    child.expect("3 to review: accepted 0, rejected 0, skipped 3\r\n")
    finish(child)
    assert project.baseline_bytes() == before


def test_quit_on_the_first_item_leaves_the_rest_not_reviewed(project: SiloProject) -> None:
    changes(project)
    child = spawn(project)
    child.expect(PROMPT)
    child.send("q")
    child.expect("3 to review: accepted 0, rejected 0, skipped 0, not reviewed 3")
    finish(child)


def test_ctrl_c_at_the_prompt_quits_with_the_counts(project: SiloProject) -> None:
    changes(project)
    child = spawn(project)
    child.expect(PROMPT)
    child.send("s")
    child.expect(PROMPT)
    child.send("\x03")
    child.expect("3 to review: accepted 0, rejected 0, skipped 1, not reviewed 2")
    finish(child, 130)


def test_reject_discards_the_run_and_settles_every_item_it_judged(project: SiloProject) -> None:
    runs = changes(project)
    run = runs["TASK-003"]
    files = {p.name: p.read_bytes() for p in run.iterdir()}
    child = spawn(project)
    child.expect(r"\[1/3\] regression")
    child.expect(PROMPT)
    child.send("r")
    child.expect(f"rejected run {run.name} \\(TASK-003\\): moved to .silo/runs/{DISCARD_DIR}/")
    child.expect(r"\[3/3\] drift")  # TASK-003's state diff went with its run: 2 of 3 done
    child.expect(PROMPT)
    child.send("s")
    child.expect("3 to review: accepted 0, rejected 2, skipped 1")
    child.expect(f"put them back with: silo-regress restore {run.name}")
    finish(child)
    kept = project.runs_dir / DISCARD_DIR / run.name
    assert not run.exists()
    assert {p.name: p.read_bytes() for p in kept.iterdir()} == files  # never deleted
    assert project.cli("check", "TASK-003").exit_code == 0  # the recorded run is judged again


def test_accept_all_accepts_this_and_every_remaining_item(project: SiloProject) -> None:
    changes(project)
    child = spawn(project)
    child.expect(PROMPT)
    child.send("A")
    child.expect("accepted baselines/TASK-003.result.json")
    child.expect("accepted baselines/TASK-003.state-diff.json")
    child.expect("accepted baselines/TASK-004.result.json")
    child.expect("3 to review: accepted 3, rejected 0, skipped 0\r\n")
    finish(child)
    assert project.cli("check").exit_code == 0


def test_undo_restores_the_exact_previous_bytes_and_brings_the_item_back(
    project: SiloProject,
) -> None:
    changes(project)
    before = project.baseline_bytes()
    child = spawn(project)
    child.expect(r"\[1/3\] regression")
    child.expect(PROMPT)
    child.send("a")
    child.expect("accepted baselines/TASK-003.result.json")
    child.expect(r"\[2/3\]")
    child.expect(PROMPT)
    assert text(project, "TASK-003.result.json") != before["TASK-003.result.json"]
    child.send("u")
    child.expect("undid the accept of TASK-003 result.json: restored baselines/TASK-003.result")
    child.expect(PROMPT)
    assert project.baseline_bytes() == before
    child.send("s")  # the state diff
    # The undone item is back, right after, counted as the second done of three: the
    # counter never runs past the total (it said [3/4], then [3/5]).
    child.expect(r"\[2/3\] regression")
    child.expect("CHANGED  TASK-003.*result.json")
    child.expect(PROMPT)
    child.send("a")
    child.expect("accepted baselines/TASK-003.result.json")
    child.expect(r"\[3/3\] drift")
    child.expect(PROMPT)
    child.send("u")
    child.expect("undid the accept of TASK-003 result.json")
    child.expect(PROMPT)
    child.send("s")
    child.expect(r"\[3/3\] regression")  # undone again: back as the last open item
    child.expect(PROMPT)
    child.send("u")
    child.expect("nothing to undo")
    child.expect(PROMPT)
    child.send("q")
    child.expect("3 to review: accepted 0, rejected 0, skipped 2, not reviewed 1, undone 2")
    finish(child)
    assert project.baseline_bytes() == before


def test_undo_of_a_new_task_removes_what_it_created_and_it_shows_what_it_records(
    project: SiloProject,
) -> None:
    changes(project)
    project.add_run("TASK-009", result=make_result(passed=False, reward=0.5))
    before = project.baseline_bytes()
    child = spawn(project, "TASK-009")
    child.expect(r"\[1/2\] missing-baseline")
    child.expect("accepting records the whole task:")
    child.expect("new baselines/TASK-009.result.json")
    child.expect("FAILS")  # the behaviour it would record, not only the command
    child.expect(PROMPT)
    child.send("a")
    child.expect("accepted baselines/TASK-009.state-diff.json")
    child.expect("2 to review: accepted 2")  # both artifacts: one accept records the task
    finish(child)
    assert "TASK-009.result.json" in project.baseline_bytes()
    child = spawn(project)
    child.expect(PROMPT)
    child.send("a")
    child.expect(PROMPT)
    child.send("q")
    finish(child)
    assert project.baseline_bytes() != before


def test_accept_then_undo_of_a_new_task_in_one_review(project: SiloProject) -> None:
    project.add_run("TASK-009")
    child = spawn(project, "TASK-009")
    child.expect(PROMPT)
    child.send("A")
    child.expect("2 to review: accepted 2")
    finish(child)
    project.add_run("TASK-010")
    before = project.baseline_bytes()
    child = spawn(project, "TASK-010")
    child.expect(PROMPT)
    child.send("a")
    child.expect("accepted baselines/TASK-010.result.json")
    child.expect("accepted baselines/TASK-010.state-diff.json")
    child.expect("2 to review: accepted 2")
    finish(child)
    assert set(project.baseline_bytes()) - set(before) == {
        "TASK-010.result.json",
        "TASK-010.state-diff.json",
    }


def test_undo_of_a_new_baseline_removes_it(project: SiloProject) -> None:
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    project.add_run("TASK-010")
    project.add_run("TASK-011")
    before = project.baseline_bytes()
    child = spawn(project, "TASK-010", "TASK-011")
    child.expect(r"\[1/4\] missing-baseline")
    child.expect(PROMPT)
    child.send("a")
    child.expect(r"\[3/4\] missing-baseline")  # TASK-010's other artifact went with it
    child.expect(PROMPT)
    assert "TASK-010.result.json" in project.baseline_bytes()
    child.send("u")
    child.expect("restored baselines/TASK-010.result.json, baselines/TASK-010.state-diff.json")
    child.expect(PROMPT)
    assert project.baseline_bytes() == before  # created files removed again
    child.send("q")
    child.expect("4 to review: accepted 0, rejected 0, skipped 0, not reviewed 4, undone 1")
    finish(child)


def test_a_bad_pointer_is_asked_again_and_the_item_is_not_lost(project: SiloProject) -> None:
    changes(project)
    child = spawn(project, "TASK-003")
    child.expect(r"\[1/2\] regression")
    child.expect(PROMPT)
    child.send("p")
    child.expect("/toolCalls: 3 -> 8")
    child.expect(r"empty: none\) > ")
    child.sendline("/nope")
    child.expect("'/nope': not a changed path, nor inside or around one; nothing accepted yet")
    child.expect(r"empty: none\) > ")
    child.sendline("99")
    child.expect("'99': not a number from the list")
    child.expect(r"empty: none\) > ")
    child.sendline("/toolCalls")
    child.expect(r"accepted baselines/TASK-003.result.json \(paths /toolCalls\)")
    child.expect(r"\[2/2\]")
    child.expect(PROMPT)
    child.send("q")
    child.expect("2 to review: accepted 1, rejected 0, skipped 0, not reviewed 1")
    finish(child)
    assert json.loads(text(project, "TASK-003.result.json"))["toolCalls"] == 8


def test_a_partial_accept_that_mixes_scores_says_so_and_asks(project: SiloProject) -> None:
    changes(project)
    before = project.baseline_bytes()
    child = spawn(project, "TASK-003")
    child.expect(PROMPT)
    child.send("p")
    child.expect(r"empty: none\) > ")
    child.sendline("/passed")
    child.expect("these paths leave result.json inconsistent: /passed false from the run, ")
    child.expect("but /reward 1, /checksPassed 2, .* from the baseline; no run produced that")
    child.expect(r"write it anyway\? \[y/N\] > ")
    child.send("n")
    child.expect("not accepted")
    child.expect(PROMPT)
    assert project.baseline_bytes() == before  # nothing written before the answer
    child.send("p")
    child.expect(r"empty: none\) > ")
    child.sendline("/passed")
    child.expect(r"\[y/N\] > ")
    child.send("y")
    child.expect(r"accepted baselines/TASK-003.result.json \(paths /passed\)")
    child.expect(PROMPT)
    child.send("q")
    finish(child)
    assert json.loads(text(project, "TASK-003.result.json"))["passed"] is False


def test_a_partial_accept_names_the_fields_it_would_leave_disagreeing(
    project: SiloProject,
) -> None:
    project.add_run("TASK-001", started="2026-03-16T09:00:00.000Z")
    assert project.cli("record", "TASK-001").exit_code == 0
    failing = [
        {"label": "Lead qualified", "passed": False, "detail": "", "required": True},
        {"label": "Note logged", "passed": True, "detail": "AUD-0001", "required": False},
    ]
    project.add_run(
        "TASK-001",
        started="2026-03-16T10:00:00.000Z",
        result=make_result(passed=False, reward=0.5, checks=failing),
    )
    before = project.baseline_bytes()
    child = spawn(project, "TASK-001")
    child.expect(PROMPT)
    child.send("p")
    child.expect(r"empty: none\) > ")
    child.sendline("/passed")
    child.expect("these paths leave result.json inconsistent")
    child.expect(r"passed false but failedRequired \[\]: passed means no required check failed")
    child.expect(r"write it anyway\? \[y/N\] > ")
    child.send("n")
    child.expect(PROMPT)
    child.send("p")
    child.expect(r"empty: none\) > ")
    child.sendline("/failedRequired")
    child.expect(r'passed true but failedRequired \["Lead qualified"\]')
    child.expect(r'failedRequired \["Lead qualified"\] but checks \[\]')
    child.expect(r"requiredPassed 1 but failedRequired")
    child.expect(r"\[y/N\] > ")
    child.send("n")
    child.expect(PROMPT)
    child.send("q")
    finish(child)
    assert project.baseline_bytes() == before


def test_consistent_paths_are_written_without_a_question(project: SiloProject) -> None:
    changes(project)
    child = spawn(project, "TASK-003")
    child.expect(PROMPT)
    child.send("p")
    child.expect(r"empty: none\) > ")
    pointers = "/passed /reward /checksPassed /checksFailed /checks/1/passed"
    child.sendline(pointers)
    child.expect(r"accepted baselines/TASK-003.result.json \(paths /passed")
    child.expect(PROMPT)
    child.send("q")
    finish(child)
    assert "inconsistent" not in child.before


def test_full_diff_then_an_unknown_key_keeps_the_item(project: SiloProject) -> None:
    changes(project)
    child = spawn(project, "TASK-004")
    child.expect(PROMPT)
    child.send("d")
    child.expect("Done, and more")
    child.expect(PROMPT)
    child.send("x")
    child.expect("unknown key 'x'")
    child.expect(PROMPT)
    child.send("a")
    child.expect("1 to review: accepted 1, rejected 0, skipped 0")
    finish(child)


# --- scripted, without a terminal ---------------------------------------------------


def test_accept_all_without_a_terminal(project: SiloProject) -> None:
    changes(project)
    result = project.cli("review", "--accept-all")
    assert result.exit_code == 0, result.output
    assert "3 to review: accepted 3, rejected 0, skipped 0" in result.stdout
    assert project.cli("check").exit_code == 0


def test_reject_tasks_without_a_terminal(project: SiloProject) -> None:
    runs = changes(project)
    before = project.baseline_bytes()
    result = project.cli("review", "--reject", "TASK-003")
    assert result.exit_code == 0, result.output
    assert "2 to review: accepted 0, rejected 2, skipped 0" in result.stdout
    assert (project.runs_dir / DISCARD_DIR / runs["TASK-003"].name).is_dir()
    assert project.baseline_bytes() == before
    assert project.cli("check", "TASK-003").exit_code == 0


def test_scripted_misuse_is_a_usage_error(project: SiloProject) -> None:
    changes(project)
    assert project.cli("review", "--reject").exit_code == 2
    both = project.cli("review", "--accept-all", "--reject", "TASK-003")
    assert both.exit_code == 2
    assert "give one" in both.stderr


def test_a_stale_run_can_be_rejected_but_not_accepted(project: SiloProject) -> None:
    (project.root / "agent.ts").write_text("v1\n", encoding="utf-8")
    with (project.root / "pyproject.toml").open("a", encoding="utf-8") as config:
        config.write('agent = "agent.ts"\n')
    os.utime(project.root / "agent.ts", (1, 1))
    old = project.add_run("TASK-003", started="2026-03-16T09:00:00.000Z")
    assert project.cli("record", "TASK-003").exit_code == 0
    experiment = project.add_run(
        "TASK-003", started=time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - 60))
    )
    (project.root / "agent.ts").write_text("v2\n", encoding="utf-8")  # newer than the run
    assert "stale-run" in project.cli("check").stdout
    child = spawn(project)
    child.expect("stale-run")
    # The keys offered are the ones that work: no [a]ccept, [p]aths or accept [A]ll.
    child.expect(r"\n\[r\]eject run  \[s\]kip  \[u\]ndo  full \[d\]iff  \[q\]uit > ")
    child.send("a")
    child.expect("a stale-run result cannot be accepted: \\[r\\]eject its run")
    child.expect(PROMPT)
    child.send("r")
    child.expect(f"rejected run {experiment.name}")
    finish(child)
    assert (project.runs_dir / DISCARD_DIR / experiment.name).is_dir()
    assert f"judged {old.name}" in project.cli("check").stderr


# --- two reviews at once -----------------------------------------------------------------


def test_an_accept_waits_for_another_writer_and_then_writes(project: SiloProject) -> None:
    changes(project)
    before = project.baseline_bytes()
    child = spawn(project, "TASK-004")
    child.expect(PROMPT)
    with writer_lock(project.baselines, command="review (another one)"):
        child.send("a")
        time.sleep(1.0)
        # Waiting for the lock, it wrote nothing.
        assert text(project, "TASK-004.result.json") == before["TASK-004.result.json"]
    child.expect("accepted baselines/TASK-004.result.json")
    finish(child)


def test_two_reviews_accept_side_by_side_and_undo_refuses_a_file_changed_since(
    project: SiloProject,
) -> None:
    changes(project)
    first = spawn(project, "TASK-004")
    second = spawn(project, "TASK-004")
    first.expect(PROMPT)
    second.expect(PROMPT)
    first.send("a")
    first.expect("accepted baselines/TASK-004.result.json")
    accepted = text(project, "TASK-004.result.json")
    (project.baselines / "TASK-004.result.json").write_bytes(accepted + b" ")  # someone else
    first.expect(pexpect.EOF)
    second.send("u")
    second.expect("nothing to undo")
    second.expect(PROMPT)
    second.send("a")  # its own accept of the same run: whole, under the lock
    second.expect("accepted baselines/TASK-004.result.json")
    finish(second)
    assert text(project, "TASK-004.result.json") == accepted


def test_undo_refuses_when_another_writer_changed_the_file(project: SiloProject) -> None:
    changes(project)
    child = spawn(project)
    child.expect(PROMPT)
    child.send("a")
    child.expect(r"\[2/3\]")
    child.expect(PROMPT)
    path = project.baselines / "TASK-003.result.json"
    theirs = path.read_bytes().replace(b'"toolCalls": 8', b'"toolCalls": 9')
    path.write_bytes(theirs)
    child.send("u")
    child.expect("changed since it was accepted .*nothing was changed")
    child.expect(PROMPT)
    child.send("q")
    child.expect("accepted 1")
    finish(child)
    assert path.read_bytes() == theirs


def test_review_colours_changed_words_unless_no_color(project: SiloProject) -> None:
    changes(project)
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    for no_color, expect_escapes in ((None, True), ("1", False)):
        extra = {"NO_COLOR": no_color} if no_color else {}
        child = pexpect.spawn(
            sys.executable,
            ["-m", "silo_regress", "--project", str(project.root), "review", "TASK-003"],
            env={**env, "TERM": "xterm", **extra},
            encoding="utf-8",
            timeout=30,
            dimensions=(50, 200),
        )
        child.expect(PROMPT)
        shown = child.before
        child.send("q")
        finish(child)
        assert ("\x1b[7m" in shown) is expect_escapes  # the changed words, reverse video
        assert ("\x1b[" in shown) is expect_escapes
        assert '"passed": ' in shown


def test_accept_all_counts_a_refused_accept_as_failed_and_goes_on(project: SiloProject) -> None:
    changes(project)
    volatile = make_result(agent_output="see run_20260316100000_zz9 for details")
    project.add_run("TASK-004", started="2026-03-16T11:00:00.000Z", result=volatile)
    result = project.cli("review", "--accept-all")
    assert result.exit_code == 0, result.output
    assert "refusing to record volatile content" in result.stdout
    assert "3 to review: accepted 2, rejected 0, skipped 0, failed 1" in result.stdout
    assert "run_20260316100000_zz9" not in (project.baselines / "TASK-004.result.json").read_text()
