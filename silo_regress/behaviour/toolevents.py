"""The behaviour profile of ``tool-events.json``: what the agent did, call by call.

A tool path is a list of events; each ``tool_call`` is paired with its
``tool_result`` (by ``callId`` in newer traces, by order in older ones). The two
sequences of calls are aligned by a longest common subsequence of their
(tool, input) keys, so one inserted call reads as one inserted call, not as every
later call changed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from silo_regress.behaviour.notes import (
    CallChanged,
    CallDropped,
    CallErrorChanged,
    CallInserted,
    CallsCounted,
    MoreChanges,
    Note,
    ToolCountChanged,
    ToolPathRecorded,
)
from silo_regress.canon.canonical import JsonValue, serialize
from silo_regress.canon.jsondiff import MISSING, Missing, diff_values

ARTIFACT = "tool-events.json"
SIDES = ("input", "output")
LISTED_PATHS = 5  # changed values named for the first diverging call
LISTED_CALLS = 10  # inserted, dropped or error-flipped calls named
# Above this many (baseline x run) calls between the shared start and end, the
# alignment is positional: the LCS is quadratic in the worst case.
ALIGN_LIMIT = 4_000_000
# Myers' algorithm costs about (edits squared) steps and memory: beyond this many
# inserted plus dropped calls the middle of the paths is aligned by position.
MAX_EDITS = 2_000


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call with its result (``output`` MISSING when no result was traced)."""

    number: int
    tool: str
    input: JsonValue | Missing
    output: JsonValue | Missing
    error: bool

    @property
    def key(self) -> tuple[str, bytes]:
        # Canonical bytes: 1 and 1.0, key order, huge integers all compare as JSON does.
        return (self.tool, b"" if self.input is MISSING else serialize(self.input))

    @property
    def code(self) -> str | None:
        """The error code of a failed call (``tool_not_found``, ``invalid_input`` ...)."""
        if not self.error or not isinstance(self.output, dict):
            return None
        code = self.output.get("code")
        return code if isinstance(code, str) else None


class _Pending:
    """A call while its trace is read: its result may come later."""

    __slots__ = ("error", "input", "output", "tool")

    def __init__(self, tool: str, given: JsonValue | Missing) -> None:
        self.tool = tool
        self.input = given
        self.output: JsonValue | Missing = MISSING
        self.error = False


def calls_of(path: Any) -> list[Call] | None:
    """The calls of a tool path, or None when it is not a list of events."""
    if not isinstance(path, list):
        return None
    found: list[_Pending] = []
    by_id: dict[str, _Pending] = {}
    for event in path:
        if not isinstance(event, dict):
            return None
        kind, tool = event.get("type"), event.get("tool")
        if kind == "tool_call":
            call = _Pending(tool if isinstance(tool, str) else "?", event.get("input", MISSING))
            found.append(call)
            if "callId" in event:
                by_id[serialize(event["callId"]).decode()] = call
        elif kind == "tool_result":
            owner = _result_owner(found, by_id, event)
            if owner is not None:
                owner.output = event.get("output", MISSING)
                owner.error = event.get("isError") is True
    return [Call(i, c.tool, c.input, c.output, c.error) for i, c in enumerate(found, 1)]


def _result_owner(
    found: list[_Pending], by_id: dict[str, _Pending], event: dict[str, Any]
) -> _Pending | None:
    if "callId" in event:
        return by_id.get(serialize(event["callId"]).decode())
    # Older traces: a result follows its call; take the last call still waiting.
    for call in reversed(found):
        if call.output is MISSING:
            return call
    return None


def compare(before: Any, after: Any) -> tuple[Note, ...] | None:
    """The notes for two tool paths, or None when either is not one (generic speaks)."""
    old, new = calls_of(before), calls_of(after)
    if old is None or new is None:
        return None
    notes: list[Note] = []
    if len(old) != len(new):
        notes.append(CallsCounted(len(old), len(new)))
    notes.extend(_tool_counts(old, new))
    pairs, dropped, inserted = align(old, new)
    notes.extend(_first_divergence(pairs))
    flips = [_error_note(a, b) for a, b in pairs if a.error != b.error]
    notes.extend(_listed(flips, "tool calls whose errors changed"))
    notes.extend(_listed([CallDropped(c.number, c.tool, c.code) for c in dropped], "dropped calls"))
    notes.extend(
        _listed([CallInserted(c.number, c.tool, c.code) for c in inserted], "inserted calls")
    )
    return tuple(notes) or None


def describe(value: Any) -> tuple[Note, ...] | None:
    calls = calls_of(value)
    if calls is None:
        return None
    return (ToolPathRecorded(len(calls), sum(c.error for c in calls)),)


def _tool_counts(old: Sequence[Call], new: Sequence[Call]) -> list[Note]:
    before, after = Counter(c.tool for c in old), Counter(c.tool for c in new)
    moved = [
        (after[tool] - before[tool], tool)
        for tool in set(before) | set(after)
        if after[tool] != before[tool]
    ]
    # More often first, then less often; the largest moves first within each.
    moved.sort(key=lambda item: (-item[0], item[1]))
    return [ToolCountChanged(tool, before[tool], after[tool]) for _, tool in moved]


def align(
    old: Sequence[Call], new: Sequence[Call]
) -> tuple[list[tuple[Call, Call]], list[Call], list[Call]]:
    """Paired calls (in run order), calls only the baseline made, calls only the run made.

    Calls with equal (tool, input) keys pair along the longest common subsequence;
    between two such anchors, calls of the same tool pair by position (the input
    changed), and the rest are dropped or inserted.
    """
    a, b = [c.key for c in old], [c.key for c in new]
    pairs: list[tuple[Call, Call]] = []
    dropped: list[Call] = []
    inserted: list[Call] = []
    for tag, i1, i2, j1, j2 in _opcodes(a, b):
        if tag == "equal":
            pairs.extend(zip(old[i1:i2], new[j1:j2], strict=True))
            continue
        _pair_by_tool(old[i1:i2], new[j1:j2], pairs, dropped, inserted)
    pairs.sort(key=lambda pair: pair[1].number)
    return pairs, dropped, inserted


def _pair_by_tool(
    old: Sequence[Call],
    new: Sequence[Call],
    pairs: list[tuple[Call, Call]],
    dropped: list[Call],
    inserted: list[Call],
) -> None:
    for tag, i1, i2, j1, j2 in lcs_opcodes([c.tool for c in old], [c.tool for c in new]):
        if tag == "equal":
            pairs.extend(zip(old[i1:i2], new[j1:j2], strict=True))
        else:
            dropped.extend(old[i1:i2])
            inserted.extend(new[j1:j2])


Opcode = tuple[str, int, int, int, int]


def _opcodes(a: list[Any], b: list[Any]) -> list[Opcode]:
    """Opcodes of a longest common subsequence, with the shared start and end taken
    off first (cheap, and the usual case: one change somewhere in a long path)."""
    shorter = min(len(a), len(b))
    start = 0
    while start < shorter and a[start] == b[start]:
        start += 1
    end = 0
    while end < shorter - start and a[len(a) - 1 - end] == b[len(b) - 1 - end]:
        end += 1
    mid_a, mid_b = a[start : len(a) - end], b[start : len(b) - end]
    out: list[Opcode] = []
    if start:
        out.append(("equal", 0, start, 0, start))
    if len(mid_a) * len(mid_b) > ALIGN_LIMIT:
        out.append(("replace", start, len(a) - end, start, len(b) - end))
    else:
        for tag, i1, i2, j1, j2 in lcs_opcodes(mid_a, mid_b):
            out.append((tag, i1 + start, i2 + start, j1 + start, j2 + start))
    if end:
        out.append(("equal", len(a) - end, len(a), len(b) - end, len(b)))
    return out


def lcs_opcodes(a: Sequence[Any], b: Sequence[Any]) -> list[Opcode]:
    """``equal`` runs along a longest common subsequence of ``a`` and ``b`` and
    ``replace``/``delete``/``insert`` gaps between them, in difflib's opcode shape.

    difflib.SequenceMatcher is not an LCS (it anchors on the longest contiguous
    block and recurses), and on tool paths it pairs fewer calls than a true
    alignment. This is Myers' O((N+M)D) shortest edit script, which keeps exactly
    an LCS; past MAX_EDITS edits the two are aligned by position instead.
    """
    matches = _lcs_matches(a, b)
    if matches is None:
        return [_gap(0, len(a), 0, len(b))] if a or b else []
    out: list[Opcode] = []
    i = j = 0
    run_start: tuple[int, int] | None = None
    for x, y in [*matches, (len(a), len(b))]:
        if run_start is not None and (x, y) != (i, j):
            out.append(("equal", run_start[0], i, run_start[1], j))
            run_start = None
        if (x, y) != (i, j):
            out.append(_gap(i, x, j, y))
        if (x, y) == (len(a), len(b)):
            break
        if run_start is None:
            run_start = (x, y)
        i, j = x + 1, y + 1
    if run_start is not None:
        out.append(("equal", run_start[0], i, run_start[1], j))
    return out


def _gap(i1: int, i2: int, j1: int, j2: int) -> Opcode:
    tag = "replace" if i1 < i2 and j1 < j2 else "delete" if i1 < i2 else "insert"
    return (tag, i1, i2, j1, j2)


def _lcs_matches(a: Sequence[Any], b: Sequence[Any]) -> list[tuple[int, int]] | None:
    """The (i, j) pairs of a longest common subsequence, in order; None past MAX_EDITS."""
    n, m = len(a), len(b)
    frontier: dict[int, int] = {1: 0}  # diagonal k = x - y -> furthest x reached
    trace: list[dict[int, int]] = []
    for d in range(min(n + m, MAX_EDITS) + 1):
        trace.append(dict(frontier))
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and frontier[k - 1] < frontier[k + 1]):
                x = frontier[k + 1]  # a step down: b[y - 1] inserted
            else:
                x = frontier[k - 1] + 1  # a step right: a[x - 1] dropped
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x, y = x + 1, y + 1
            frontier[k] = x
            if x >= n and y >= m:
                return _backtrack(trace, n, m)
    return None


def _backtrack(trace: list[dict[int, int]], n: int, m: int) -> list[tuple[int, int]]:
    """Walk the edit rounds back from (n, m): each round's diagonal run is matches."""
    matches: list[tuple[int, int]] = []
    x, y = n, m
    for d in range(len(trace) - 1, 0, -1):
        frontier = trace[d]
        k = x - y
        down = k == -d or (k != d and frontier[k - 1] < frontier[k + 1])
        previous_k = k + 1 if down else k - 1
        previous_x = frontier[previous_k]
        previous_y = previous_x - previous_k
        while x > previous_x and y > previous_y:
            x, y = x - 1, y - 1
            matches.append((x, y))
        x, y = previous_x, previous_y
    while x > 0 and y > 0:  # round 0: the shared start
        x, y = x - 1, y - 1
        matches.append((x, y))
    matches.reverse()
    return matches


def _first_divergence(pairs: Sequence[tuple[Call, Call]]) -> list[Note]:
    """The changed values of the first paired call whose input or output differs."""
    for old, new in pairs:
        changes = [
            (side, change)
            for side in SIDES
            for change in diff_values(getattr(old, side), getattr(new, side))
        ]
        if not changes:
            continue
        notes: list[Note] = [
            CallChanged(new.number, new.tool, side, c.path, c.baseline, c.run)
            for side, c in changes[:LISTED_PATHS]
        ]
        if len(changes) > LISTED_PATHS:
            scope = f"call {new.number} {new.tool}"
            notes.append(MoreChanges(scope, len(changes) - LISTED_PATHS))
        return notes
    return []


def _error_note(old: Call, new: Call) -> Note:
    if new.error:
        return CallErrorChanged(new.number, new.tool, True, new.code)
    return CallErrorChanged(new.number, new.tool, False, old.code)


def _listed(notes: list[Note], scope: str) -> list[Note]:
    if len(notes) <= LISTED_CALLS:
        return notes
    return [*notes[:LISTED_CALLS], MoreChanges(scope, len(notes) - LISTED_CALLS)]
