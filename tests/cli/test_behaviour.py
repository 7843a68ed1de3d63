"""Behaviour profiles give typed notes; every format words them without raw markers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from support.silofixture import SiloProject, make_project, make_result, make_state_diff, silo_json

from silo_regress import behaviour
from silo_regress.behaviour.codec import NoteError, note_from_json, note_json
from silo_regress.behaviour.notes import (
    BaselineRemoved,
    CallChanged,
    CallDropped,
    CallErrorChanged,
    CallInserted,
    CallsCounted,
    ChangesNothing,
    CheckAdded,
    CheckFieldChanged,
    CheckFlipped,
    CheckRemoved,
    ChecksReordered,
    CollectionChanged,
    CountChanged,
    FailedRequired,
    FieldChanged,
    FormatOnly,
    IdsChanged,
    MoreChanges,
    Note,
    OutputChanged,
    PassedChanged,
    Recorded,
    RewardMoved,
    ScalarChanged,
    ScalarsReordered,
    Segment,
    SegmentKind,
    ToolCountChanged,
    ToolPathRecorded,
    Transition,
    ValueChanged,
    ValuesChanged,
    Worded,
)
from silo_regress.canon.jsondiff import MISSING
from silo_regress.render.wording import phrase, word, word_sides

HEAD = "Qualified LEAD-014 (Müller Logistik) and logged the call; next step is a "
OLD_OUTPUT = HEAD + "demo on Friday."
NEW_OUTPUT = HEAD + "pricing call on Monday."


def test_a_failing_result_gives_typed_notes() -> None:
    before = make_result()
    after = make_result(passed=False, reward=0.5, tool_calls=5, agent_output=NEW_OUTPUT)
    before["agentOutput"] = OLD_OUTPUT
    notes = behaviour.compare("result.json", before, after)
    assert notes[:3] == (
        PassedChanged(True, False),
        RewardMoved(1, 0.5),
        CheckFlipped("Lead qualified", True, False),
    )
    assert CountChanged("toolCalls", 3, 5) in notes
    (output,) = [n for n in notes if isinstance(n, OutputChanged)]
    assert output.path == "/agentOutput"
    assert output.words is not None
    removed = [s.text for s in output.words if s.kind is SegmentKind.REMOVED]
    added = [s.text for s in output.words if s.kind is SegmentKind.ADDED]
    assert (removed, added) == (["demo", "Friday"], ["pricing call", "Monday"])


def test_a_state_diff_gives_ids_gained_and_lost() -> None:
    before = make_state_diff(added=["AUD-0001"])
    after = make_state_diff(added=["AUD-0002", "AUD-0003"])
    after["scalars"] = []
    assert behaviour.compare("state-diff.json", before, after) == (
        IdsChanged("auditLog", "added", ("AUD-0002", "AUD-0003"), ("AUD-0001",)),
        ScalarChanged("pipeline.stage", Transition("lead", "qualified"), None),
    )


def test_an_artifact_without_a_profile_gets_the_generic_one() -> None:
    assert behaviour.compare("metrics.json", {"a": 1, "b": [1]}, {"a": 2, "b": []}) == (
        ValueChanged("/a", 1, 2),
        ValueChanged("/b/0", 1, MISSING),
    )
    # A result.json that is not an object is not what the result profile knows.
    assert behaviour.compare("result.json", [1], [2]) == (ValueChanged("/0", 1, 2),)


def test_a_project_baselining_another_artifact_sees_its_changes(tmp_path: Path) -> None:
    project = make_project(tmp_path, config='artifacts = ["result.json", "metrics.json"]\n')
    project.add_run("TASK-001", files={"metrics.json": silo_json({"latency": {"p50": 120}})})
    assert project.cli("record", "TASK-001").exit_code == 0
    project.add_run("TASK-001", files={"metrics.json": silo_json({"latency": {"p50": 180}})})
    result = project.cli("check", "--format", "json")
    assert result.exit_code == 1
    (changed,) = [r for r in json.loads(result.stdout)["results"] if r["status"] == "changed"]
    assert changed["artifact"] == "metrics.json"
    assert changed["behaviour"] == ["/latency/p50: 120 -> 180"]
    assert changed["notes"] == [
        {"kind": "value-changed", "path": "/latency/p50", "baseline": 120, "run": 180}
    ]


# One of every note kind, with absent sides and nested values where a kind allows them.
EVERY_NOTE: list[Note] = [
    PassedChanged(True, False),
    PassedChanged(MISSING, None),
    RewardMoved(1, 0.33),
    CheckFlipped("Lead qualified", True, False),
    CheckFieldChanged("Lead qualified", "detail", MISSING, "stage: lead"),
    CheckAdded("New check", MISSING),
    CheckRemoved("Old check"),
    ChecksReordered(),
    FieldChanged("error", None, "timeout"),
    CountChanged("toolCalls", 3, 9),
    OutputChanged("/agentOutput", OLD_OUTPUT, NEW_OUTPUT, words=(Segment(SegmentKind.ADDED, "x"),)),
    OutputChanged("/agentOutput/items/0", {"id": 1}, MISSING, limit=200),
    MoreChanges("agentOutput", 4),
    IdsChanged("auditLog", "added", ("AUD-1", 7), ()),
    CollectionChanged("contacts", None, {"added": []}, "broken"),
    ScalarChanged("pipeline.stage", Transition("lead", MISSING), None),
    ScalarChanged("pipeline.stage", None, Transition(MISSING, "won")),
    ScalarsReordered(),
    CallsCounted(3, 5),
    ToolCountChanged("search_contacts", 1, 3),
    CallChanged(3, "update_deal", "input", "/amount", 140000, 14000),
    CallChanged(1, "list_deals", "input", "", MISSING, {"stage": "won"}),
    CallErrorChanged(4, "update_deal", True, "invalid_input"),
    CallErrorChanged(2, "get", False),
    CallInserted(5, "delete_deal", "tool_not_found"),
    CallDropped(2, "list_deals"),
    ToolPathRecorded(4, 1, as_of=True),
    ValueChanged("", [1], MISSING),
    Recorded(),
    Recorded(passes=False, reward=0, as_of=True),
    FailedRequired(("Lead qualified",)),
    ChangesNothing(as_of=True),
    ValuesChanged(),
    BaselineRemoved(),
    FormatOnly(),
    Worded("checks reordered"),
]


def test_every_note_kind_is_covered_here() -> None:
    import typing

    assert {type(n) for n in EVERY_NOTE} == set(typing.get_args(Note))


@pytest.mark.parametrize("note", EVERY_NOTE, ids=lambda n: type(n).__name__)
def test_notes_survive_the_json_report(note: Note) -> None:
    data = json.loads(json.dumps(note_json(note)))
    assert note_from_json(data) == note
    assert word(note_from_json(data)) == word(note)


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"kind": "nonsense"}, "not a behaviour note"),
        ([], "must be an object"),
        ({"kind": "check-removed"}, "'label' is missing"),
        ({"kind": "check-removed", "label": 3}, "'label' must be str"),
        ({"kind": "more-changes", "scope": "x", "count": True}, "'count' must be int"),
        ({"kind": "ids-changed", "collection": "c", "change": "a", "gained": 1}, "list"),
        ({"kind": "output-changed", "path": "/a", "words": [{"kind": "?"}]}, "segment"),
    ],
)
def test_a_broken_note_is_refused_with_a_reason(item: Any, message: str) -> None:
    with pytest.raises(NoteError, match=message):
        note_from_json(item)


def test_a_clipped_word_diff_keeps_its_markers_whole() -> None:
    words = tuple(
        Segment(kind, text * 30)
        for kind, text in [(SegmentKind.SAME, "a"), (SegmentKind.REMOVED, "b")]
    )
    note = OutputChanged("/agentOutput", "x", "y", words=words, limit=40)
    text = word(note).removeprefix("agentOutput changed: ")
    assert len(text) == 40
    assert text == "a" * 30 + "[-" + "b" * 5 + "-]…"
    unmarked = phrase(note, marked=False)
    assert "".join(s.text for s in unmarked[1:]) == "a" * 30 + "b" * 9 + "…"


def test_word_sides_shows_both_versions_without_markers() -> None:
    before, after = make_result(), make_result(agent_output=NEW_OUTPUT)
    before["agentOutput"] = OLD_OUTPUT
    (note,) = [n for n in behaviour.compare("result.json", before, after)]
    sides = word_sides(note)
    assert sides == (
        "agentOutput changed: Qualified LEAD-014…l; next step is a demo on Friday. -> "
        "Qualified LEAD-014…l; next step is a pricing call on Monday."
    )
    assert "[-" not in sides and "{+" not in sides


# --- every format ----------------------------------------------------------------


@pytest.fixture
def worded_project(tmp_path: Path) -> SiloProject:
    project = make_project(tmp_path)
    project.add_run("TASK-001", result=make_result(agent_output=OLD_OUTPUT))
    assert project.cli("record", "--all").exit_code == 0
    project.add_run("TASK-001", result=make_result(agent_output=NEW_OUTPUT))
    return project


def _report(project: SiloProject, report_format: str) -> str:
    result = project.cli("check", "--format", report_format)
    assert result.exit_code == 1, result.output
    return str(result.stdout)


def test_markdown_marks_the_word_diff_with_del_and_ins(worded_project: SiloProject) -> None:
    text = _report(worded_project, "markdown")
    assert "<del>demo</del><ins>pricing call</ins>" in text
    assert "[-" not in text and "{+" not in text


def test_html_marks_the_word_diff_with_del_and_ins(worded_project: SiloProject) -> None:
    text = _report(worded_project, "html")
    assert '<del class="removed">demo</del><ins class="added">pricing call</ins>' in text
    assert "[-" not in text and "{+" not in text


def test_junit_gives_both_sides_of_the_word_diff(worded_project: SiloProject) -> None:
    root = ET.fromstring(_report(worded_project, "junit"))
    (failure,) = root.iter("failure")
    for text in (failure.get("message") or "", failure.text or ""):
        assert "demo on Friday. -> " in text and "pricing call on Monday." in text
        assert "[-" not in text and "{+" not in text


def test_github_annotations_have_no_markers(worded_project: SiloProject) -> None:
    annotations = [line for line in _report(worded_project, "github").splitlines()]
    (error,) = [line for line in annotations if line.startswith("::error ")]
    assert "pricing call on Monday." in error and "{+" not in error


def test_text_colours_the_words_it_marks(worded_project: SiloProject) -> None:
    result = worded_project.cli("check", color="always")
    assert "\x1b[31m[-demo-]\x1b[0m\x1b[32m{+pricing call+}\x1b[0m" in result.stdout
    plain = worded_project.cli("check").stdout
    assert "[-demo-]{+pricing call+}" in plain


def test_merge_words_the_notes_of_a_json_report(worded_project: SiloProject) -> None:
    report = worded_project.root / "report.json"
    assert worded_project.cli("check", "--format", "json", "--output", str(report)).exit_code == 1
    merged = worded_project.cli("merge", str(report), "--format", "markdown")
    assert merged.exit_code == 1
    assert "<del>demo</del><ins>pricing call</ins>" in merged.stdout


def test_merge_reads_a_report_without_notes(worded_project: SiloProject) -> None:
    report = worded_project.root / "report.json"
    assert worded_project.cli("check", "--format", "json", "--output", str(report)).exit_code == 1
    document = json.loads(report.read_text(encoding="utf-8"))
    for result in document["results"]:
        del result["notes"]
    report.write_text(json.dumps(document), encoding="utf-8")
    merged = worded_project.cli("merge", str(report))
    assert merged.exit_code == 1
    assert "[-demo-]{+pricing call+}" in merged.stdout


def _modules_loaded(project: SiloProject, *args: str) -> set[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "PYTHONPATH")}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "silo_regress", "--color", "never", *args],
        cwd=project.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def test_only_a_changed_artifact_loads_the_profiles(worded_project: SiloProject) -> None:
    """Note classes cost ~10 ms to create: the hook's matching check must not pay it."""
    assert "silo_regress.behaviour.notes" in _modules_loaded(worded_project, "check")
    assert worded_project.cli("record", "--all").exit_code == 0
    loaded = _modules_loaded(worded_project, "check")
    assert "silo_regress.judging.judge" in loaded  # the probe sees the check at all
    assert not {m for m in loaded if m.startswith("silo_regress.behaviour")}


def test_merge_refuses_a_note_it_cannot_read(worded_project: SiloProject) -> None:
    report = worded_project.root / "report.json"
    assert worded_project.cli("check", "--format", "json", "--output", str(report)).exit_code == 1
    document = json.loads(report.read_text(encoding="utf-8"))
    changed = next(n for n, r in enumerate(document["results"]) if r["notes"])
    document["results"][changed]["notes"][0] = {"kind": "tool-call-teleported"}
    report.write_text(json.dumps(document), encoding="utf-8")
    merged = worded_project.cli("merge", str(report))
    assert merged.exit_code == 3
    assert merged.stderr == (
        f"silo-regress: error: {report}: results[{changed}].notes[0]: kind "
        "'tool-call-teleported' is not a behaviour note this version knows\n"
    )
