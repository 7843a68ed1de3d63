"""``check --run --repeat N`` against the stand-in Silo (tests/fake_silo.py).

The real CLI starts real processes; ``--jobs 1`` where a test needs to know
which rollout did what (the stand-in counts its rollouts of a task in start order).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.runnerkit import (
    LONG_OUTPUTS,
    SILO_REGRESS,
    argv_of,
    behave,
    new_runs,
    silo_project,
)
from support.silofixture import SiloProject

ANSWER_A, ANSWER_B = LONG_OUTPUTS[:2]
ANSWER_NEW = ANSWER_B + " Also booked a call."


def answers(control: Path, *outputs: str) -> None:
    """The stand-in's rollouts of TASK-001 answer ``outputs`` in turn."""
    behave(control, **{"TASK-001": {"mode": "vary", "outputs": list(outputs)}})


def check_three(project: SiloProject) -> Any:
    """check --run --repeat 3 of TASK-001, one rollout at a time (rollout k is answer k)."""
    return project.cli("check", "--run", "--repeat", "3", "--jobs", "1", "TASK-001")


def restart_count(control: Path) -> None:
    """The stand-in's next rollout of each task is its first again."""
    for counter in control.parent.glob(".count-*"):
        counter.unlink()


def with_two_variants(tmp_path: Path, control: Path) -> SiloProject:
    """TASK-001 recorded with ANSWER_A and ANSWER_B as its accepted result.json variants."""
    project = silo_project(tmp_path)
    answers(control, ANSWER_A, ANSWER_B)
    recorded = project.cli("record", "--repeat", "2", "--variants", "TASK-001")
    assert recorded.exit_code == 0, recorded.output
    restart_count(control)
    return project


def variant_of(project: SiloProject, answer: str) -> int:
    for path in project.baselines.glob("TASK-001*.result.json"):
        if json.loads(path.read_bytes())["agentOutput"] == answer:
            stem = path.name.removesuffix(".result.json")
            return int(stem.partition("~")[2] or 1)
    raise AssertionError(f"no variant says {answer!r}")


def check_json(project: SiloProject, *args: str) -> tuple[int, dict[str, Any]]:
    done = project.cli("check", "--run", "--format", "json", *args)
    return done.exit_code, json.loads(done.stdout)


def test_every_repeat_matching_one_baseline_passes(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path)
    assert project.cli("run", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    before = {r["dir"].name for r in new_runs(project)}
    done = project.cli("check", "--run", "--repeat", "3", "TASK-001")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[0] == "6 match (2 artifacts of 1 task, 3 rollouts each)"
    assert lines[1] == "TASK-001 (crm-west): 3/3 match, variant 1"
    made = [r["dir"] for r in new_runs(project) if r["dir"].name not in before]
    assert len(made) == 3
    # Each rollout has its provenance record, as every rollout silo-regress starts does.
    assert all((run / "silo-regress.json").is_file() for run in made)


def test_a_varying_agent_with_both_variants_recorded_passes(tmp_path: Path, control: Path) -> None:
    project = with_two_variants(tmp_path, control)
    done = project.cli("check", "--run", "--repeat", "3", "TASK-001")
    assert done.exit_code == 0, done.output
    assert "TASK-001 (crm-west): 3/3 match, variants 1,2" in done.stdout.splitlines()

    restart_count(control)
    code, report = check_json(project, "--repeat", "3", "-j", "1", "TASK-001")
    assert code == 0
    assert report["repeat"] == {
        "count": 3,
        "tasks": [
            {
                "task": "TASK-001",
                "environment": "crm-west",
                "matched": 3,
                "rollouts": 3,
                "failing": [],
                "variants": {"result.json": [1, 2], "state-diff.json": [1]},
            }
        ],
    }
    assert report["summary"] == {"match": 6}  # per artifact and rollout
    rows = [r for r in report["results"] if r["artifact"] == "result.json"]
    # One result per distinct outcome, naming its rollouts: A in 1 and 3, B in 2.
    by_variant = {r["variant"]: r["repeats"] for r in rows}
    assert by_variant == {variant_of(project, ANSWER_A): [1, 3], variant_of(project, ANSWER_B): [2]}
    assert all(r["status"] == "match" for r in report["results"])


def test_a_new_behaviour_in_one_repeat_fails_with_its_diff_against_the_closest(
    tmp_path: Path, control: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = with_two_variants(tmp_path, control)
    monkeypatch.chdir(project.root)  # advice names paths from here: no -C needed
    answers(control, ANSWER_A, ANSWER_B, ANSWER_NEW)
    done = check_three(project)
    assert done.exit_code == 1, done.output
    out = done.stdout
    assert "TASK-001 (crm-west): 2/3 match, variants 1,2; no match: rollout 3" in out
    closest = variant_of(project, ANSWER_B)
    assert out.count("CHANGED  TASK-001 (crm-west)  result.json  (rollout 3 of 3, run ") == 1
    assert f"matches none of 2 accepted variants; the closest is variant {closest}" in out
    assert f'-  "agentOutput": {json.dumps(ANSWER_B)},' in out
    assert f'+  "agentOutput": {json.dumps(ANSWER_NEW)},' in out

    restart_count(control)
    code, report = check_json(project, "--repeat", "3", "--jobs", "1", "TASK-001")
    assert code == 1
    (tally,) = report["repeat"]["tasks"]
    assert (tally["matched"], tally["failing"]) == (2, [3])
    (failing,) = [r for r in report["results"] if r["status"] != "match"]
    assert failing["repeats"] == [3] and failing["variant"] == closest
    assert failing["changes"] == [{"path": "/agentOutput", "baseline": ANSWER_B, "run": ANSWER_NEW}]
    assert report["summary"] == {"changed": 1, "match": 5}

    # The hint adds the new behaviour as a third variant, keeping the other two.
    hint = "If the new behaviour is intended, add it as an accepted variant:\n  silo-regress "
    assert hint + "record TASK-001 --run-id run_" in out and " --add-variant\n" in out
    added = project.cli("record", "TASK-001", "--run-id", failing["runId"], "--add-variant")
    assert added.exit_code == 0, added.output
    restart_count(control)
    again = check_three(project)
    assert again.exit_code == 0, again.output
    assert "TASK-001 (crm-west): 3/3 match, variants 1,2,3" in again.stdout


def test_the_same_new_behaviour_in_several_repeats_is_shown_once(
    tmp_path: Path, control: Path
) -> None:
    project = with_two_variants(tmp_path, control)
    answers(control, ANSWER_A, ANSWER_NEW, ANSWER_NEW)
    done = check_three(project)
    assert done.exit_code == 1, done.output
    assert "TASK-001 (crm-west): 1/3 match, variant " in done.stdout
    assert "; no match: rollouts 2, 3" in done.stdout
    assert done.stdout.count("CHANGED  TASK-001") == 1
    assert "CHANGED  TASK-001 (crm-west)  result.json  (rollouts 2, 3 of 3, run " in done.stdout
    assert done.stdout.count(f'+  "agentOutput": {json.dumps(ANSWER_NEW)},') == 1  # one diff
    assert "pass rate 3/3 -> 3/3, total reward 3 -> 3 over 3 rollouts with results" in done.stdout


def test_a_crash_in_one_repeat_is_an_incomplete_run(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path)
    assert project.cli("run", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    behave(control, **{"TASK-001": {"mode": "vary", "modes": ["ok", "crash", "ok"]}})
    done = project.cli("check", "--run", "--repeat", "3", "-j", "1", "TASK-001")
    assert done.exit_code == 1, done.output
    assert "TASK-001 (crm-west): 2/3 match, variant 1; no match: rollout 2" in done.stdout
    assert "INCOMPLETE RUN  TASK-001 (crm-west)  result.json  (rollout 2 of 3, run " in done.stdout
    assert "result.json is missing: the rollout crashed" in done.stdout

    restart_count(control)
    code, report = check_json(project, "--repeat", "3", "-j", "1", "TASK-001")
    assert code == 1
    assert report["summary"] == {"incomplete-run": 2, "match": 4}
    broken = [r for r in report["results"] if r["status"] == "incomplete-run"]
    assert sorted(r["artifact"] for r in broken) == ["result.json", "state-diff.json"]
    assert all(r["repeats"] == [2] for r in broken)


@pytest.mark.parametrize("count", ["1", "3"])
def test_repeat_without_run_is_a_usage_error(tmp_path: Path, count: str) -> None:
    project = silo_project(tmp_path)
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    done = project.cli("check", "--repeat", count)
    assert done.exit_code == 2, done.output
    assert done.stderr == (
        f"silo-regress: error: --repeat {count} needs --run: it sets how many rollouts "
        "check --run starts per task, and a check without --run starts none\n"
    )
    assert done.stdout == ""


def test_repeat_1_is_a_plain_check_run(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path)
    assert project.cli("run", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    once = project.cli("check", "--run", "--repeat", "1", "TASK-001")
    plain = project.cli("check", "--run", "TASK-001")
    assert once.exit_code == plain.exit_code == 0
    assert once.stdout == plain.stdout == "2 match (2 artifacts of 1 task)\n"
    code, report = check_json(project, "--repeat", "1", "TASK-001")
    assert code == 0 and "repeat" not in report
    assert all("repeats" not in r for r in report["results"])


def test_fail_on_regression_passes_a_repeat_that_only_drifted(
    tmp_path: Path, control: Path
) -> None:
    project = silo_project(tmp_path)
    answers(control, ANSWER_A)
    assert project.cli("run", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    answers(control, ANSWER_A, ANSWER_B)
    restart_count(control)
    args = ("check", "--run", "--repeat", "2", "-j", "1", "TASK-001")
    failed = project.cli(*args)
    assert failed.exit_code == 1, failed.output
    assert "TASK-001 (crm-west): 1/2 match, variant 1; no match: rollout 2" in failed.stdout
    restart_count(control)
    passed = project.cli(*args, "--fail-on", "regression")
    assert passed.exit_code == 0, passed.output
    assert "drift" in passed.stdout


def test_every_format_shows_or_survives_the_repeats(tmp_path: Path, control: Path) -> None:
    project = with_two_variants(tmp_path, control)
    answers(control, ANSWER_A, ANSWER_NEW, ANSWER_B)
    markdown = project.cli("check", "--run", "-n", "3", "-j", "1", "--format", "markdown")
    assert markdown.exit_code == 1, markdown.output
    assert "- TASK-001 (crm-west): 2/3 match, variants 1,2; no match: rollout 2" in markdown.stdout
    assert "<b>changed</b> (rollout 2 of 3)" in markdown.stdout
    assert "(2 artifacts of 1 task, 3 rollouts each)" in markdown.stdout
    for report_format in ("junit", "github", "html"):
        restart_count(control)
        done = project.cli("check", "--run", "-n", "3", "-j", "1", "--format", report_format)
        assert done.exit_code == 1, (report_format, done.output)
        assert "Also booked a call" in done.stdout, report_format
        if report_format == "github":
            assert "\nTASK-001 (crm-west): 2/3 match, variants 1,2; no match: rollout 2\n" in (
                done.stdout
            )
            assert "CHANGED  TASK-001 (crm-west)  result.json  (rollout 2 of 3, run " in done.stdout
        if report_format == "junit":
            assert 'name="result.json (rollout 2 of 3)"' in done.stdout
            assert 'name="state-diff.json (rollouts 1, 2, 3 of 3)"' in done.stdout
        if report_format == "html":
            assert (
                "<li>TASK-001 (crm-west): 2/3 match, variants 1,2; no match: rollout 2</li>"
                in done.stdout
            )
            assert "over 3 rollouts with results" in done.stdout


def test_shard_agent_and_timeout_with_repeats(tmp_path: Path, control: Path) -> None:
    from silo_regress.judging.sharding import parse_shard, shard_of
    from silo_regress.project.taskref import TaskRef

    project = silo_project(tmp_path)
    (project.root / "agents").mkdir()
    (project.root / "agents" / "other.ts").write_text("export default {}\n", encoding="utf-8")
    tasks = [f"TASK-{n:03d}" for n in range(1, 5)]
    assert project.cli("run", *tasks).exit_code == 0
    assert project.cli("record", *tasks).exit_code == 0
    before = {r["dir"].name for r in new_runs(project)}
    shard = parse_shard("2/2")
    mine = sorted(t for t in tasks if shard_of(TaskRef(t), shard.count) == shard.index)
    assert mine and len(mine) < len(tasks)
    done = project.cli(
        "check", "--run", "--repeat", "2", "--shard", "2/2", "--agent", "agents/other.ts",
        "--timeout", "60", "--allow-stale",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert [line for line in done.stdout.splitlines() if ": 2/2 match" in line] == [
        f"{task} (crm-west): 2/2 match, variant 1" for task in mine
    ]
    made = [r for r in new_runs(project) if r["dir"].name not in before]
    assert sorted(r["taskId"] for r in made) == sorted(mine * 2)
    assert all(argv_of(r["dir"])[-2:] == ["--agent", "agents/other.ts"] for r in made)


def test_check_run_repeat_in_a_subprocess(tmp_path: Path, control: Path) -> None:
    """The installed entry point (the lean start-up path hands --repeat to typer)."""
    project = with_two_variants(tmp_path, control)
    done = subprocess.run(
        [str(SILO_REGRESS), "check", "--run", "--repeat", "2", "TASK-001"],
        cwd=project.root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "TASK-001 (crm-west): 2/2 match, variants 1,2" in done.stdout
    assert "Traceback" not in done.stderr


def test_sharded_repeat_reports_merge_with_their_tallies(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path)
    tasks = [f"TASK-{n:03d}" for n in range(1, 5)]
    assert project.cli("run", *tasks).exit_code == 0
    assert project.cli("record", *tasks).exit_code == 0
    behave(control, **{"TASK-002": {"mode": "vary", "outputs": [ANSWER_A, ANSWER_B]}})
    reports = []
    for k in (1, 2):
        report = str(tmp_path / f"shard-{k}.json")
        project.cli(
            "check",
            "--run",
            "-n",
            "2",
            "-j",
            "1",
            "--shard",
            f"{k}/2",
            "--format",
            "json",
            "-o",
            report,
        )
        reports.append(report)
    merged = project.cli("merge", *reports, "--format", "json")
    assert merged.exit_code == 1, merged.output
    document = json.loads(merged.stdout)
    tallies = {t["task"]: (t["matched"], t["rollouts"]) for t in document["repeat"]["tasks"]}
    assert tallies == {
        "TASK-001": (2, 2),
        "TASK-002": (0, 2),
        "TASK-003": (2, 2),
        "TASK-004": (2, 2),
    }
    # TASK-002's result.json: two distinct answers, neither the baseline; its state diff matched.
    assert document["summary"] == {"changed": 2, "match": 14}
    text = project.cli("merge", *reports)
    assert "TASK-002 (crm-west): 0/2 match; no match: rollouts 1, 2" in text.stdout

    plain = str(tmp_path / "plain.json")
    project.cli("check", "--shard", "1/2", "--format", "json", "-o", plain)
    mixed = project.cli("merge", reports[1], plain)
    assert mixed.exit_code == 3
    assert "reports come from different rollout counts: " in mixed.stderr
    assert "(--repeat 2)" in mixed.stderr and "plain.json (no --repeat)" in mixed.stderr


def test_a_repeat_report_with_bad_rollout_numbers_is_refused(tmp_path: Path) -> None:
    project = silo_project(tmp_path)
    report = tmp_path / "report.json"
    result = {"task": "TASK-001", "artifact": "result.json", "status": "match", "repeats": [1, 4]}
    report.write_text(
        json.dumps({"version": 1, "repeat": {"count": 3}, "results": [result]}), encoding="utf-8"
    )
    done = project.cli("merge", str(report))
    assert done.exit_code == 3
    assert done.stderr == (
        f"silo-regress: error: {report}: results[0].repeats must list rollouts 1..3 "
        "(a check --run --repeat report)\n"
    )


def test_a_shard_with_no_task_merges_with_the_repeated_ones(tmp_path: Path, control: Path) -> None:
    from silo_regress.judging.sharding import shard_of
    from silo_regress.project.taskref import TaskRef

    project = silo_project(tmp_path)
    assert project.cli("run", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    mine = shard_of(TaskRef("TASK-001"), 2)
    reports = []
    for k in (1, 2):
        report = str(tmp_path / f"shard-{k}.json")
        done = project.cli(
            "check", "--run", "-n", "2", "--shard", f"{k}/2", "--format", "json", "-o", report
        )
        assert done.exit_code == 0, (k, done.output)
        document = json.loads(Path(report).read_text(encoding="utf-8"))
        assert document["repeat"]["count"] == 2
        assert len(document["results"]) == (2 if k == mine else 0)
        reports.append(report)
    merged = project.cli("merge", *reports)
    assert merged.exit_code == 0, merged.output
    assert "TASK-001 (crm-west): 2/2 match, variant 1" in merged.stdout


def test_tallies_name_the_variants_that_tell_behaviours_apart() -> None:
    from silo_regress.judging.outcome import Outcome, Report, Verdict
    from silo_regress.judging.repeats import fold_repeats, tally_repeats
    from silo_regress.project.taskref import TaskRef
    from silo_regress.render.tallies import tally_line

    def rollout(variant: int, *, state: Verdict = Verdict.MATCH) -> Report:
        task = TaskRef("TASK-002")
        return Report(
            outcomes=(
                Outcome(task, "crm-west", "result.json", Verdict.MATCH, variant=variant),
                Outcome(task, "crm-west", "state-diff.json", state, variant=1),
            )
        )

    # result.json matched variant 2 only; the state diff, which never varies, variant 1.
    folded = fold_repeats([rollout(2), rollout(2), rollout(2, state=Verdict.CHANGED)])
    assert [(o.artifact, o.verdict, o.repeats) for o in folded.outcomes] == [
        ("result.json", Verdict.MATCH, (1, 2, 3)),
        ("state-diff.json", Verdict.MATCH, (1, 2)),
        ("state-diff.json", Verdict.CHANGED, (3,)),
    ]
    (tally,) = tally_repeats(folded)
    assert tally_line(tally) == "TASK-002 (crm-west): 2/3 match, variant 2; no match: rollout 3"
    assert folded.summary() == {"changed": 1, "match": 5}
    none = fold_repeats([rollout(1, state=Verdict.CHANGED)] * 2)
    assert tally_line(tally_repeats(none)[0]) == (
        "TASK-002 (crm-west): 0/2 match; no match: rollouts 1, 2"
    )
