"""Accepting part of a run: record --path, record --dry-run, record BASELINE-PATH."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.silofixture import SiloProject, make_result, make_state_diff

from silo_regress.errors import InputError, UsageError
from silo_regress.recording.acceptance import ABSENT, lookup, parse_path_choice, splice

CHECKS = [
    {"label": "Lead qualified", "passed": True, "detail": "", "required": True},
    {"label": "Note logged", "passed": True, "detail": "AUD-0001", "required": False},
    {"label": "No duplicate", "passed": True, "detail": "", "required": False},
]


def _recorded_then_changed(project: SiloProject) -> None:
    project.add_run(
        "TASK-002", started="2026-03-16T09:00:00.000Z", result=make_result(checks=CHECKS)
    )
    assert project.cli("record", "TASK-002").exit_code == 0
    changed = [dict(c) for c in CHECKS]
    changed[2]["passed"] = False
    project.add_run(
        "TASK-002",
        started="2026-03-16T10:00:00.000Z",
        result=make_result(checks=changed, reward=0.5, tool_calls=7),
        state_diff=make_state_diff(added=("AUD-0001", "AUD-0002")),
    )


def _baseline(project: SiloProject, artifact: str = "result.json") -> Any:
    return json.loads((project.baselines / f"TASK-002.{artifact}").read_bytes())


# --- splice: the pure part ------------------------------------------------------


def test_splice_replaces_adds_and_removes_only_the_chosen_paths() -> None:
    baseline = {"a": 1, "b": [1, 2, 3], "c": {"x": 1}, "keep": "old"}
    run = {"a": 2, "b": [1, 2], "c": {"x": 1, "y": 2}, "keep": "new"}
    out = splice(baseline, run, ["/a", "/b/2", "/c/y"], where="f")
    assert out == {"a": 2, "b": [1, 2], "c": {"x": 1, "y": 2}, "keep": "old"}
    assert baseline == {"a": 1, "b": [1, 2, 3], "c": {"x": 1}, "keep": "old"}  # not mutated


def test_splice_removes_several_items_of_a_shortened_list() -> None:
    out = splice({"l": [0, 1, 2, 3, 4]}, {"l": [0, 1, 2]}, ["/l/3", "/l/4"], where="f")
    assert out == {"l": [0, 1, 2]}


def test_splice_appends_items_of_a_longer_list_in_order() -> None:
    out = splice({"l": [0]}, {"l": [0, 1, 2]}, ["/l/2", "/l/1"], where="f")
    assert out == {"l": [0, 1, 2]}


def test_splice_refuses_an_item_past_the_end() -> None:
    with pytest.raises(InputError, match=r"/l/2 is past the end of the baseline's list"):
        splice({"l": [0]}, {"l": [0, 1, 2]}, ["/l/2"], where="f")


def test_splice_names_a_path_in_neither_side() -> None:
    with pytest.raises(InputError, match=r"f: /nope is in neither the baseline nor the run"):
        splice({"a": 1}, {"a": 2}, ["/nope"], where="f")


def test_splice_refuses_a_path_without_a_parent_in_the_baseline() -> None:
    with pytest.raises(InputError, match=r"no /c to hold /c/y; accept /c instead"):
        splice({"a": 1}, {"a": 1, "c": {"y": 2}}, ["/c/y"], where="f")


def test_pointer_escapes_and_leading_zeros() -> None:
    assert lookup({"a/b": {"~": 1}}, ("a/b", "~")) == 1
    assert lookup([5, 6], ("01",)) is ABSENT
    assert splice({"a/b": 1}, {"a/b": 2}, ["/a~1b"], where="f") == {"a/b": 2}


def test_path_choices_parse_an_artifact_prefix() -> None:
    artifacts = ("result.json", "state-diff.json")
    choice = parse_path_choice("state-diff.json:/collections", artifacts)
    assert (choice.artifact, choice.pointer) == ("state-diff.json", "/collections")
    assert parse_path_choice("/a:b", artifacts).pointer == "/a:b"
    with pytest.raises(UsageError, match="not a JSON Pointer"):
        parse_path_choice("checks/2", artifacts)
    with pytest.raises(UsageError, match=r"'trace\.jsonl' is not a recorded artifact"):
        parse_path_choice("trace.jsonl:/x", artifacts)


# --- record --path --------------------------------------------------------------


def test_record_path_takes_only_that_value_and_the_rest_still_differs(
    project: SiloProject,
) -> None:
    _recorded_then_changed(project)
    result = project.cli("record", "TASK-002", "--path", "/checks/2/passed")
    assert result.exit_code == 0, result.output
    assert 'check "No duplicate" passed -> failed' in result.stdout
    assert "reward" not in result.stdout  # not accepted, so not claimed
    baseline = _baseline(project)
    assert baseline["checks"][2]["passed"] is False
    assert baseline["reward"] == 1 and baseline["toolCalls"] == 3
    assert "AUD-0002" not in json.dumps(_baseline(project, "state-diff.json"))
    check = project.cli("check", "--format", "json")
    assert check.exit_code == 1
    paths = {c["path"] for r in json.loads(check.stdout)["results"] for c in r["changes"]}
    assert "/checks/2/passed" not in paths
    assert {"/reward", "/toolCalls"} <= paths


def test_record_path_with_an_artifact_prefix(project: SiloProject) -> None:
    _recorded_then_changed(project)
    result = project.cli("record", "TASK-002", "--path", "state-diff.json:/collections")
    assert result.exit_code == 0, result.output
    assert "AUD-0002" in json.dumps(_baseline(project, "state-diff.json"))
    assert _baseline(project)["reward"] == 1


def test_record_path_in_no_artifact_writes_nothing(project: SiloProject) -> None:
    _recorded_then_changed(project)
    before = project.baseline_bytes()
    result = project.cli("record", "TASK-002", "--path", "/checks/2/passed", "--path", "/nope")
    assert result.exit_code == 3
    assert "--path /nope: in no artifact of TASK-002" in result.stderr
    assert project.baseline_bytes() == before


def test_record_path_needs_an_existing_baseline(project: SiloProject) -> None:
    project.add_run("TASK-002")
    result = project.cli("record", "TASK-002", "--path", "/reward")
    assert result.exit_code == 3
    assert "record the whole task first: silo-regress record TASK-002" in result.stderr
    assert project.baseline_bytes() == {}


# --- record --dry-run -----------------------------------------------------------


def test_dry_run_shows_the_change_and_writes_nothing(project: SiloProject) -> None:
    _recorded_then_changed(project)
    before = project.baseline_bytes()
    result = project.cli("record", "TASK-002", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "would change baselines/TASK-002.result.json" in result.stdout
    assert "reward 1 -> 0.5" in result.stdout
    assert "auditLog: now also adds AUD-0002" in result.stdout
    assert result.stdout.rstrip().endswith("dry run: 2 files would be written; nothing was written")
    assert project.baseline_bytes() == before


def test_dry_run_on_a_new_project_writes_not_even_the_format_file(project: SiloProject) -> None:
    project.add_run("TASK-002")
    result = project.cli("record", "--all", "--dry-run")
    assert result.exit_code == 0
    assert "would add" in result.stdout
    assert project.baseline_bytes() == {}


# --- record BASELINE-PATH -------------------------------------------------------


@pytest.mark.parametrize(
    "arg",
    [
        "baselines/TASK-002.result.json",
        "TASK-002.result.json",
        "{root}/baselines/TASK-002.result.json",
    ],
)
def test_record_accepts_the_baseline_path_a_report_prints(project: SiloProject, arg: str) -> None:
    _recorded_then_changed(project)
    state_before = project.baseline_bytes()["TASK-002.state-diff.json"]
    result = project.cli("record", arg.format(root=project.root))
    assert result.exit_code == 0, result.output
    assert "changed   baselines/TASK-002.result.json" in result.stdout
    assert "state-diff" not in result.stdout
    assert _baseline(project)["reward"] == 0.5
    assert project.baseline_bytes()["TASK-002.state-diff.json"] == state_before
