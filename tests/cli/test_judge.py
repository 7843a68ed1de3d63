"""Runs against baselines: every verdict, the behaviour notes, and structural changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.silofixture import SiloProject, make_project, make_result, make_state_diff, silo_json
from support.treestate import snapshot

from silo_regress import behaviour
from silo_regress.behaviour.result import text_change
from silo_regress.behaviour.state import gained_lost
from silo_regress.canon.canonical import JsonValue
from silo_regress.canon.jsondiff import MISSING, Change, diff_values
from silo_regress.judging.outcome import Verdict
from silo_regress.render.wording import word, words


def summarize(artifact: str, before: Any, after: Any) -> tuple[str, ...]:
    """The behaviour notes of two values, worded as the text report words them."""
    return tuple(words(behaviour.compare(artifact, before, after)))


def describe_text_change(before: JsonValue, after: JsonValue) -> str:
    """How the text report words a change of the whole agentOutput, without the lead-in."""
    return word(text_change("/agentOutput", before, after)).removeprefix("agentOutput changed: ")


def _recorded(project: SiloProject, task: str = "TASK-002", **run: Any) -> None:
    project.add_run(task, started="2026-03-16T09:00:00.000Z", **run)
    result = project.cli("record", task)
    assert result.exit_code == 0, result.output


def _statuses(project: SiloProject, *args: str) -> tuple[int, list[dict[str, Any]]]:
    result = project.cli("check", "--format", "json", *args)
    return result.exit_code, json.loads(result.stdout)["results"]


def _verdicts(project: SiloProject, *args: str) -> dict[tuple[str, str], str]:
    _, results = _statuses(project, *args)
    return {(r["task"], r["artifact"]): r["status"] for r in results}


# --- verdicts -----------------------------------------------------------------


def test_match(project: SiloProject) -> None:
    _recorded(project)
    code, results = _statuses(project)
    assert code == 0
    assert [(r["status"], r["baseline"], r["run"]) for r in results] == [
        (
            "match",
            "baselines/TASK-002.result.json",
            f".silo/runs/{results[0]['runId']}/result.json",
        ),
        (
            "match",
            "baselines/TASK-002.state-diff.json",
            f".silo/runs/{results[0]['runId']}/state-diff.json",
        ),
    ]


def test_a_run_written_differently_but_equal_in_value_matches(project: SiloProject) -> None:
    _recorded(project)
    value = make_result()
    odd = json.dumps(value, indent=4, ensure_ascii=True).replace("1,", "1.0,").encode()
    assert b'"reward": 1.0,' in odd
    project.add_run("TASK-002", started="2026-03-16T10:00:00.000Z", files={"result.json": odd})
    assert _verdicts(project) == {
        ("TASK-002", "result.json"): "match",
        ("TASK-002", "state-diff.json"): "match",
    }


def test_changed(project: SiloProject) -> None:
    _recorded(project)
    project.add_run("TASK-002", started="2026-03-16T10:00:00.000Z", result=make_result(reward=0.5))
    code, results = _statuses(project)
    assert code == 1
    assert [r["status"] for r in results] == ["changed", "match"]
    assert results[0]["changes"] == [{"path": "/reward", "baseline": 1, "run": 0.5}]
    assert results[0]["behaviour"] == ["reward 1 -> 0.5"]


def test_missing_baseline_only_for_tasks_named(project: SiloProject) -> None:
    _recorded(project)
    project.add_run("TASK-003")
    assert _verdicts(project) == {
        ("TASK-002", "result.json"): "match",
        ("TASK-002", "state-diff.json"): "match",
    }
    code, results = _statuses(project, "TASK-003")
    assert code == 1
    assert [(r["status"], r["baseline"]) for r in results] == [
        ("missing-baseline", None),
        ("missing-baseline", None),
    ]
    assert results[0]["detail"] == "no baseline"  # the next steps name the command, once


def test_unknown_task_is_an_error_not_a_verdict(project: SiloProject) -> None:
    _recorded(project)
    result = project.cli("check", "TASK-404")
    assert result.exit_code == 3
    assert result.stderr == (
        "silo-regress: error: task TASK-404: no baseline under baselines/ (working tree) "
        "and no run under .silo/runs/\n"
    )


def test_missing_run(project: SiloProject) -> None:
    _recorded(project)
    for run in project.runs_dir.iterdir():
        (run / "run.json").unlink()
    code, results = _statuses(project)
    assert code == 1
    assert [(r["status"], r["run"]) for r in results] == [
        ("missing-run", None),
        ("missing-run", None),
    ]


def test_incomplete_run_never_falls_back_to_an_older_run(project: SiloProject) -> None:
    _recorded(project)
    project.add_run(
        "TASK-002", started="2026-03-16T10:00:00.000Z", files={"result.json": b'{"passed": t'}
    )
    code, results = _statuses(project)
    assert code == 1
    assert [r["status"] for r in results] == ["incomplete-run", "incomplete-run"]
    assert all(r["runId"] == results[0]["runId"] for r in results)
    assert "ends early" in results[1]["detail"]


def test_not_canonical_hand_edited_baseline(project: SiloProject) -> None:
    _recorded(project)
    path = project.baselines / "TASK-002.result.json"
    value = json.loads(path.read_bytes())
    path.write_bytes((json.dumps(value, indent=4, sort_keys=True) + "\n").encode())
    code, results = _statuses(project)
    assert code == 1
    assert results[0]["status"] == "not-canonical"
    assert results[0]["detail"] == (
        "baselines/TASK-002.result.json is not in canonical form; "
        "run `silo-regress fmt` to rewrite it"
    )
    assert results[1]["status"] == "match"


@pytest.mark.parametrize(
    ("content", "detail"),
    [
        (b'{\n  "passed": true,\n', "ends early"),
        (
            b'{\n<<<<<<< HEAD\n  "reward": 1\n=======\n  "reward": 0.5\n>>>>>>> feature\n}\n',
            "has git merge-conflict markers (line 2)",
        ),
        (b'{"passed": true, "passed": false}\n', "duplicate key 'passed' at /passed"),
        (b'{"reward": Infinity}\n', "Infinity is not valid JSON"),
        (b"\xff\xfe{\x00}\x00", "not valid UTF-8"),
    ],
    ids=["truncated", "conflict", "duplicate", "infinity", "utf16"],
)
def test_not_canonical_unparsable_baseline(
    project: SiloProject, content: bytes, detail: str
) -> None:
    _recorded(project)
    (project.baselines / "TASK-002.result.json").write_bytes(content)
    code, results = _statuses(project)
    assert code == 1
    assert results[0]["status"] == "not-canonical"
    assert results[0]["detail"].startswith("baselines/TASK-002.result.json: ")
    assert detail in results[0]["detail"]


@pytest.mark.parametrize(
    ("edit", "pointer"),
    [
        # The run compared started at 09:00: this is its wall-clock time.
        (lambda v: v.update(startedAt="2026-03-16T09:05:00.000Z"), "/startedAt"),
        (lambda v: v.update(agentOutput="Call booked 2026-03-16 14:30 UTC"), "/agentOutput"),
        (lambda v: v["checks"][1].update(detail="run_20260316101502_3k9"), "/checks/1/detail"),
    ],
    ids=["wall-clock", "zoneless-date-time", "run-id"],
)
def test_volatile_baseline(project: SiloProject, edit: Any, pointer: str) -> None:
    _recorded(project)
    path = project.baselines / "TASK-002.result.json"
    value = json.loads(path.read_bytes())
    edit(value)
    from silo_regress.canon.canonical import serialize

    path.write_bytes(serialize(value))  # canonical, so only the content is wrong
    code, results = _statuses(project)
    assert code == 1
    assert results[0]["status"] == "volatile"
    assert (
        f"baselines/TASK-002.result.json holds volatile content at {pointer} ("
        in (results[0]["detail"])
    )


def test_a_plain_date_is_simulated_time_not_volatile(project: SiloProject) -> None:
    _recorded(project, result=make_result(agent_output="Follow-up set for 2026-03-16."))
    assert _verdicts(project)[("TASK-002", "result.json")] == "match"


@pytest.mark.parametrize(
    ("version", "detail"),
    [
        (b"2\n", "baselines are in format '2' (baselines/.silo-regress-format)"),
        (None, "baselines/.silo-regress-format is missing (working tree)"),
    ],
    ids=["other-version", "missing"],
)
def test_format_version(project: SiloProject, version: bytes | None, detail: str) -> None:
    _recorded(project)
    fmt_file = project.baselines / ".silo-regress-format"
    if version is None:
        fmt_file.unlink()
    else:
        fmt_file.write_bytes(version)
    code, results = _statuses(project)
    assert code == 1
    assert [r["status"] for r in results] == ["format-version", "format-version"]
    assert detail in results[0]["detail"]
    assert results[0]["changes"] == []


def test_ignored_paths_compare_as_a_placeholder(tmp_path: Path) -> None:
    project = make_project(
        tmp_path / "p", config='ignore = ["result.json:/agentOutput/requestId"]\n'
    )
    _recorded(project, result=make_result(agent_output={"requestId": "req-1", "text": "ok"}))
    baseline = json.loads((project.baselines / "TASK-002.result.json").read_bytes())
    assert baseline["agentOutput"]["requestId"] == "<ignored by silo-regress>"
    project.add_run(
        "TASK-002",
        started="2026-03-16T10:00:00.000Z",
        result=make_result(agent_output={"requestId": "req-2", "text": "ok"}),
    )
    assert set(_verdicts(project).values()) == {"match"}
    project.add_run(
        "TASK-002",
        started="2026-03-16T11:00:00.000Z",
        result=make_result(agent_output={"requestId": "req-3", "text": "changed"}),
    )
    _, results = _statuses(project)
    assert results[0]["changes"] == [
        {"path": "/agentOutput/text", "baseline": "ok", "run": "changed"}
    ]


def test_check_never_writes(project: SiloProject) -> None:
    _recorded(project)
    _recorded(project, "TASK-003")
    project.add_run("TASK-002", started="2026-03-16T10:00:00.000Z", result=make_result(reward=0))
    project.add_run("TASK-003", started="2026-03-16T10:00:00.000Z", files={"result.json": None})
    project.add_run("TASK-004")
    (project.baselines / "TASK-005.result.json").write_bytes(b'{\n    "a": 1\n}')
    out = project.root / "report.json"
    before = snapshot(project.root)
    for args in (
        ("check",),
        ("check", "TASK-004"),
        ("check", "--format", "json"),
        ("diff", "TASK-002"),
        ("status",),
        ("fmt", "--check"),
    ):
        result = project.cli(*args)
        assert result.exit_code in (0, 1), (args, result.output)
        assert snapshot(project.root) == before, args
    assert not out.exists()


# --- structural changes -------------------------------------------------------


def test_diff_values_gives_json_pointers_in_document_order() -> None:
    before = {"b": [1, 2, 3], "a~/b": {"x": 1}, "same": {"k": [1]}}
    after = {"b": [1, 5], "a~/b": {"y": 1}, "same": {"k": [1]}, "new": None}
    assert diff_values(before, after) == [
        Change("/a~0~1b/x", baseline=1),
        Change("/a~0~1b/y", run=1),
        Change("/b/1", baseline=2, run=5),
        Change("/b/2", baseline=3),
        Change("/new", run=None),
    ]
    assert Change("/x", run=1).baseline is MISSING


@pytest.mark.parametrize(
    ("a", "b", "differ"),
    [
        (1, 1.0, False),  # one JSON number
        (0.0, -0.0, False),
        (1, True, True),
        (0, False, True),
        (None, False, True),
        ("1", 1, True),
        ([], {}, True),
        (2**70, 2**70 + 1, True),
        (2**70, float(2**70), True),  # an exact integer literal is not a double
    ],
)
def test_diff_values_compares_json_values_not_python_values(a: Any, b: Any, differ: bool) -> None:
    assert bool(diff_values({"v": a}, {"v": b})) is differ


def test_json_changes_are_exact_enough_for_a_script(project: SiloProject) -> None:
    output = {"a/b": 1, "m~n": [2**70, "x"], "gone": True, "big": 12345678901234567890123}
    _recorded(project, result=make_result(agent_output=output))
    new = {"a/b": 2, "m~n": [2**70 + 1], "big": 12345678901234567890124, "came": {"k": []}}
    project.add_run(
        "TASK-002", started="2026-03-16T10:00:00.000Z", result=make_result(agent_output=new)
    )
    result = project.cli("check", "--format", "json")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["version"] == 1
    assert document["summary"] == {"changed": 1, "match": 1}
    changes = document["results"][0]["changes"]
    assert changes == [
        {"path": "/agentOutput/a~1b", "baseline": 1, "run": 2},
        {
            "path": "/agentOutput/big",
            "baseline": 12345678901234567890123,
            "run": 12345678901234567890124,
        },
        {"path": "/agentOutput/came", "run": {"k": []}},
        {"path": "/agentOutput/gone", "baseline": True},
        {"path": "/agentOutput/m~0n/0", "baseline": 2**70, "run": 2**70 + 1},
        {"path": "/agentOutput/m~0n/1", "baseline": "x"},
    ]
    # A script can apply every change to the baseline and get the run.
    baseline = json.loads((project.baselines / "TASK-002.result.json").read_bytes())
    for change in sorted(changes, key=lambda c: c["path"], reverse=True):
        *parents, last = [
            p.replace("~1", "/").replace("~0", "~") for p in change["path"][1:].split("/")
        ]
        target: Any = baseline
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        key: Any = int(last) if isinstance(target, list) else last
        if "run" in change:
            target[key] = change["run"]
        else:
            del target[key]
    assert baseline == make_result(agent_output=new)


# --- behaviour in agent terms -------------------------------------------------

CHECKS = [
    {"label": "Lead qualified", "passed": True, "detail": "", "required": True},
    {"label": "Note logged", "passed": True, "detail": "AUD-0001", "required": False},
    {"label": "No duplicate", "passed": False, "detail": "CON-2", "required": False},
]


def _flip(label: str) -> list[dict[str, Any]]:
    return [{**c, "passed": not c["passed"]} if c["label"] == label else c for c in CHECKS]


def test_summary_of_a_failing_run() -> None:
    before = make_result(checks=CHECKS)
    after = make_result(
        passed=False,
        reward=0.33,
        checks=_flip("Lead qualified"),
        tool_calls=12,
        tool_errors=2,
        termination="max_tool_calls",
        error="tool budget exhausted",
    )
    assert summarize("result.json", before, after) == (
        "now FAILS (passed: true -> false)",
        "reward 1 -> 0.33",
        'check "Lead qualified" passed -> failed',
        'terminationReason "completed" -> "max_tool_calls"',
        'error null -> "tool budget exhausted"',
        "toolCalls 3 -> 12 (+9)",
        "toolErrors 0 -> 2 (+2)",
        "requiredPassed 1 -> 0 (-1)",
        "checksPassed 2 -> 1 (-1)",
        "checksFailed 1 -> 2 (+1)",
    )
    assert summarize("result.json", after, before)[:3] == (
        "now passes (passed: false -> true)",
        "reward 0.33 -> 1",
        'check "Lead qualified" failed -> passed',
    )


def test_checks_are_matched_by_label_not_position() -> None:
    before = make_result(checks=CHECKS)
    reordered = make_result(checks=list(reversed(CHECKS)))
    assert summarize("result.json", before, reordered) == ("checks reordered",)
    moved_and_flipped = make_result(checks=list(reversed(_flip("Note logged"))))
    notes = summarize("result.json", before, moved_and_flipped)
    assert 'check "Note logged" passed -> failed' in notes
    assert not any("Lead qualified" in n or "No duplicate" in n for n in notes)
    renamed = [{**CHECKS[0], "label": "Lead qualified (stage)"}, *CHECKS[1:]]
    assert summarize("result.json", before, make_result(checks=renamed)) == (
        'check "Lead qualified" removed',
        'check "Lead qualified (stage)" added (passed)',
    )


def test_long_agent_output_gets_a_word_diff() -> None:
    head = "Qualified LEAD-014 (Müller Logistik) and logged the call; next step is a "
    old = head + "demo on Friday."
    new = head + "pricing call on Monday."
    note = describe_text_change(old, new)
    assert "[-demo-]{+pricing call+}" in note
    assert "[-Friday-]{+Monday+}" in note
    assert "Müller" in note or "…" in note
    assert describe_text_change("Done.", "Done!") == '"Done." -> "Done!"'
    assert describe_text_change({"id": 1}, None) == '{"id": 1} -> null'
    lines = describe_text_change("line one\nline two\n", "line one\nline 2\n")
    assert "[-two-]{+2+}" in lines and "⏎" in lines
    (summary,) = summarize(
        "result.json", make_result(agent_output=old), make_result(agent_output=new)
    )
    assert summary.startswith("agentOutput changed: ")


def test_state_diff_summary_lists_ids_per_collection() -> None:
    before = make_state_diff(added=("AUD-0001", "AUD-0002"), changed=("OPP-005",))
    after = make_state_diff(added=("AUD-0001", "AUD-0003"), changed=("OPP-005", "OPP-006"))
    after["collections"]["contacts"] = {"added": [], "removed": ["CON-022"], "changed": []}
    after["scalars"] = [{"field": "pipeline.stage", "from": "lead", "to": "won"}]
    assert summarize("state-diff.json", before, after) == (
        "auditLog: no longer adds AUD-0002; now also adds AUD-0003",
        "contacts: now also removes CON-022",
        "opportunities: now also changes OPP-006",
        'scalar pipeline.stage: "lead" -> "qualified" became "lead" -> "won"',
    )
    reordered = make_state_diff(added=("AUD-0002", "AUD-0001"))
    assert summarize("state-diff.json", before, reordered) == (
        "auditLog: adds the same ids in another order",
    )
    untouched: dict[str, Any] = {"scalars": [], "collections": {}}
    assert summarize("state-diff.json", before, untouched) == (
        "auditLog: no longer adds AUD-0001 AUD-0002",
        "opportunities: no longer changes OPP-005",
        'scalar pipeline.stage no longer changes (was "lead" -> "qualified")',
    )


def test_the_text_report_puts_behaviour_before_the_diff(project: SiloProject) -> None:
    _recorded(project)
    project.add_run(
        "TASK-002",
        started="2026-03-16T10:00:00.000Z",
        result=make_result(passed=False, tool_calls=4),
        state_diff=make_state_diff(added=("AUD-0001", "AUD-0002")),
    )
    out = project.cli("check").stdout
    assert out.index("behaviour:") < out.index("diff (- baseline, + run):")
    assert "    - auditLog: now also adds AUD-0002\n" in out
    assert "    --- baselines/TASK-002.state-diff.json\n" in out
    assert "    +++ .silo/runs/" in out and "/state-diff.json (canonical)\n" in out
    assert '    +        "AUD-0002"\n' in out


def test_huge_diffs_are_capped_and_say_where_the_full_files_are(project: SiloProject) -> None:
    _recorded(project, state_diff=make_state_diff(added=[f"AUD-{i:04d}" for i in range(400)]))
    project.add_run(
        "TASK-002",
        started="2026-03-16T10:00:00.000Z",
        state_diff=make_state_diff(added=[f"AUD-{i:04d}-x" for i in range(400)]),
    )
    out = project.cli("check").stdout
    run_dir = next(
        p.name for p in project.runs_dir.iterdir() if p.name.startswith("run_2026031610")
    )
    diff_lines = [line for line in out.splitlines() if line.startswith("    ")]
    assert len(diff_lines) < 260
    assert (
        "more diff lines not shown; the full files are baselines/TASK-002.state-diff.json and "
        f".silo/runs/{run_dir}/state-diff.json (canonical)"
    ) in out
    # The summary still names every id, in full.
    # 12 ids in full (never truncated), then how many more: as the HTML page does.
    assert "now also adds AUD-0000-x" in out and "AUD-0011-x and 388 more" in out
    assert "AUD-0399-x" not in out
    assert "no longer adds AUD-0000 " in out
    assert Verdict.CHANGED.value in project.cli("check", "--format", "json").stdout


def test_result_json_with_unknown_keys_still_reports_them() -> None:
    before = {**make_result(), "costUsd": 0.01}
    after = {**make_result(), "costUsd": 0.02}
    assert summarize("result.json", before, after) == ("/costUsd: 0.01 -> 0.02",)
    assert summarize("other.json", [1], [2]) == ("/0: 1 -> 2",)


def test_silo_json_round_trip_of_fixture(project: SiloProject) -> None:
    """The fixture writes what Silo writes, so a fresh record is byte-equal in value."""
    path = project.add_run("TASK-002")
    assert json.loads((path / "result.json").read_bytes()) == make_result()
    assert silo_json({"a": 1}) == b'{\n  "a": 1\n}\n'


def test_a_large_artifact_reports_only_the_changed_region(project: SiloProject) -> None:
    # ~6 MB and 300,000 ids: the diff is cut to the changed region at the right lines,
    # the summary names the one id that moved, and nothing else is printed.
    ids = [f"AUD-{i:07d}" for i in range(300_000)]
    _recorded(project, state_diff=make_state_diff(added=ids))
    changed = [*ids]
    changed[150_000] = "AUD-X150000"
    project.add_run(
        "TASK-002", started="2026-03-16T10:00:00.000Z", state_diff=make_state_diff(added=changed)
    )
    result = project.cli("check", "--format", "json")
    (item,) = [r for r in json.loads(result.stdout)["results"] if r["status"] == "changed"]
    assert item["changes"] == [
        {
            "path": "/collections/auditLog/added/150000",
            "baseline": "AUD-0150000",
            "run": "AUD-X150000",
        }
    ]
    assert item["behaviour"] == ["auditLog: no longer adds AUD-0150000; now also adds AUD-X150000"]
    text = project.cli("check").stdout
    baseline = (project.baselines / "TASK-002.state-diff.json").read_text().splitlines()
    line = baseline.index('        "AUD-0150000",') + 1
    assert f"    @@ -{line - 3},7 +{line - 3},7 @@\n" in text
    assert '    -        "AUD-0150000",\n' in text and '    +        "AUD-X150000",\n' in text
    assert len(text.splitlines()) < 40


@given(
    st.lists(st.sampled_from(["A", "B", "C", "D", "E"]), max_size=12),
    st.lists(st.sampled_from(["A", "B", "C", "D", "E", "F"]), max_size=12),
)
def test_gained_and_lost_ids_match_the_obvious_definition(
    before: list[str], after: list[str]
) -> None:
    gained, lost = gained_lost(before, after)
    assert gained == list(dict.fromkeys(i for i in after if i not in before))
    assert lost == list(dict.fromkeys(i for i in before if i not in after))


def test_gained_and_lost_tell_true_from_1() -> None:
    assert gained_lost([1, "a"], [True, "a"]) == ([True], [1])
