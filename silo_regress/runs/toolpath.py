"""The derived artifact ``tool-events.json``: a run's tool path, read from ``trace.jsonl``.

Silo's own tool-path gate keeps the trace's ``tool_call`` and ``tool_result`` events in
file order, drops their wall-clock keys (``at``, ``durationMs``) and byte-compares the
rest. This module produces the canonical bytes of that array (DESIGN.md "Derived
artifact: the tool path"), or says why the run cannot have one.

The trace is read line by line and each kept event is printed as soon as it is read, so
memory holds one line and the output, never the parsed trace: a 300 MB trace of 500,000
events must not become a million Python objects.
"""

from __future__ import annotations

import enum
import io
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from silo_regress.canon.canonical import compact_is_canonical, parse, serialize
from silo_regress.errors import InputError
from silo_regress.project.config import DEFAULT_TRACE_EVENTS
from silo_regress.runs.derived import TOOL_EVENTS as TOOL_EVENTS
from silo_regress.runs.derived import TRACE_FILE as TRACE_FILE
from silo_regress.runs.derived import is_derived as is_derived
from silo_regress.runs.derived import source_file as source_file

RESULT_FILE = "result.json"
# Wall-clock keys of an event: different in every rollout, so never part of the path.
DROPPED_KEYS = ("at", "durationMs")
EMPTY_PATH = b"[]\n"

# The longest trace line read. Silo writes one event a line; a line of gigabytes is
# a runaway tool result or a hostile file, and reading it whole took 6 times its
# size in memory (a 1.1 GB line, 6.5 GB). Past this the run is incomplete-run.
MAX_LINE_BYTES = 32 << 20
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_SORTED = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS


class Gap(enum.Enum):
    """Why a run has no tool path (the run is ``incomplete-run`` for this artifact)."""

    NO_TRACE = "no-trace"  # no trace.jsonl although result.json counts tool calls
    NO_RESULT = "no-result"  # no trace.jsonl, and no result.json to say whether tools ran
    EMPTY_TRACE = "empty-trace"  # trace.jsonl of zero events although tools were called
    TRUNCATED_LINE = "truncated-line"  # the last line was cut off mid-write
    NOT_JSON = "not-json"
    NOT_OBJECT = "not-object"
    NOT_EVENT = "not-event"  # an object without a string "type"
    INTERLEAVED = "interleaved"  # two rollouts appended to one trace (seq restarts)
    CALLS_MISSING = "calls-missing"  # fewer tool_call events than result.json counts
    UNREADABLE = "unreadable"  # a directory, FIFO or device, or no permission
    LINE_TOO_LONG = "line-too-long"  # one line past MAX_LINE_BYTES: never held in memory


@dataclass(frozen=True)
class Incomplete:
    """A run's trace cannot give a tool path; ``reason`` names the file part at fault."""

    gap: Gap
    path: str  # the file at fault, as given to derive_tool_path
    reason: str  # a sentence fragment that follows the file name
    line: int | None = None

    def describe(self, shown: str | None = None) -> str:
        """One sentence naming the file (``shown``, e.g. project-relative) and the reason."""
        return f"{shown or self.path}{self.reason}"


@dataclass(frozen=True)
class ToolPath:
    """The canonical bytes of a run's tool path and what went into them."""

    text: bytes
    events: int  # events kept in the path
    calls: int  # tool_call events in the trace, kept or not


class IncompleteTraceError(InputError):
    """Raised where an artifact reader needs bytes but the trace gives no tool path."""

    def __init__(self, incomplete: Incomplete) -> None:
        super().__init__(incomplete.describe())
        self.incomplete = incomplete


def read_tool_calls(run_dir: str | os.PathLike[str]) -> int | None:
    """``toolCalls`` from the run's ``result.json``; None when it cannot be read."""
    try:
        with open(os.path.join(run_dir, RESULT_FILE), "rb") as handle:
            result = orjson.loads(handle.read())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(result, dict):
        return None
    count = result.get("toolCalls")
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        return None
    return count


def derive_tool_path(
    run_dir: str | os.PathLike[str],
    *,
    events: Iterable[str] = DEFAULT_TRACE_EVENTS,
    tool_calls: int | None,
) -> ToolPath | Incomplete:
    """The run's tool path, or why it has none.

    ``tool_calls`` is result.json's count of tool calls (None when unknown): it tells
    a missing or empty trace that means "no tool was called" (path ``[]``) from one
    that means "the trace is lost".
    """
    trace = os.path.join(run_dir, TRACE_FILE)
    count = tool_calls
    handle = _open_regular(trace)
    if handle is None:
        return _without_trace(run_dir, count)
    if isinstance(handle, Incomplete):
        return handle
    with handle:
        try:
            found, lines = _derive(handle, trace, frozenset(events))
        except OSError as exc:
            return _unreadable(trace, exc)
    if isinstance(found, Incomplete):
        return found
    if count is not None and found.calls < count:
        if lines == 0:
            return Incomplete(
                Gap.EMPTY_TRACE,
                trace,
                f" holds no events, but {RESULT_FILE} counts {_calls(count)}",
            )
        return Incomplete(
            Gap.CALLS_MISSING,
            trace,
            f" holds {_calls(found.calls)}, but {RESULT_FILE} counts {count}"
            " (the trace lost events)",
        )
    return found


def _open_regular(trace: str) -> io.BufferedReader | Incomplete | None:
    """The open trace; None when there is none; never blocks on a FIFO."""
    try:
        fd = os.open(trace, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return _unreadable(trace, exc)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else None
        what = f"is {kind}, not a regular file" if kind else "is not a regular file"
        return Incomplete(Gap.UNREADABLE, trace, f" {what}")
    return os.fdopen(fd, "rb")


def _unreadable(trace: str, exc: OSError) -> Incomplete:
    return Incomplete(Gap.UNREADABLE, trace, f" cannot be read: {exc.strerror or exc}")


def _calls(count: int) -> str:
    return f"{count} tool call" + ("" if count == 1 else "s")


def _without_trace(run_dir: str | os.PathLike[str], count: int | None) -> ToolPath | Incomplete:
    """Old Silo writes no trace when no tool was called: the path is then ``[]``."""
    trace = os.path.join(run_dir, TRACE_FILE)
    if count == 0:
        return ToolPath(text=EMPTY_PATH, events=0, calls=0)
    if count is None:
        return Incomplete(
            Gap.NO_RESULT,
            trace,
            f" is missing, and no readable {RESULT_FILE} says whether tools were called",
        )
    return Incomplete(Gap.NO_TRACE, trace, f" is missing, but {RESULT_FILE} counts {_calls(count)}")


class _Reader:
    """State of one pass over a trace: counts, the last seq, rollout starts."""

    def __init__(self, trace: str, keep: frozenset[str]) -> None:
        self.trace = trace
        self.keep = keep
        self.out = io.BytesIO()
        self.kept = 0
        self.calls = 0
        self.starts = 0
        self.last_seq: int | None = None

    def add(self, number: int, body: bytes) -> Incomplete | None:
        event = _load(body, where=f"{self.trace} line {number}")
        if isinstance(event, str):
            return Incomplete(
                Gap.NOT_JSON, self.trace, f" line {number} is not JSON: {event}", number
            )
        value, exact = event
        if not isinstance(value, dict):
            return Incomplete(
                Gap.NOT_OBJECT, self.trace, f" line {number} is not a JSON object", number
            )
        kind = value.get("type")
        if not isinstance(kind, str):
            return Incomplete(
                Gap.NOT_EVENT, self.trace, f' line {number} has no string "type"', number
            )
        problem = self._order(number, value, kind)
        if problem is not None:
            return problem
        if kind == "tool_call":
            self.calls += 1
        if kind in self.keep:
            for key in DROPPED_KEYS:
                value.pop(key, None)
            self._write(value, exact=exact)
        return None

    def _order(self, number: int, event: dict[str, Any], kind: str) -> Incomplete | None:
        """Two rollouts appended to one trace: a second run_start, or seq going back."""
        if kind == "run_start":
            self.starts += 1
            if self.starts > 1:
                return Incomplete(
                    Gap.INTERLEAVED,
                    self.trace,
                    f" holds two rollouts: a second run_start at line {number}",
                    number,
                )
        seq = event.get("seq")
        if isinstance(seq, int) and not isinstance(seq, bool):
            if self.last_seq is not None and seq <= self.last_seq:
                return Incomplete(
                    Gap.INTERLEAVED,
                    self.trace,
                    f" holds two rollouts: seq goes from {self.last_seq} back to {seq}"
                    f" at line {number}",
                    number,
                )
            self.last_seq = seq
        return None

    def _write(self, event: dict[str, Any], *, exact: bool) -> None:
        # Each event is printed at depth 1 of the array: its own lines, indented once.
        # JSON strings hold no raw newline, so indenting every line break is exact.
        text = _print(event, exact=exact, where=self.trace)
        self.out.write(b"[\n  " if self.kept == 0 else b",\n  ")
        self.out.write(text.replace(b"\n", b"\n  "))
        self.kept += 1

    def finish(self) -> ToolPath:
        if self.kept == 0:
            return ToolPath(text=EMPTY_PATH, events=0, calls=self.calls)
        self.out.write(b"\n]\n")
        # getvalue() hands over the buffer without a copy when nothing else holds it.
        return ToolPath(text=self.out.getvalue(), events=self.kept, calls=self.calls)


def _print(event: dict[str, Any], *, exact: bool, where: str) -> bytes:
    if not exact:
        try:
            return orjson.dumps(event, option=_SORTED)
        except orjson.JSONEncodeError:  # nested deeper than orjson prints
            pass
    try:
        return serialize(event)[:-1]
    except RecursionError:
        raise InputError(f"{where}: an event is nested too deeply") from None


def _derive(
    handle: io.BufferedReader, trace: str, keep: frozenset[str]
) -> tuple[ToolPath | Incomplete, int]:
    """The path (or why there is none) and the number of lines read."""
    reader = _Reader(trace, keep)
    number = 0
    while line := handle.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(line) > MAX_LINE_BYTES:
            long = Incomplete(
                Gap.LINE_TOO_LONG,
                trace,
                f" line {number} is longer than {MAX_LINE_BYTES >> 20} MiB, far past any "
                "event Silo writes (a runaway tool result?); it is not read",
                number,
            )
            return long, number
        if line.endswith(b"\n"):
            body = line[:-1]
        else:
            # Silo ends every event with a newline; a last line without one was cut
            # off mid-write, unless the cut fell exactly before the newline.
            body = line
            if isinstance(_load(body, where=trace), str):
                cut = Incomplete(
                    Gap.TRUNCATED_LINE,
                    trace,
                    f" line {number} is cut off (the rollout was killed mid-write?)",
                    number,
                )
                return cut, number
        problem = reader.add(number, body)
        if problem is not None:
            return problem, number
    return reader.finish(), number


def _load(body: bytes, *, where: str) -> tuple[Any, bool] | str:
    """The line's value and whether it needs the exact printer, or why it is not JSON.

    orjson is taken at its word only when its compact output is the line byte for
    byte (as Silo's JSON.stringify wrote it): then it dropped no duplicate key, kept
    every integer, and its sorted, indented output is canonical form. Everything
    else (huge integers, lone surrogates, odd spacing) goes through the exact parser.
    """
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        pass
    else:
        if compact_is_canonical(value, body):
            return value, False
    if not body.strip():
        return "the line is empty"
    try:
        return parse(body, source=where), True
    except InputError as exc:
        message = exc.message
        prefix = f"{where}: "
        return message[len(prefix) :] if message.startswith(prefix) else message


def read_tool_path(
    run_dir: str | os.PathLike[str], *, events: Iterable[str] = DEFAULT_TRACE_EVENTS
) -> bytes:
    """The canonical bytes of the run's tool path; :class:`IncompleteTraceError` if none."""
    found = derive_tool_path(run_dir, events=events, tool_calls=read_tool_calls(run_dir))
    if isinstance(found, Incomplete):
        raise IncompleteTraceError(found)
    return found.text
