"""The tool path derived from trace.jsonl: golden files, Node as the oracle, bad traces.

Traces are written by ``node -e`` with ``JSON.stringify(event) + "\\n"`` per event, the
way Silo appends them. Node also computes the expected path itself (filter, delete
``at``/``durationMs``, keys sorted by UTF-16 code units, ``JSON.stringify(v, null, 2)``),
so the Python derivation is checked against an independent implementation.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tracemalloc
from pathlib import Path

import pytest
from support.nodeoracle import CANON

from silo_regress.canon.canonical import canonicalize
from silo_regress.runs.toolpath import (
    EMPTY_PATH,
    Gap,
    Incomplete,
    IncompleteTraceError,
    ToolPath,
    derive_tool_path,
    read_tool_calls,
    read_tool_path,
)

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")
GOLDEN = Path(__file__).parents[1] / "golden" / "toolpath"

# Writes trace.jsonl as Silo appends it, result.json as Silo writes it, and
# expected.json: the path computed in JavaScript.
_WRITER = r"""
const fs = require("fs");
const [dir, keepText] = process.argv.slice(1);
const { events, toolCalls } = (0, eval)("(" + fs.readFileSync(0, "utf8") + ")");
for (const e of events) fs.appendFileSync(dir + "/trace.jsonl", JSON.stringify(e) + "\n");
fs.writeFileSync(dir + "/result.json", JSON.stringify({ passed: true, toolCalls }, null, 2) + "\n");
const keep = JSON.parse(keepText);
const path = events.filter((e) => keep.includes(e.type)).map(({ at, durationMs, ...rest }) => rest);
fs.writeFileSync(dir + "/expected.json", canon(path, "") + "\n");
"""

# Old Silo: seq on every event, odd for a call and even for its result, no callId,
# no durationMs; `input` absent when the agent passed nothing.
OLD_FORMAT = r"""{
  toolCalls: 4,
  events: [
    { seq: 1, type: "tool_call", at: "2026-03-16T09:41:27.452Z", tool: "search_contacts",
      input: { query: "Zoë Fernández", limit: 5 } },
    { seq: 2, type: "tool_result", at: "2026-03-16T09:41:27.460Z", tool: "search_contacts",
      output: { contacts: [{ id: "CON-031", name: "Zoë Fernández", score: 0.875 }] },
      isError: false },
    { seq: 3, type: "tool_call", at: "2026-03-16T09:41:28.001Z", tool: "list_deals" },
    { seq: 4, type: "tool_result", at: "2026-03-16T09:41:28.009Z", tool: "list_deals",
      output: { deals: [{ id: "DEAL-7", amount: 140000, closeDate: "2026-04-30T00:00:00.000Z" }] },
      isError: false },
    { seq: 5, type: "tool_call", at: "2026-03-16T09:41:29.310Z", tool: "delete_dael",
      input: { id: "DEAL-7" } },
    { seq: 6, type: "tool_result", at: "2026-03-16T09:41:29.311Z", tool: "delete_dael",
      output: { code: "tool_not_found", message: "Unknown tool: delete_dael" }, isError: true },
    { seq: 7, type: "tool_call", at: "2026-03-16T09:41:30.020Z", tool: "update_deal",
      input: { id: "DEAL-7", amount: 14000, note: "tab\tquote\" slash/ \u0001 😀" } },
    { seq: 8, type: "tool_result", at: "2026-03-16T09:41:30.031Z", tool: "update_deal",
      output: { id: "DEAL-7", amount: 14000, probability: 1e-7, weight: 1e21, ratio: 0.1 + 0.2 },
      isError: false },
  ],
}"""

# Newer Silo: run_start first, callId pairing, durationMs, then agent_output, run_end and
# verifier_result (none of which is in the default path).
NEW_FORMAT = r"""{
  toolCalls: 2,
  events: [
    { seq: 1, type: "run_start", at: "2026-03-16T11:02:19.884Z", task: "TASK-006",
      config: { maxToolCalls: 20, timeoutMs: 60000 }, tools: ["get_invoice", "update_deal"] },
    { seq: 2, type: "tool_call", at: "2026-03-16T11:02:20.101Z", callId: 1, tool: "get_invoice",
      input: { id: "INV-2026-0042" } },
    { seq: 3, type: "tool_result", at: "2026-03-16T11:02:20.117Z", callId: 1, tool: "get_invoice",
      output: { id: "INV-2026-0042", invoiceDate: "2025-11-03T08:15:00.000Z", total: 18500.5,
        lines: [], meta: {} }, isError: false, durationMs: 16 },
    { seq: 4, type: "tool_call", at: "2026-03-16T11:02:21.000Z", callId: 2, tool: "update_deal",
      input: { id: "DEAL-7", amount: "fourteen" } },
    { seq: 5, type: "tool_result", at: "2026-03-16T11:02:21.002Z", callId: 2, tool: "update_deal",
      output: { code: "invalid_input", message: "Invalid input for update_deal",
        details: { problems: ["amount: expected number, received string"] } },
      isError: true, durationMs: 2 },
    { seq: 6, type: "agent_output", at: "2026-03-16T11:02:22.000Z",
      output: "Could not update DEAL-7." },
    { seq: 7, type: "run_end", at: "2026-03-16T11:02:22.001Z", terminationReason: "completed",
      error: null },
    { seq: 8, type: "verifier_result", at: "2026-03-16T11:02:22.010Z", passed: false, reward: 0.5 },
  ],
}"""

DEFAULT = ["tool_call", "tool_result"]


def node_run(run_dir: Path, events_js: str, keep: list[str] = DEFAULT) -> bytes:
    """Write a run as Silo does; return Node's own tool path of it."""
    assert NODE is not None
    run_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [NODE, "-e", CANON + _WRITER, str(run_dir), json.dumps(keep)],
        input=events_js,
        text=True,
        encoding="utf-8",
        check=True,
        timeout=60,
    )
    expected = (run_dir / "expected.json").read_bytes()
    (run_dir / "expected.json").unlink()
    return expected


def derive(run_dir: Path, keep: list[str] = DEFAULT) -> ToolPath | Incomplete:
    return derive_tool_path(run_dir, events=keep, tool_calls=read_tool_calls(run_dir))


def path_of(run_dir: Path, keep: list[str] = DEFAULT) -> bytes:
    found = derive(run_dir, keep)
    assert isinstance(found, ToolPath), found
    return found.text


def gap_of(run_dir: Path) -> Incomplete:
    found = derive(run_dir)
    assert isinstance(found, Incomplete), found
    return found


def write_run(run_dir: Path, trace: bytes | None, *, tool_calls: int | None = 2) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    if trace is not None:
        (run_dir / "trace.jsonl").write_bytes(trace)
    if tool_calls is not None:
        result = json.dumps({"passed": True, "toolCalls": tool_calls}, indent=2) + "\n"
        (run_dir / "result.json").write_text(result, encoding="utf-8")
    return run_dir


CALL = b'{"seq":1,"type":"tool_call","at":"2026-03-16T10:00:00.000Z","tool":"get","input":{}}\n'
RESULT = b'{"seq":2,"type":"tool_result","at":"2026-03-16T10:00:00.010Z","tool":"get","output":1,"isError":false}\n'  # noqa: E501


# --- both trace formats, golden ----------------------------------------------------


@needs_node
@pytest.mark.parametrize(
    ("name", "events"), [("old-format", OLD_FORMAT), ("new-format", NEW_FORMAT)]
)
def test_golden_path_of_each_trace_format(tmp_path: Path, name: str, events: str) -> None:
    expected = node_run(tmp_path / "run", events)
    text = path_of(tmp_path / "run")
    assert text == expected  # the JavaScript oracle
    assert text == (GOLDEN / f"{name}.tool-events.json").read_bytes()
    assert canonicalize(text, source="x").text == text  # canonical form, idempotent
    assert b'"at"' not in text and b"durationMs" not in text


@needs_node
def test_configured_event_types_join_the_path(tmp_path: Path) -> None:
    keep = ["tool_call", "tool_result", "agent_output", "verifier_result"]
    expected = node_run(tmp_path / "run", NEW_FORMAT, keep)
    text = path_of(tmp_path / "run", keep)
    assert text == expected
    assert b'"agent_output"' in text and b'"verifier_result"' in text
    assert b'"run_end"' not in text  # not configured, so skipped


@needs_node
def test_lone_surrogates_and_odd_keys_match_node(tmp_path: Path) -> None:
    # JSON.stringify escapes lone surrogates; a key above U+E000 sorts before an
    # astral one in UTF-16 order but after it in code points.
    events = r"""{ toolCalls: 1, events: [
      { seq: 1, type: "tool_call", at: "x", tool: "t",
        input: { "\ud83d": "\udc00 lone", "\uffff": 1, "😀": 2, "10": 3, "9": 4, "": -0 } },
      { seq: 2, type: "tool_result", at: "x", tool: "t", output: [1e-6, 1e-7, 123e20, 5e-324],
        isError: false, durationMs: 1 } ] }"""
    expected = node_run(tmp_path / "run", events)
    assert path_of(tmp_path / "run") == expected
    assert b"\\ud83d" in expected


def test_huge_integers_are_kept_exactly(tmp_path: Path) -> None:
    # JavaScript cannot write these, but a hand-edited or foreign trace can.
    big = b"123456789012345678901234567890"
    trace = b'{"seq":1,"type":"tool_call","tool":"t","input":{"n":' + big + b"}}\n"
    text = path_of(write_run(tmp_path / "run", trace, tool_calls=1))
    assert b'"n": ' + big in text


# --- no path needed, and paths of nothing --------------------------------------------


def test_no_trace_and_no_tool_calls_is_the_empty_path(tmp_path: Path) -> None:
    assert path_of(write_run(tmp_path / "run", None, tool_calls=0)) == EMPTY_PATH


def test_empty_trace_and_no_tool_calls_is_the_empty_path(tmp_path: Path) -> None:
    assert path_of(write_run(tmp_path / "run", b"", tool_calls=0)) == EMPTY_PATH


def test_trace_of_only_other_events_is_the_empty_path(tmp_path: Path) -> None:
    trace = b'{"seq":1,"type":"run_start","at":"x"}\n{"seq":2,"type":"run_end","at":"y"}\n'
    assert path_of(write_run(tmp_path / "run", trace, tool_calls=0)) == EMPTY_PATH


def test_unknown_event_types_are_skipped(tmp_path: Path) -> None:
    trace = CALL.replace(b'"seq":1', b'"seq":0') + b'{"seq":1,"type":"llm_token","t":"x"}\n'
    trace += RESULT
    text = path_of(write_run(tmp_path / "run", trace, tool_calls=1))
    assert b"llm_token" not in text and text.count(b'"type"') == 2


def test_a_complete_last_line_without_its_newline_is_kept(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", CALL + RESULT[:-1], tool_calls=1)
    assert path_of(run) == path_of(write_run(tmp_path / "other", CALL + RESULT, tool_calls=1))


# --- incomplete runs: each with its reason --------------------------------------------


def test_no_trace_while_tools_were_called(tmp_path: Path) -> None:
    gap = gap_of(write_run(tmp_path / "run", None, tool_calls=3))
    assert gap.gap is Gap.NO_TRACE
    assert gap.describe("runs/r/trace.jsonl") == (
        "runs/r/trace.jsonl is missing, but result.json counts 3 tool calls"
    )


def test_no_trace_and_no_result(tmp_path: Path) -> None:
    assert gap_of(write_run(tmp_path / "run", None, tool_calls=None)).gap is Gap.NO_RESULT


def test_empty_trace_while_tools_were_called(tmp_path: Path) -> None:
    gap = gap_of(write_run(tmp_path / "run", b"", tool_calls=1))
    assert gap.gap is Gap.EMPTY_TRACE
    assert "holds no events, but result.json counts 1 tool call" in gap.describe()


def test_truncated_last_line(tmp_path: Path) -> None:
    gap = gap_of(write_run(tmp_path / "run", CALL + RESULT[:40]))
    assert (gap.gap, gap.line) == (Gap.TRUNCATED_LINE, 2)
    assert gap.describe().endswith(
        "trace.jsonl line 2 is cut off (the rollout was killed mid-write?)"
    )


@pytest.mark.parametrize(
    ("line", "gap", "words"),
    [
        (b"not json\n", Gap.NOT_JSON, "line 2 is not JSON: invalid JSON"),
        (b"\n", Gap.NOT_JSON, "line 2 is not JSON: the line is empty"),
        (b'{"seq":2,"seq":3,"type":"x"}\n', Gap.NOT_JSON, "duplicate key 'seq'"),
        (b'{"seq":2,"type":"x","s":"\xff"}\n', Gap.NOT_JSON, "not valid UTF-8"),
        (b'{"seq":2,"type":"x","n":NaN}\n', Gap.NOT_JSON, "NaN is not valid JSON"),
        (b"[1,2]\n", Gap.NOT_OBJECT, "line 2 is not a JSON object"),
        (b'{"seq":2,"tool":"t"}\n', Gap.NOT_EVENT, 'line 2 has no string "type"'),
    ],
)
def test_bad_lines_name_the_line(tmp_path: Path, line: bytes, gap: Gap, words: str) -> None:
    found = gap_of(write_run(tmp_path / "run", CALL + line + RESULT.replace(b":2,", b":3,")))
    assert found.gap is gap and found.line == 2
    assert words in found.describe()


def test_interleaved_rollouts_by_seq_restart(tmp_path: Path) -> None:
    # Old Silo: two rollouts of one process and second append to one trace.
    gap = gap_of(write_run(tmp_path / "run", CALL + RESULT + CALL + RESULT, tool_calls=2))
    assert (gap.gap, gap.line) == (Gap.INTERLEAVED, 3)
    assert "seq goes from 2 back to 1 at line 3" in gap.describe()


def test_interleaved_rollouts_by_second_run_start(tmp_path: Path) -> None:
    start = b'{"type":"run_start","task":"T"}\n'
    gap = gap_of(write_run(tmp_path / "run", start + start, tool_calls=0))
    assert (gap.gap, gap.line) == (Gap.INTERLEAVED, 2)
    assert "a second run_start at line 2" in gap.describe()


def test_fewer_calls_in_the_trace_than_result_counts(tmp_path: Path) -> None:
    gap = gap_of(write_run(tmp_path / "run", CALL + RESULT, tool_calls=2))
    assert gap.gap is Gap.CALLS_MISSING
    assert "holds 1 tool call, but result.json counts 2" in gap.describe()


def test_read_tool_path_raises_the_reason(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", CALL + b"{", tool_calls=1)
    with pytest.raises(IncompleteTraceError) as caught:
        read_tool_path(run)
    assert caught.value.incomplete.gap is Gap.TRUNCATED_LINE
    assert str(run / "trace.jsonl") in caught.value.message


def test_a_trace_that_is_a_directory_is_incomplete(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", None)
    (run / "trace.jsonl").mkdir()
    gap = gap_of(run)
    assert gap.gap is Gap.UNREADABLE
    assert gap.describe("t") == "t is a directory, not a regular file"


def test_a_trace_that_is_a_fifo_is_incomplete_without_blocking(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", None)
    os.mkfifo(run / "trace.jsonl")
    assert gap_of(run).describe("t") == "t is a FIFO, not a regular file"


# --- streaming ----------------------------------------------------------------------


def test_a_large_trace_is_streamed_not_loaded(tmp_path: Path) -> None:
    # 20 MB of agent_output events around two tool events: reading the whole trace (or
    # parsing it into objects) would take tens of MB; streaming holds a line at a time.
    filler = b'{"seq":%d,"type":"agent_output","output":"' + b"x" * 2000 + b'"}\n'
    run = tmp_path / "run"
    run.mkdir()
    with open(run / "trace.jsonl", "wb") as out:
        out.write(CALL)
        out.writelines(filler % seq for seq in range(2, 10_002))
        out.write(RESULT.replace(b'"seq":2', b'"seq":10002'))
    write_run(run, None, tool_calls=1)
    assert (run / "trace.jsonl").stat().st_size > 20_000_000
    tracemalloc.start()
    try:
        found = derive(run)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(found, ToolPath) and found.events == 2
    assert peak < 1_000_000, f"peak {peak} bytes"
