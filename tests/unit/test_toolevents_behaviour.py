"""The tool-events profile: typed notes in tool terms, calls aligned by (tool, input)."""

from __future__ import annotations

from typing import Any

from silo_regress import behaviour
from silo_regress.behaviour.notes import (
    CallChanged,
    CallDropped,
    CallErrorChanged,
    CallInserted,
    CallsCounted,
    MoreChanges,
    ToolCountChanged,
    ToolPathRecorded,
    ValueChanged,
)
from silo_regress.behaviour.toolevents import align, calls_of
from silo_regress.canon.jsondiff import MISSING
from silo_regress.render.wording import dotted, words

ARTIFACT = "tool-events.json"


def old_path(*calls: tuple[str, Any, Any, bool]) -> list[dict[str, Any]]:
    """Events of an older trace: seq pairs, no callId; ``None`` input is left out."""
    events: list[dict[str, Any]] = []
    for i, (tool, given, output, error) in enumerate(calls):
        call: dict[str, Any] = {"seq": 2 * i + 1, "tool": tool, "type": "tool_call"}
        if given is not None:
            call["input"] = given
        events.append(call)
        events.append(
            {
                "isError": error,
                "output": output,
                "seq": 2 * i + 2,
                "tool": tool,
                "type": "tool_result",
            }
        )
    return events


def new_path(*calls: tuple[str, Any, Any, bool]) -> list[dict[str, Any]]:
    """Events of a newer trace: run_start first (kept when configured), callId pairs."""
    events: list[dict[str, Any]] = []
    for i, event in enumerate(old_path(*calls)):
        events.append({**event, "callId": i // 2 + 1})
    return events


OK = {"ok": True}


def test_the_issue_example_in_words() -> None:
    before = old_path(
        ("search_contacts", {"q": "Zoë"}, {"ids": ["CON-1"]}, False),
        ("update_deal", {"id": "DEAL-7", "amount": 140000}, OK, False),
        ("delete_deal", {"id": "DEAL-9"}, OK, False),
    )
    after = old_path(
        ("search_contacts", {"q": "Zoë"}, {"ids": ["CON-1"]}, False),
        ("search_contacts", {"q": "Zoe"}, {"ids": []}, False),
        ("search_contacts", {"q": "Fernández"}, {"ids": ["CON-1"]}, False),
        ("update_deal", {"id": "DEAL-7", "amount": 14000}, OK, False),
    )
    notes = behaviour.compare(ARTIFACT, before, after)
    assert notes == (
        CallsCounted(3, 4),
        ToolCountChanged("search_contacts", 1, 3),
        ToolCountChanged("delete_deal", 1, 0),
        CallChanged(4, "update_deal", "input", "/amount", 140000, 14000),
        CallDropped(3, "delete_deal"),
        CallInserted(2, "search_contacts"),
        CallInserted(3, "search_contacts"),
    )
    assert words(notes) == [
        "tool calls 3 -> 4 (+1)",
        "+2 search_contacts (1 -> 3 calls)",
        "-1 delete_deal (1 -> 0 calls)",
        "call 4 update_deal: input.amount 140000 -> 14000",
        "baseline call 3 delete_deal dropped",
        "call 2 search_contacts inserted",
        "call 3 search_contacts inserted",
    ]


def test_one_inserted_call_is_one_note_not_every_later_call_changed() -> None:
    calls = [(f"tool_{i}", {"n": i}, {"i": i}, False) for i in range(6)]
    before = old_path(*calls)
    after = old_path(("ping", None, OK, False), *calls)
    notes = behaviour.compare(ARTIFACT, before, after)
    assert notes == (CallsCounted(6, 7), ToolCountChanged("ping", 0, 1), CallInserted(1, "ping"))


def test_repeated_identical_calls_align_without_junk_heuristics() -> None:
    # 300 identical calls: difflib's autojunk would treat them as noise.
    find: tuple[Any, ...] = (
        "find_duplicate_contacts",
        {"account": "ACC-007"},
        {"pairs": []},
        False,
    )
    before = old_path(*([find] * 300))
    after = old_path(*([find] * 150), ("merge_contacts", {"a": 1}, OK, False), *([find] * 150))
    notes = behaviour.compare(ARTIFACT, before, after)
    assert CallInserted(151, "merge_contacts") in notes
    assert not any(isinstance(n, CallDropped) for n in notes)


def test_errors_that_appear_and_disappear_with_their_codes() -> None:
    bad = {"code": "invalid_input", "message": "x", "details": {"problems": ["amount"]}}
    missing = {"code": "tool_not_found", "message": "Unknown tool: delete_dael"}
    before = new_path(
        ("update_deal", {"amount": 14000}, OK, False),
        ("delete_dael", {"id": "D"}, missing, True),
    )
    after = new_path(
        ("update_deal", {"amount": 14000}, bad, True),
        ("delete_dael", {"id": "D"}, OK, False),
    )
    notes = behaviour.compare(ARTIFACT, before, after)
    assert CallErrorChanged(1, "update_deal", True, "invalid_input") in notes
    assert CallErrorChanged(2, "delete_dael", False, "tool_not_found") in notes
    text = words(notes)
    assert "call 1 update_deal now errors (invalid_input)" in text
    assert "call 2 delete_dael no longer errors (was tool_not_found)" in text
    # The first diverging call is worded on its output side, path by path.
    assert text[:2] == [
        'call 1 update_deal: output.code (absent) -> "invalid_input"',
        'call 1 update_deal: output.details (absent) -> {"problems": ["amount"]}',
    ]


def test_an_output_change_names_the_output_side() -> None:
    before = old_path(("get_invoice", {"id": "I"}, {"lines": [{"total": 1}]}, False))
    after = old_path(("get_invoice", {"id": "I"}, {"lines": [{"total": 2}]}, False))
    notes = behaviour.compare(ARTIFACT, before, after)
    assert notes == (CallChanged(1, "get_invoice", "output", "/lines/0/total", 1, 2),)
    assert words(notes) == ["call 1 get_invoice: output.lines[0].total 1 -> 2"]


def test_an_input_that_appears_is_named() -> None:
    before = old_path(("list_deals", None, OK, False))
    after = old_path(("list_deals", {"stage": "won"}, OK, False))
    (note,) = behaviour.compare(ARTIFACT, before, after)
    assert note == CallChanged(1, "list_deals", "input", "", MISSING, {"stage": "won"})


def test_many_changed_values_of_the_first_call_are_counted() -> None:
    before = old_path(("t", {f"k{i}": i for i in range(8)}, OK, False))
    after = old_path(("t", {f"k{i}": i + 1 for i in range(8)}, OK, False))
    notes = behaviour.compare(ARTIFACT, before, after)
    assert len(notes) == 6 and notes[-1] == MoreChanges("call 1 t", 3)


def test_results_pair_by_call_id_even_out_of_order() -> None:
    path = [
        {"callId": 1, "tool": "a", "type": "tool_call", "input": {}},
        {"callId": 2, "tool": "b", "type": "tool_call", "input": {}},
        {"callId": 2, "tool": "b", "type": "tool_result", "output": 2, "isError": False},
        {"callId": 1, "tool": "a", "type": "tool_result", "output": 1, "isError": True},
    ]
    calls = calls_of(path)
    assert calls is not None
    assert [(c.tool, c.output, c.error) for c in calls] == [("a", 1, True), ("b", 2, False)]


def test_a_value_that_is_no_tool_path_falls_back_to_the_generic_profile() -> None:
    assert behaviour.compare(ARTIFACT, {"a": 1}, {"a": 2}) == (ValueChanged("/a", 1, 2),)


def test_configured_events_alone_changing_fall_back_to_generic_notes() -> None:
    before = [{"type": "agent_output", "output": "a"}]
    after = [{"type": "agent_output", "output": "b"}]
    assert behaviour.compare(ARTIFACT, before, after) == (ValueChanged("/0/output", "a", "b"),)


def test_a_new_baseline_is_described_by_its_calls() -> None:
    path = old_path(("a", {}, OK, False), ("b", {}, {"code": "tool_not_found"}, True))
    (note,) = behaviour.describe(ARTIFACT, path)
    assert note == ToolPathRecorded(2, 1)
    assert words([note]) == ["recorded: 2 tool calls, 1 error"]
    assert words(behaviour.describe(ARTIFACT, [])) == ["recorded: 0 tool calls"]


def test_alignment_of_long_paths_is_bounded() -> None:
    # 5,000 calls each, all different in the middle: positional pairing, not a
    # quadratic LCS; still every call is accounted for.
    before = calls_of(old_path(*[("t", {"i": i}, OK, False) for i in range(5000)]))
    after = calls_of(old_path(*[("t", {"i": -i - 1}, OK, False) for i in range(5000)]))
    assert before is not None and after is not None
    pairs, dropped, inserted = align(before, after)
    assert len(pairs) == 5000 and not dropped and not inserted


def test_dotted_paths() -> None:
    assert dotted("") == ""
    assert dotted("/amount") == ".amount"
    assert dotted("/items/0/a~1b") == ".items[0].a/b"
