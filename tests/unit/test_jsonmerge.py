"""The three-way JSON merge: its algebra, identities, conflicts and the markers it writes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from silo_regress.canon.canonical import canonicalize, serialize
from silo_regress.canon.jsonmerge import (
    MISSING,
    RESULT_RULES,
    STATE_RULES,
    TOOL_EVENT_RULES,
    UNKNOWN,
    MergeRules,
    merge_documents,
    merge_values,
    render,
    rules_for,
    unsplice,
)
from silo_regress.canon.markers import split_sides
from silo_regress.errors import InputError

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=12,
)
keys = st.sampled_from(["a", "b", "c", "d", "e", "f"])
objects = st.dictionaries(keys, values, max_size=6)
NONE = MergeRules()


def canon(value: Any) -> bytes:
    return serialize(value)


@settings(max_examples=300, deadline=None)
@given(objects, objects)
def test_a_side_that_changed_nothing_takes_the_other(
    base: dict[str, Any], x: dict[str, Any]
) -> None:
    for merged in (
        merge_values(base, x, base, rules=NONE),
        merge_values(base, base, x, rules=NONE),
    ):
        assert merged.clean
        assert render(merged) == canon(x)


@settings(max_examples=300, deadline=None)
@given(objects, objects)
def test_both_sides_alike_merge_to_that_side(base: dict[str, Any], x: dict[str, Any]) -> None:
    merged = merge_values(base, x, x, rules=NONE)
    assert merged.clean
    assert render(merged) == canon(x)


@st.composite
def disjoint_edits(
    draw: st.DrawFn,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(base, one side, the other, both edits applied): the sides edit different keys."""
    base = draw(objects)
    names = ["a", "b", "c", "d", "e", "f", "g", "h"]
    owner = {name: draw(st.sampled_from([0, 1, 2])) for name in names}  # 0: nobody
    sides: list[dict[str, Any]] = [dict(base), dict(base)]
    expected = dict(base)
    for name, who in owner.items():
        if not who:
            continue
        if draw(st.booleans()) and name in base:
            del sides[who - 1][name]
            del expected[name]
        else:
            new = draw(values)
            if name in base and _alike(new, base[name]):
                continue  # no edit: the side left it as it was
            sides[who - 1][name] = new
            expected[name] = new
    return base, sides[0], sides[1], expected


def _alike(a: Any, b: Any) -> bool:
    return canon(a) == canon(b)


@settings(max_examples=300, deadline=None)
@given(disjoint_edits())
def test_disjoint_edits_merge_cleanly_and_commute(case: tuple[Any, Any, Any, Any]) -> None:
    base, ours, theirs, expected = case
    one = merge_values(base, ours, theirs, rules=NONE)
    other = merge_values(base, theirs, ours, rules=NONE)
    assert one.clean and other.clean
    assert render(one) == render(other) == canon(expected)


@st.composite
def id_edits(draw: st.DrawFn) -> tuple[list[str], list[str], list[str]]:
    """A list of ids, and two sides that each removed and appended different ids."""
    base = draw(
        st.lists(st.sampled_from([f"AUD-{n:04}" for n in range(12)]), unique=True, max_size=8)
    )
    removable = list(base)
    sides: list[list[str]] = []
    for tag in ("A", "B"):
        gone = draw(st.sets(st.sampled_from(removable))) if removable else set()
        removable = [i for i in removable if i not in gone]
        added = draw(
            st.lists(st.sampled_from([f"{tag}-{n}" for n in range(4)]), unique=True, max_size=3)
        )
        side = [i for i in base if i not in gone]
        at = draw(st.integers(0, len(side)))
        sides.append(side[:at] + added + side[at:])
    return base, sides[0], sides[1]


@settings(max_examples=300, deadline=None)
@given(id_edits())
def test_collection_ids_merge_as_sets_in_insertion_order_either_way(
    case: tuple[Any, Any, Any],
) -> None:
    base, ours, theirs = case

    def doc(ids: list[str]) -> dict[str, Any]:
        return {"collections": {"auditLog": {"added": ids}}, "scalars": []}

    one = merge_values(doc(base), doc(ours), doc(theirs), rules=STATE_RULES)
    other = merge_values(doc(base), doc(theirs), doc(ours), rules=STATE_RULES)
    assert one.clean and other.clean
    assert one.value == other.value
    merged: list[str] = one.value["collections"]["auditLog"]["added"]
    assert set(merged) == (set(ours) & set(theirs)) | (set(ours) - set(base)) | (
        set(theirs) - set(base)
    )
    for side in (ours, theirs):  # each side's order is kept
        assert [i for i in merged if i in side] == [i for i in side if i in merged]


@settings(max_examples=300, deadline=None)
@given(values, values, values)
def test_markers_hold_each_side_whole(base: Any, ours: Any, theirs: Any) -> None:
    """Whatever conflicts, the file read back side by side is each side's merge, canonical."""
    for rules in (NONE, RESULT_RULES):
        merged = merge_values(base, ours, theirs, rules=rules)
        text = render(merged)
        if merged.clean:
            assert text == canon(merged.value)
            continue
        sides = split_sides(text, source="t")
        assert sides is not None
        assert sides.ours == canon(merged.value)
        assert sides.theirs == canon(merged.theirs_value)


def test_the_same_pointer_changed_twice_is_a_conflict_named_by_its_pointer() -> None:
    base = {"agentOutput": {"a/b": 1, "x~y": [1]}, "reward": 1}
    ours = {"agentOutput": {"a/b": 2, "x~y": [1]}, "reward": 1}
    theirs = {"agentOutput": {"a/b": 3, "x~y": [2]}, "reward": 1}
    merged = merge_values(base, ours, theirs, rules=RESULT_RULES)
    assert [c.pointer for c in merged.conflicts] == ["/agentOutput/a~1b"]
    assert merged.conflicts[0].base == 1
    assert render(merged).decode() == (
        "{\n"
        '  "agentOutput": {\n'
        "<<<<<<< ours\n"
        '    "a/b": 2,\n'
        "=======\n"
        '    "a/b": 3,\n'
        ">>>>>>> theirs\n"
        '    "x~y": [\n'
        "      2\n"
        "    ]\n"
        "  },\n"
        '  "reward": 1\n'
        "}\n"
    )


def test_true_is_not_one() -> None:
    merged = merge_values({"v": 0}, {"v": True}, {"v": 1}, rules=NONE)
    assert [c.pointer for c in merged.conflicts] == ["/v"]
    assert not merge_values({"v": [0]}, {"v": [True]}, {"v": [1]}, rules=NONE).clean


def test_removed_on_one_side_and_changed_on_the_other_is_a_conflict() -> None:
    merged = merge_values({"a": 1, "b": 2}, {"a": 1}, {"a": 1, "b": 3}, rules=NONE)
    assert [(c.pointer, c.ours, c.theirs) for c in merged.conflicts] == [("/b", MISSING, 3)]
    # the comma of the member before the last belongs to the block: the span is minimal
    assert render(merged).decode() == (
        '{\n<<<<<<< ours\n  "a": 1\n=======\n  "a": 1,\n  "b": 3\n>>>>>>> theirs\n}\n'
    )


def test_a_side_that_empties_an_object_conflicts_on_one_line() -> None:
    merged = merge_values({"o": {"a": 1}}, {"o": {}}, {"o": {"a": 2}}, rules=NONE)
    assert render(merged).decode() == (
        '{\n<<<<<<< ours\n  "o": {}\n=======\n  "o": {\n    "a": 2\n  }\n>>>>>>> theirs\n}\n'
    )


def test_checks_merge_by_label() -> None:
    def check(label: str, passed: bool) -> dict[str, Any]:
        return {"detail": "", "label": label, "passed": passed, "required": True}

    base = {"checks": [check("a", True), check("b", True)]}
    ours = {"checks": [check("a", False), check("b", True)]}
    theirs = {"checks": [check("a", True), check("b", True), check("c", False)]}
    merged = merge_values(base, ours, theirs, rules=RESULT_RULES)
    assert merged.clean
    assert merged.value == {"checks": [check("a", False), check("b", True), check("c", False)]}
    # without the identity the array is one value both sides changed
    assert [c.pointer for c in merge_values(base, ours, theirs, rules=NONE).conflicts] == [
        "/checks"
    ]


def test_an_array_a_side_reordered_is_a_conflict_as_a_whole() -> None:
    base = {"collections": {"x": {"added": ["1", "2", "3"]}}}
    ours = {"collections": {"x": {"added": ["2", "1", "3"]}}}
    theirs = {"collections": {"x": {"added": ["1", "2", "3", "4"]}}}
    merged = merge_values(base, ours, theirs, rules=STATE_RULES)
    assert [c.pointer for c in merged.conflicts] == ["/collections/x/added"]


def test_labels_that_repeat_make_checks_one_value() -> None:
    base = {"checks": [{"label": "a"}, {"label": "a"}]}
    merged = merge_values(base, {"checks": []}, {"checks": [{"label": "b"}]}, rules=RESULT_RULES)
    assert [c.pointer for c in merged.conflicts] == ["/checks"]


def test_tool_events_merge_by_seq() -> None:
    base = [{"seq": 1, "tool": "a"}, {"seq": 2, "tool": "b"}, {"seq": 3, "tool": "c"}]
    ours = [{"seq": 1, "tool": "A"}, {"seq": 2, "tool": "b"}, {"seq": 3, "tool": "c"}]
    theirs = [{"seq": 1, "tool": "a"}, {"seq": 2, "tool": "b"}, {"seq": 3, "tool": "C"}]
    merged = merge_values(base, ours, theirs, rules=TOOL_EVENT_RULES)
    assert merged.clean
    assert merged.value == [
        {"seq": 1, "tool": "A"},
        {"seq": 2, "tool": "b"},
        {"seq": 3, "tool": "C"},
    ]
    inserted = [
        {"seq": 1, "tool": "a"},
        {"seq": 2, "tool": "new"},
        {"seq": 3, "tool": "b"},
        {"seq": 4, "tool": "c"},
    ]
    assert [
        c.pointer for c in merge_values(base, inserted, theirs, rules=TOOL_EVENT_RULES).conflicts
    ] == ["/2/tool"]


def test_a_two_sided_merge_conflicts_wherever_the_sides_differ() -> None:
    ours = {"a": 1, "b": 2, "checks": [{"label": "x", "passed": True}]}
    theirs = {"a": 1, "c": 3, "checks": [{"label": "x", "passed": False}]}
    merged = merge_values(UNKNOWN, ours, theirs, rules=RESULT_RULES)
    assert sorted(c.pointer for c in merged.conflicts) == ["/b", "/c", "/checks/0/passed"]


@pytest.mark.parametrize(
    ("name", "rules"),
    [
        ("baselines/TASK-1.result.json", RESULT_RULES),
        ("crm/TASK-1~2.state-diff.json", STATE_RULES),
        ("TASK-1.tool-events.json", TOOL_EVENT_RULES),
        ("TASK-1.other.json", MergeRules()),
    ],
)
def test_rules_follow_the_artifact_in_the_name(name: str, rules: MergeRules) -> None:
    assert rules_for(name) == rules


def test_a_side_that_is_not_json_is_named() -> None:
    good = b"{}\n"
    with pytest.raises(InputError, match=r"theirs\.json"):
        merge_documents(good, good, b"{", name="x.result.json", sources=("b", "o", "theirs.json"))


def test_documents_merge_into_canonical_bytes() -> None:
    base = b'{"a": 1, "b": 1}'
    done = merge_documents(
        base, b'{"a": 2, "b": 1}', b'{"b": 2.0, "a": 1}', name="x", sources=("b", "o", "t")
    )
    assert done.text == canonicalize(b'{"a":2,"b":2}', source="x").text


# --- a side read back from markers: a member git's line merge left twice -------------

# Theirs removed AUD-0002 and changed AUD-0004, ours changed AUD-0003: git (histogram
# diff) takes theirs' "changed" outside the markers and ours' in the block.
SPLICED = b"""{
  "collections": {
    "auditLog": {
      "added": [
        "AUD-0001"
      ],
      "changed": [
        "AUD-0004"
      ],
<<<<<<< HEAD
      "changed": [
        "AUD-0003"
      ],
||||||| 0112be8
      "changed": [],
=======
>>>>>>> other
      "removed": []
    }
  },
  "scalars": []
}
"""


def spliced_sides() -> tuple[bytes | None, bytes, bytes]:
    sides = split_sides(SPLICED, source="t")
    assert sides is not None and sides.base is not None
    return (
        unsplice(sides.base, sides.base_marked, rules=STATE_RULES),
        unsplice(sides.ours, sides.ours_marked, rules=STATE_RULES),
        unsplice(sides.theirs, sides.theirs_marked, rules=STATE_RULES),
    )


def test_a_member_left_twice_is_kept_where_the_block_holds_it() -> None:
    base, ours, theirs = spliced_sides()
    assert json.loads(ours)["collections"]["auditLog"]["changed"] == ["AUD-0003"]
    assert base is not None and json.loads(base)["collections"]["auditLog"]["changed"] == []
    done = merge_documents(base, ours, theirs, name="T.state-diff.json", sources=("b", "o", "t"))
    assert done.merge.clean
    assert json.loads(done.text)["collections"]["auditLog"] == {
        "added": ["AUD-0001"],
        "changed": ["AUD-0003", "AUD-0004"],
        "removed": [],
    }


def test_without_a_base_the_member_left_twice_is_a_conflict_named() -> None:
    _, ours, theirs = spliced_sides()
    done = merge_documents(None, ours, theirs, name="T.state-diff.json", sources=("b", "o", "t"))
    assert [c.pointer for c in done.merge.conflicts] == ["/collections/auditLog/changed"]


def test_a_duplicate_not_split_by_a_block_is_left_to_the_parser() -> None:
    """Both outside the blocks, or one half in a block: no side to take it from."""
    both_outside = b'{\n  "a": 1,\n  "a": 2,\n  "b": 3\n}\n'
    assert unsplice(both_outside, frozenset({3}), rules=NONE) == both_outside
    half_inside = b'{\n  "a": [\n    1\n  ],\n  "a": [\n    2\n  ]\n}\n'
    assert unsplice(half_inside, frozenset({4, 5}), rules=NONE) == half_inside
    with pytest.raises(InputError, match="duplicate key 'a'"):
        canonicalize(half_inside, source="t")
    not_canonical = b'{"a": 1, "a": 2}\n'
    assert unsplice(not_canonical, frozenset({0}), rules=NONE) == not_canonical


def test_duplicate_labels_and_ids_are_kept_once_where_the_block_holds_them() -> None:
    checks = (
        b'{\n  "checks": [\n    {\n      "label": "A",\n      "passed": true\n    },\n'
        b'    {\n      "label": "A",\n      "passed": false\n    }\n  ]\n}\n'
    )
    kept = unsplice(checks, frozenset(range(6, 10)), rules=RESULT_RULES)
    assert json.loads(kept) == {"checks": [{"label": "A", "passed": False}]}
    assert unsplice(checks, frozenset(range(6, 10)), rules=NONE) == checks  # not keyed
    ids = b'{\n  "changed": [\n    "X-1",\n    "X-2",\n    "X-1"\n  ]\n}\n'
    rules = MergeRules(sets=(("changed",),))
    assert json.loads(unsplice(ids, frozenset({4}), rules=rules)) == {"changed": ["X-2", "X-1"]}


@settings(max_examples=200, deadline=None)
@given(values, st.frozensets(st.integers(0, 40)))
def test_a_side_without_duplicates_is_left_as_it_is(value: Any, marked: frozenset[int]) -> None:
    text = serialize(value)
    assert unsplice(text, marked, rules=NONE) == text
