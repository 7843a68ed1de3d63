"""The tool-path alignment is a true longest common subsequence of (tool, input).

A differential test: on random tool paths, the calls the summary pairs by equal
(tool, input) are as many as a brute-force dynamic-programming LCS finds, and the
opcodes describe both paths exactly. difflib.SequenceMatcher, used before, pairs
fewer on some paths (it anchors on the longest contiguous block).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from silo_regress.behaviour.toolevents import Call, align, lcs_opcodes
from silo_regress.canon.jsondiff import MISSING


def brute_lcs(a: Sequence[Any], b: Sequence[Any]) -> int:
    """The classic O(n*m) table: the length of a longest common subsequence."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = (
                table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
            )
    return table[len(a)][len(b)]


def check_opcodes(a: Sequence[Any], b: Sequence[Any]) -> int:
    """The opcodes tile both sequences in order; 'equal' runs hold equal items. The
    number of items paired."""
    i = j = 0
    paired = 0
    for tag, i1, i2, j1, j2 in lcs_opcodes(a, b):
        assert (i1, j1) == (i, j), (tag, i1, i2, j1, j2)
        if tag == "equal":
            assert i2 - i1 == j2 - j1 > 0
            assert list(a[i1:i2]) == list(b[j1:j2])
            paired += i2 - i1
        else:
            assert tag == {(True, True): "replace", (True, False): "delete"}.get(
                (i2 > i1, j2 > j1), "insert"
            )
        i, j = i2, j2
    assert (i, j) == (len(a), len(b))
    return paired


def test_the_case_sequence_matcher_got_wrong() -> None:
    a, b = list("aacbacca"), list("bcacbcba")
    assert brute_lcs(a, b) == 5
    assert check_opcodes(a, b) == 5  # SequenceMatcher pairs 4 here


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from("abcd"), max_size=14),
    st.lists(st.sampled_from("abcd"), max_size=14),
)
def test_lcs_opcodes_pair_as_many_as_brute_force(a: list[str], b: list[str]) -> None:
    assert check_opcodes(a, b) == brute_lcs(a, b)


def _calls(keys: Sequence[tuple[str, int]]) -> list[Call]:
    return [Call(n + 1, tool, {"q": q}, MISSING, False) for n, (tool, q) in enumerate(keys)]


def _edited(path: list[tuple[str, int]], rng: random.Random, edits: int) -> list[tuple[str, int]]:
    out = list(path)
    for _ in range(edits):
        kind = rng.randrange(3)
        at = rng.randrange(len(out) + 1)
        new = (rng.choice("ABC"), rng.randrange(3))
        if kind == 0 or not out:
            out.insert(at, new)
        elif kind == 1:
            del out[min(at, len(out) - 1)]
        else:
            out[min(at, len(out) - 1)] = new
    return out


def test_tool_paths_with_edits_pair_every_call_a_true_alignment_can() -> None:
    """The issue's measurement, as a test: random paths with 3 and 6 edits."""
    rng = random.Random(21)
    for edits in (3, 6):
        for _ in range(300):
            base = [(rng.choice("ABC"), rng.randrange(3)) for _ in range(rng.randint(5, 25))]
            run = _edited(base, rng, edits)
            pairs, dropped, inserted = align(_calls(base), _calls(run))
            exact = sum(1 for old, new in pairs if old.key == new.key)
            keys_a = [c.key for c in _calls(base)]
            keys_b = [c.key for c in _calls(run)]
            assert exact >= brute_lcs(keys_a, keys_b), (base, run)
            assert len(pairs) + len(dropped) == len(base)
            assert len(pairs) + len(inserted) == len(run)
