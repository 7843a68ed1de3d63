"""The behaviour profile of ``result.json``: pass/fail, reward, checks, counters, output."""

from __future__ import annotations

import re
from typing import Any

from silo_regress.behaviour.generic import value_notes
from silo_regress.behaviour.notes import (
    CheckAdded,
    CheckFieldChanged,
    CheckFlipped,
    CheckRemoved,
    ChecksReordered,
    CountChanged,
    FailedRequired,
    FieldChanged,
    MoreChanges,
    Note,
    OutputChanged,
    PassedChanged,
    Recorded,
    RewardMoved,
    Segment,
    SegmentKind,
)
from silo_regress.canon.canonical import JsonValue
from silo_regress.canon.jsondiff import MISSING, Missing, diff_values, same_leaf

ARTIFACT = "result.json"
_DESCRIPTIVE = ("terminationReason", "error")
_COUNTERS = ("toolCalls", "toolErrors", "requiredPassed", "checksPassed", "checksFailed")
# Summarized above, or derived from what is (failedRequired, requiredTotal).
_KNOWN = frozenset(
    {"passed", "reward", "checks", "agentOutput", "failedRequired", "requiredTotal"}
    | set(_DESCRIPTIVE)
    | set(_COUNTERS)
)
# Strings at most this long on one line are shown whole, not word-diffed.
SHORT_TEXT = 60


def compare(before: Any, after: Any) -> tuple[Note, ...] | None:
    """The notes for two results, or None when they are not both objects."""
    if not (isinstance(before, dict) and isinstance(after, dict)):
        return None
    a, b = before, after
    notes: list[Note] = []
    if _get(a, "passed") != _get(b, "passed"):
        notes.append(PassedChanged(_get(a, "passed"), _get(b, "passed")))
    if not same_leaf(_get(a, "reward"), _get(b, "reward")):
        notes.append(RewardMoved(_get(a, "reward"), _get(b, "reward")))
    notes.extend(_check_notes(_get(a, "checks"), _get(b, "checks")))
    for key in _DESCRIPTIVE:
        if _get(a, key) != _get(b, key):
            notes.append(FieldChanged(key, _get(a, key), _get(b, key)))
    for key in _COUNTERS:
        if _get(a, key) != _get(b, key):
            notes.append(CountChanged(key, _get(a, key), _get(b, key)))
    notes.extend(_output_notes(_get(a, "agentOutput"), _get(b, "agentOutput")))
    notes.extend(
        value_notes(
            {k: v for k, v in a.items() if k not in _KNOWN},
            {k: v for k, v in b.items() if k not in _KNOWN},
        )
    )
    return tuple(notes)


def describe(value: Any) -> tuple[Note, ...] | None:
    """A new baseline in a few words: does it pass, what reward, which required failed."""
    if not isinstance(value, dict):
        return None
    notes: list[Note] = [Recorded(passes=value.get("passed") is True, reward=value.get("reward"))]
    failed = value.get("failedRequired")
    if isinstance(failed, list) and failed:
        notes.append(FailedRequired(tuple(str(f) for f in failed)))
    return tuple(notes)


def _get(obj: dict[str, Any], key: str) -> JsonValue | Missing:
    return obj.get(key, MISSING)  # type: ignore[no-any-return]


def _output_notes(before: Any, after: Any, *, limit: int = 6) -> list[Note]:
    """agentOutput: a word diff for text, the changed members for objects and arrays."""
    containers = isinstance(before, dict | list), isinstance(after, dict | list)
    if (before == after) if any(containers) else same_leaf(before, after):
        return []
    if not all(containers):
        return [text_change("/agentOutput", before, after)]
    changes = diff_values(before, after, ("agentOutput",))
    notes: list[Note] = [text_change(c.path, c.baseline, c.run, limit=200) for c in changes[:limit]]
    if len(changes) > limit:
        notes.append(MoreChanges("agentOutput", len(changes) - limit))
    return notes


def _check_notes(before: Any, after: Any) -> list[Note]:
    def by_label(checks: Any) -> dict[str, dict[str, Any]]:
        if not isinstance(checks, list):
            return {}
        found: dict[str, dict[str, Any]] = {}
        for check in checks:
            if isinstance(check, dict) and isinstance(check.get("label"), str):
                found.setdefault(check["label"], check)
        return found

    a, b = by_label(before), by_label(after)
    notes: list[Note] = []
    for label, old in a.items():
        new = b.get(label)
        if new is None:
            notes.append(CheckRemoved(label))
            continue
        if old.get("passed") != new.get("passed"):
            notes.append(CheckFlipped(label, old.get("passed"), new.get("passed")))
        for key in ("required", "detail"):
            if old.get(key) != new.get(key):
                notes.append(
                    CheckFieldChanged(label, key, old.get(key, MISSING), new.get(key, MISSING))
                )
    for label, new in b.items():
        if label not in a:
            notes.append(CheckAdded(label, new.get("passed")))
    if not notes and before != after:
        notes.append(ChecksReordered())
    return notes


_WORDS = re.compile(r"\s+|\w+|[^\w\s]")
# Characters per side beyond which a text gets no word diff: difflib over 10 MB of
# words took seconds, to print a line cut at a few hundred characters anyway.
WORD_DIFF_LIMIT = 100_000


def text_change(
    path: str, before: JsonValue | Missing, after: JsonValue | Missing, *, limit: int = 400
) -> OutputChanged:
    """An :class:`OutputChanged`, with a word diff when both sides are long text."""
    words = None
    if (
        isinstance(before, str)
        and isinstance(after, str)
        and not is_short(before, after)
        and max(len(before), len(after)) <= WORD_DIFF_LIMIT
    ):
        words = word_diff(before, after)
    return OutputChanged(path, before, after, words=words, limit=limit)


def is_short(before: str, after: str) -> bool:
    """Two strings short enough to show whole, side by side."""
    return len(before) <= SHORT_TEXT and len(after) <= SHORT_TEXT and "\n" not in before + after


def word_diff(before: str, after: str) -> tuple[Segment, ...]:
    """The word-level diff of two strings; unchanged runs over 40 characters elided."""
    import difflib

    old, new = _WORDS.findall(before), _WORDS.findall(after)
    pieces: list[Segment] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            text = "".join(old[i1:i2])
            same = text if len(text) <= 40 else text[:18] + "…" + text[-18:]
            pieces.append(Segment(SegmentKind.SAME, same))
        else:
            if i2 > i1:
                pieces.append(Segment(SegmentKind.REMOVED, "".join(old[i1:i2])))
            if j2 > j1:
                pieces.append(Segment(SegmentKind.ADDED, "".join(new[j1:j2])))
    return tuple(pieces)
