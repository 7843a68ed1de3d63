"""Tests for JSON Pointers and path patterns (silo_regress.canon.pointer)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from silo_regress.canon.pointer import PathPattern, format_pointer, split_pointer, walk


@pytest.mark.parametrize(
    ("parts", "pointer"),
    [
        ((), ""),
        (("",), "/"),
        (("a",), "/a"),
        (("checks", 1, "label"), "/checks/1/label"),
        (("a/b",), "/a~1b"),
        (("m~n",), "/m~0n"),
        (("~1",), "/~01"),
        (("/~",), "/~1~0"),
        (("", ""), "//"),
        (("é 😀", " "), "/é 😀/ "),
    ],
)
def test_format_and_split(parts: tuple[Any, ...], pointer: str) -> None:
    assert format_pointer(parts) == pointer
    assert split_pointer(pointer) == tuple(str(p) for p in parts)


def test_rfc6901_examples() -> None:
    assert split_pointer("/a~1b") == ("a/b",)
    assert split_pointer("/m~0n") == ("m~n",)
    assert split_pointer("/~01") == ("~1",)  # not "/"
    assert split_pointer("/c%d") == ("c%d",)
    assert split_pointer("/ ") == (" ",)


@pytest.mark.parametrize("pointer", ["a", "a/b", "~1", " /a"])
def test_split_requires_leading_slash(pointer: str) -> None:
    with pytest.raises(ValueError, match="must start with '/'"):
        split_pointer(pointer)


@settings(max_examples=200, deadline=None, database=None)
@given(st.lists(st.one_of(st.text(alphabet="ab/~01*", max_size=5), st.integers(0, 20))))
def test_round_trip(parts: list[str | int]) -> None:
    pointer = format_pointer(parts)
    assert split_pointer(pointer) == tuple(str(p) for p in parts)
    assert pointer.count("/") == len(parts)


def test_pattern_parse() -> None:
    plain = PathPattern.parse("/checks/*/detail")
    assert plain.artifact is None
    assert plain.segments == ("checks", "*", "detail")
    qualified = PathPattern.parse("result.json:/agentOutput")
    assert qualified.artifact == "result.json"
    assert qualified.segments == ("agentOutput",)
    assert qualified.text == "result.json:/agentOutput"
    colon_key = PathPattern.parse("/a:b/c")
    assert colon_key.artifact is None
    assert colon_key.segments == ("a:b", "c")
    assert PathPattern.parse("/a~1b").segments == ("a/b",)
    with pytest.raises(ValueError):
        PathPattern.parse("result.json:agentOutput")
    with pytest.raises(ValueError):
        PathPattern.parse("agentOutput")


def test_pattern_applies_to() -> None:
    assert PathPattern.parse("/x").applies_to("result.json")
    assert PathPattern.parse("/x").applies_to("state-diff.json")
    qualified = PathPattern.parse("state-diff.json:/x")
    assert qualified.applies_to("state-diff.json")
    assert not qualified.applies_to("result.json")


def test_pattern_matches() -> None:
    pattern = PathPattern.parse("/checks/*/detail")
    assert pattern.matches(("checks", 0, "detail"))
    assert pattern.matches(("checks", 12, "detail"))
    assert pattern.matches(("checks", "key", "detail"))
    assert not pattern.matches(("checks", 0))
    assert not pattern.matches(("checks", 0, "detail", "x"))
    assert not pattern.matches(("checks", 0, "label"))
    assert not pattern.matches(("check", 0, "detail"))
    index = PathPattern.parse("/checks/1")
    assert index.matches(("checks", 1))
    assert index.matches(("checks", "1"))
    assert not index.matches(("checks", 10))
    assert not PathPattern.parse("/checks/01").matches(("checks", 1))
    assert PathPattern.parse("").matches(())
    assert not PathPattern.parse("").matches(("a",))


def test_pattern_covers() -> None:
    pattern = PathPattern.parse("/agentOutput/*")
    assert pattern.covers(("agentOutput", "text"))
    assert pattern.covers(("agentOutput", "text", 0, "deep"))
    assert not pattern.covers(("agentOutput",))
    assert not pattern.covers(("agentOutputs", "x"))
    assert not pattern.covers(())
    assert PathPattern.parse("").covers(("anything", 1))


def test_walk_order_and_paths() -> None:
    value = {"b": [10, {"c": None}], "a": {}, "d": []}
    assert list(walk(value)) == [
        ((), value),
        (("b",), [10, {"c": None}]),
        (("b", 0), 10),
        (("b", 1), {"c": None}),
        (("b", 1, "c"), None),
        (("a",), {}),
        (("d",), []),
    ]
    assert list(walk("x")) == [((), "x")]
    assert list(walk(1, ("prefix",))) == [(("prefix",), 1)]
