"""The stats gate through the real CLI and the stand-in Silo (tests/fake_silo.py):
record --repeat writes the tally, check --run --repeat judges pass counts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.runnerkit import behave, control, silo_project
from support.silofixture import SiloProject
from test_check_repeat import restart_count

__all__ = ["control"]  # the fixture, used by name

STATS = '\n[tool.silo-regress.tasks.TASK-001]\ngate = "stats"\n'


def passes(control: Path, ok: int, fail: int) -> None:
    """The stand-in's rollouts of TASK-001: ``ok`` passing ones, then ``fail`` failing."""
    modes = ["ok"] * ok + ["fail"] * fail
    behave(control, **{"TASK-001": {"mode": "vary", "modes": modes}})
    restart_count(control)


def recorded(tmp_path: Path, control: Path, *, extra: str = STATS) -> SiloProject:
    project = silo_project(tmp_path, extra)
    passes(control, 9, 1)
    done = project.cli("record", "--repeat", "10", "--jobs", "1", "TASK-001")
    assert done.exit_code == 0, done.output
    return project


def tally(project: SiloProject) -> dict[str, Any]:
    return json.loads((project.baselines / "TASK-001.tally.json").read_bytes())  # type: ignore[no-any-return]


def check(project: SiloProject, *args: str) -> Any:
    return project.cli("--color", "never", "check", "--run", "--jobs", "1", *args, "TASK-001")


def test_record_repeat_writes_a_canonical_tally_beside_the_baselines(
    tmp_path: Path, control: Path
) -> None:
    project = recorded(tmp_path, control)
    value = tally(project)
    assert (value["rollouts"], value["passed"], value["format"]) == (10, 9, 1)
    assert value["checks"] == {"Lead qualified": 9, "Note logged": 10, "Polite reply": 10}
    assert value["reward"]["sum"] == 9.33  # a failing rollout scores 0.33
    # result.json differs between a passing and a failing rollout: 9 match the recorded one
    assert value["variants"]["state-diff.json"] == [10]
    assert sum(value["variants"]["result.json"]) <= 10
    data = (project.baselines / "TASK-001.tally.json").read_bytes()
    assert data == (json.dumps(value, indent=2, sort_keys=True) + "\n").encode()
    assert (project.baselines / "TASK-001.result.json").is_file()


def test_the_same_pass_rate_passes_though_the_bytes_differ(tmp_path: Path, control: Path) -> None:
    project = recorded(tmp_path, control)
    passes(control, 8, 2)
    done = check(project, "--repeat", "10")
    assert done.exit_code == 0, done.output
    assert "stats gate" in done.stdout
    assert "changed" not in done.stdout  # the byte differences of a stats task are not failures


def test_a_drop_in_pass_rate_is_a_regression_and_a_suite_regression(
    tmp_path: Path, control: Path
) -> None:
    project = recorded(tmp_path, control)
    passes(control, 1, 9)
    done = check(project, "--repeat", "10")
    assert done.exit_code == 1, done.output
    assert "suite-regression" in done.stdout
    assert "regression  TASK-001  9/10" in done.stdout
    assert "1/10" in done.stdout


def test_the_json_report_carries_tier_counts_p_values_and_pass_hat_k(
    tmp_path: Path, control: Path
) -> None:
    project = recorded(tmp_path, control)
    passes(control, 1, 9)
    done = check(project, "--repeat", "10", "--format", "json")
    assert done.exit_code == 1
    stats = json.loads(done.stdout)["stats"]
    (task,) = stats["tasks"]
    assert task["tier"] == "regression" and task["failed"]
    assert task["baseline"]["passed"] == 9 and task["candidate"]["passed"] == 1
    assert task["rollouts_used"] == 10
    assert 0 < task["p_decline"] < 0.01
    low, high = task["candidate"]["interval"]
    assert low < 0.1 < high < 0.5
    assert stats["suite"]["verdict"] == "suite-regression"
    assert [p["k"] for p in stats["suite"]["pass_hat_k"]["candidate"]] == list(range(1, 11))
    assert stats["suite"]["pass_hat_k"]["baseline"][0]["value"] == 0.9


def test_suite_gate_warn_keeps_the_task_regression_only(tmp_path: Path, control: Path) -> None:
    project = recorded(tmp_path, control, extra='suite-gate = "warn"\n' + STATS)
    passes(control, 1, 9)
    done = check(project, "--repeat", "10", "--format", "json")
    stats = json.loads(done.stdout)["stats"]
    assert stats["suite"]["verdict"] == "suite-regression" and not stats["suite"]["failed"]
    assert stats["tasks"][0]["tier"] == "regression"  # the task's own test still fails it
    assert done.exit_code == 1


def test_a_missing_tally_fails_and_says_how_to_record_it(tmp_path: Path, control: Path) -> None:
    project = recorded(tmp_path, control)
    (project.baselines / "TASK-001.tally.json").unlink()
    passes(control, 9, 1)
    done = check(project, "--repeat", "4")
    assert done.exit_code == 1, done.output
    assert "unreliable-baseline" in done.stdout
    assert "silo-regress record --repeat N TASK-001" in done.stdout


def test_a_hand_edited_tally_is_a_named_error(tmp_path: Path, control: Path) -> None:
    project = recorded(tmp_path, control)
    path = project.baselines / "TASK-001.tally.json"
    path.write_text(path.read_text().replace('"passed": 9', '"passed": 12'))
    done = check(project, "--repeat", "2")
    assert done.exit_code == 3
    assert "baselines/TASK-001.tally.json: /passed is 12, more than the 10 rollouts" in done.output
    assert "Traceback" not in done.output


def test_repeat_1_under_the_stats_gate_is_a_usage_error(tmp_path: Path, control: Path) -> None:
    project = recorded(tmp_path, control)
    done = check(project, "--repeat", "1")
    assert done.exit_code == 2
    assert "--repeat 2 or more" in done.output


def test_an_exact_task_that_varies_is_refused_with_the_config_line_that_gates_it(
    tmp_path: Path, control: Path
) -> None:
    project = silo_project(tmp_path)
    passes(control, 2, 1)
    done = project.cli("--color", "never", "record", "--repeat", "3", "--jobs", "1", "TASK-001")
    assert done.exit_code == 1
    # the task's own table, named with its environment, as every printed config line is
    assert '[tool.silo-regress.tasks."crm-west/TASK-001"]' in done.stdout
    assert 'gate = "stats"' in done.stdout
    assert not (project.baselines / "TASK-001.tally.json").exists()


def test_record_repeat_variants_writes_the_tally_too(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path)
    passes(control, 2, 1)
    args = ("record", "--repeat", "3", "--variants", "--jobs", "1", "TASK-001")
    done = project.cli(*args)
    assert done.exit_code == 0, done.output
    value = tally(project)
    assert (value["rollouts"], value["passed"]) == (3, 2)
    assert value["variants"]["result.json"] == [2, 1]
    assert "TASK-001.tally.json: tally of 3 rollouts, 2/3 passed: 66.7%" in done.stdout


def test_every_format_names_the_regression_and_the_suite(tmp_path: Path, control: Path) -> None:
    project = recorded(tmp_path, control)
    reports = {}
    for name in ("markdown", "github", "junit", "html"):
        passes(control, 1, 9)
        output = tmp_path / f"report.{name}"
        done = check(project, "--repeat", "10", "--format", name, "--output", str(output))
        assert done.exit_code == 1, done.output
        reports[name] = output.read_text(encoding="utf-8")
    markdown = reports["markdown"]
    assert "### Stats gate" in markdown and "suite-regression" in markdown
    assert "| TASK-001 | regression | 9/10" in markdown
    assert "| candidate | 0.100 |" in markdown
    github = reports["github"]
    assert "::error title=silo-regress%3A suite-regression::" in github
    assert "::error file=baselines/TASK-001.tally.json,title=silo-regress%3A TASK-001" in github
    import xml.etree.ElementTree as ET

    root = ET.fromstring(reports["junit"])
    failures = [c for c in root.iter("testcase") if c.find("failure") is not None]
    assert {c.get("classname") for c in failures} >= {"TASK-001", "suite"}
    assert root.get("failures") == str(len(failures))
    page = reports["html"]
    assert '<section id="stats"' in page and '<svg class="passk"' in page
    assert "9/10 (90.0%, 95% 59.6%–98.2%)" in page


def test_check_help_states_the_whole_checks_false_alarm_guarantee() -> None:
    from typer.testing import CliRunner

    from silo_regress.cli import app

    shown = " ".join(CliRunner().invoke(app, ["check", "--help"]).stdout.split())
    assert "the whole check (suite and tasks together) fails falsely at most 5%" in shown


def test_repeat_until_decided_stops_a_clear_regression_early(tmp_path: Path, control: Path) -> None:
    project = recorded(tmp_path, control)
    passes(control, 0, 40)
    args = ("--repeat", "4", "--repeat-until-decided", "--max-repeat", "40", "--format", "json")
    done = check(project, *args)
    assert done.exit_code == 1, done.output
    (task,) = json.loads(done.stdout)["stats"]["tasks"]
    assert task["tier"] == "regression"
    assert json.loads(done.stdout)["stats"]["suite"]["verdict"] == "suite-regression"
    assert 4 <= task["rollouts_used"] < 40
    assert task["rollouts_used"] % 4 == 0  # whole rounds
    assert "suite declined by the" in done.stderr and "; stopping" in done.stderr


def test_repeat_until_decided_runs_no_more_rollouts_for_a_stable_task_than_the_cap(
    tmp_path: Path, control: Path
) -> None:
    project = recorded(tmp_path, control)
    passes(control, 9, 1)
    before = len([p for p in project.runs_dir.iterdir() if p.is_dir()])
    done = check(project, "--repeat", "4", "--repeat-until-decided", "--max-repeat", "12")
    # Run directories only: the runs directory also holds the kept candidate tallies.
    made = len([p for p in project.runs_dir.iterdir() if p.is_dir()]) - before
    assert made <= 12 and made % 4 == 0
    # The group-sequential check always decides by its last look (the cap): one line a look.
    assert done.exit_code == 0, done.output
    assert "look 1 (4 rollouts a task)" in done.stderr
    assert done.stderr.count("silo-regress: look ") == made // 4


def test_repeat_until_decided_refuses_k_below_m_and_a_missing_cap(
    tmp_path: Path, control: Path
) -> None:
    project = recorded(tmp_path, control)
    below = check(project, "--repeat", "8", "--repeat-until-decided", "--max-repeat", "4")
    assert below.exit_code == 2 and "give K at least M" in below.output
    no_cap = check(project, "--repeat-until-decided")
    assert no_cap.exit_code == 2 and "needs --run and --max-repeat K" in no_cap.output


def test_require_power_fails_a_task_too_few_rollouts_could_decide(
    tmp_path: Path, control: Path
) -> None:
    project = recorded(tmp_path, control)
    path = project.baselines / "TASK-001.tally.json"  # 5 of 10: 0 of 2 would be p = 0.32
    path.write_text(path.read_text().replace('"passed": 9', '"passed": 5'), encoding="utf-8")
    passes(control, 2, 0)
    warned = check(project, "--repeat", "2")
    # No test could judge the only stats task: never "passed" (issue 31), even without
    # --require-power, which makes any task that could not be decided fail on its own.
    assert warned.exit_code == 1, warned.output
    assert "insufficient-data  TASK-001" in warned.stdout
    assert "stats gate not decided" in warned.stdout and "passed" not in warned.stdout
    assert "rollouts could (--repeat" in warned.stdout
    passes(control, 2, 0)
    failed = check(project, "--repeat", "2", "--require-power")
    assert failed.exit_code == 1
    assert "--require-power asks for rollouts that could decide" in failed.stdout


def test_gate_both_keeps_the_byte_exact_rule_beside_the_pass_counts(
    tmp_path: Path, control: Path
) -> None:
    both = '\n[tool.silo-regress.tasks.TASK-001]\ngate = "both"\n'
    project = recorded(tmp_path, control, extra=both)  # the newest recorded rollout failed
    passes(control, 4, 0)
    done = check(project, "--repeat", "4", "--format", "json")
    document = json.loads(done.stdout)
    assert document["stats"]["tasks"][0]["tier"] == "stable"
    statuses = {r["artifact"]: r["status"] for r in document["results"]}
    assert statuses["result.json"] == "changed"  # passing rollouts differ from the bytes
    assert done.exit_code == 1


def test_gate_both_with_exact_artifacts_keeps_only_those_byte_exact(
    tmp_path: Path, control: Path
) -> None:
    both = '\n[tool.silo-regress.tasks.TASK-001]\ngate = "both"\n'
    both += 'exact-artifacts = ["state-diff.json"]\n'
    project = recorded(tmp_path, control, extra=both)
    passes(control, 4, 0)
    done = check(project, "--repeat", "4", "--format", "json")
    document = json.loads(done.stdout)
    assert {r["artifact"] for r in document["results"]} == {"state-diff.json"}
    assert all(r["status"] == "match" for r in document["results"])
    assert document["stats"]["tasks"][0]["tier"] == "stable"
    assert done.exit_code == 0, done.output


def test_record_of_a_stats_task_whose_rollouts_differ_says_the_gate_takes_it(
    tmp_path: Path, control: Path
) -> None:
    project = silo_project(tmp_path, STATS)
    passes(control, 2, 1)
    done = project.cli("--color", "never", "record", "--repeat", "3", "--jobs", "1", "TASK-001")
    assert done.exit_code == 0, done.output
    # one line: its tally, rate and interval, not a dump of the values that differ
    assert "crm-west/TASK-001: stats gate, 2/3 passed: 66.7% [20.8%, 93.9%]\n" in done.stdout
    assert "FLAKY" not in done.stdout and "ignore = [" not in done.stdout


def test_suite_gate_option_overrides_the_config_key(tmp_path: Path, control: Path) -> None:
    project = recorded(tmp_path, control, extra='suite-gate = "warn"\n' + STATS)
    passes(control, 1, 9)
    done = check(project, "--repeat", "10", "--format", "json", "--suite-gate", "fail")
    suite = json.loads(done.stdout)["stats"]["suite"]
    assert (suite["verdict"], suite["gate"], suite["failed"]) == ("suite-regression", "fail", True)
    assert done.exit_code == 1


def test_suite_gate_option_warns_or_turns_the_suite_test_off(tmp_path: Path, control: Path) -> None:
    project = recorded(tmp_path, control)  # config: suite-gate defaults to fail
    passes(control, 1, 9)
    warned = check(project, "--repeat", "10", "--format", "json", "--suite-gate", "warn")
    suite = json.loads(warned.stdout)["stats"]["suite"]
    assert (suite["verdict"], suite["gate"], suite["failed"]) == ("suite-regression", "warn", False)
    passes(control, 1, 9)
    off = check(project, "--repeat", "10", "--suite-gate", "off")
    assert "suite-gate is off" in off.stdout
    assert "suite-regression" not in off.stdout
    assert "regression  TASK-001" in off.stdout  # the task is still Holm at alpha on its own
    assert off.exit_code == 1


def test_suite_gate_option_refuses_an_unknown_value(tmp_path: Path, control: Path) -> None:
    project = recorded(tmp_path, control)
    done = check(project, "--repeat", "10", "--suite-gate", "loud")
    assert done.exit_code == 2
    assert "--suite-gate" in done.output and "Traceback" not in done.output
    helped = project.cli("check", "--help")
    assert "--suite-gate" in helped.stdout


def test_ctrl_c_between_rounds_keeps_the_rollouts_and_writes_no_tally(
    tmp_path: Path, control: Path
) -> None:
    import signal
    import subprocess
    import time

    from support.runnerkit import SILO_REGRESS, fake_pids, new_runs, survivors

    project = recorded(tmp_path, control)
    baselines = project.baseline_bytes()
    runs_before = {r["dir"].name for r in new_runs(project)}
    # Round one (4 rollouts, 3 pass) leaves the sequential test undecided against 9/10;
    # the first rollout of round two hangs, and Ctrl-C comes while it does.
    behave(control, **{"TASK-001": {"mode": "vary", "modes": ["ok"] * 3 + ["fail"] + ["hang"] * 4}})
    restart_count(control)
    pids_before = len(fake_pids(control))
    args = ["--project", str(project.root), "check", "--run", "--jobs", "1", "--repeat", "4"]
    proc = subprocess.Popen(
        [str(SILO_REGRESS), *args, "--repeat-until-decided", "--max-repeat", "40", "TASK-001"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # A test run from a background job inherits an ignored SIGINT; a terminal's is default.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        # Four finished rollouts, then the hanging Silo and its child.
        while len(fake_pids(control)) < pids_before + 6 and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        assert len(fake_pids(control)) >= pids_before + 6, "round two started and hangs"
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert b": undecided, suite p = " in stderr and b"1 task runs 4 more" in stderr
    assert b"silo-regress: error: interrupted" in stderr
    assert b"Traceback" not in stderr
    assert survivors(fake_pids(control)) == []
    made = [r for r in new_runs(project) if r["dir"].name not in runs_before]
    finished = [r for r in made if (r["dir"] / "result.json").is_file()]
    assert len(finished) == 4  # round one's rollouts are kept on disk, whole
    assert all(r.get("terminationReason") == "completed" for r in finished)
    # Every file under baselines/, dot-files too: no tally written or torn, no temp file left.
    assert project.baseline_bytes() == baselines


def test_review_accept_all_rewrites_the_tally_from_the_checks_rollouts(
    tmp_path: Path, control: Path
) -> None:
    project = recorded(tmp_path, control)
    passes(control, 1, 9)
    assert check(project, "--repeat", "10").exit_code == 1
    done = project.cli("review", "--accept-all", "TASK-001")
    assert done.exit_code == 0, done.output
    assert "accepted baselines/TASK-001.tally.json from 10 rollouts: 9/10 -> 1/10 passed" in (
        done.stdout
    )
    value = tally(project)
    assert (value["rollouts"], value["passed"]) == (10, 1)
    assert value["checks"]["Lead qualified"] == 1
    data = (project.baselines / "TASK-001.tally.json").read_bytes()
    assert data == (json.dumps(value, indent=2, sort_keys=True) + "\n").encode()  # canonical
    assert project.cli("fmt", "--check").exit_code == 0
    again = project.cli("review", "--accept-all", "TASK-001")
    assert "tally.json" not in again.stdout  # accepted once, offered no more
    passes(control, 1, 9)
    judged = check(project, "--repeat", "10", "--format", "json")  # the new tally is the baseline
    (task,) = json.loads(judged.stdout)["stats"]["tasks"]
    assert task["baseline"]["passed"] == 1 and task["tier"] != "regression"


def test_review_refuses_a_tally_changed_since_the_check_or_runs_gone(
    tmp_path: Path, control: Path
) -> None:
    project = recorded(tmp_path, control)
    passes(control, 1, 9)
    assert check(project, "--repeat", "10").exit_code == 1
    path = project.baselines / "TASK-001.tally.json"
    recorded_bytes = path.read_bytes()
    path.write_bytes(recorded_bytes.replace(b'"sum": 9.33', b'"sum": 9.5'))
    changed = path.read_bytes()
    done = project.cli("review", "--accept-all", "TASK-001")
    assert "baselines/TASK-001.tally.json: changed since the check" in done.stdout
    assert "failed 1" in done.stdout
    assert path.read_bytes() == changed  # nothing written over the newer tally
    path.write_bytes(recorded_bytes)
    newest = sorted(project.runs_dir.iterdir())[-1]
    newest.rename(tmp_path / newest.name)  # one of the ten rollouts is gone
    gone = project.cli("review", "--accept-all", "TASK-001")
    assert f"run {newest.name}, one of the 10 rollouts this tally counts, is gone" in gone.stdout
    assert path.read_bytes() == recorded_bytes


def test_review_does_not_offer_a_stable_stats_result(tmp_path: Path, control: Path) -> None:
    project = recorded(tmp_path, control)
    passes(control, 9, 1)
    assert check(project, "--repeat", "10").exit_code == 0
    before = (project.baselines / "TASK-001.tally.json").read_bytes()
    done = project.cli("review", "--accept-all", "TASK-001")
    assert "tally.json" not in done.stdout
    assert (project.baselines / "TASK-001.tally.json").read_bytes() == before


def test_review_on_a_terminal_offers_the_stats_result_and_accepts_its_tally(
    tmp_path: Path, control: Path
) -> None:
    from support.reviewkit import finish, spawn

    project = recorded(tmp_path, control)
    passes(control, 1, 9)
    assert check(project, "--repeat", "10").exit_code == 1
    child = spawn(project, "TASK-001")
    # The byte results of the newest run come first (skipped here), then the stats result.
    while child.expect([r"\[tally 1/1\] TASK-001 regression", r"\[q\]uit > "]) == 1:
        child.send("s")
    child.expect(r"\[a\]ccept its tally  \[s\]kip  \[q\]uit > ")
    child.send("a")
    child.expect("accepted baselines/TASK-001.tally.json from 10 rollouts: 9/10 -> 1/10 passed")
    child.expect("stage them with: git add baselines/TASK-001.tally.json")
    finish(child)
    assert (tally(project)["rollouts"], tally(project)["passed"]) == (10, 1)
