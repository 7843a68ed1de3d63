"""Which artifacts silo-regress derives instead of reading, and from which run file.

The names alone, apart from :mod:`silo_regress.runs.toolpath` (which derives the tool
path from ``trace.jsonl``): every check asks whether an artifact is derived, and
only one that compares a tool path needs the reader, its values and its errors.
"""

from __future__ import annotations

TOOL_EVENTS = "tool-events.json"
TRACE_FILE = "trace.jsonl"


def is_derived(artifact: str) -> bool:
    """True for artifacts computed from other run files instead of read as written."""
    return artifact == TOOL_EVENTS


def source_file(artifact: str) -> str:
    """The run file an artifact is read from: the trace for the tool path."""
    return TRACE_FILE if is_derived(artifact) else artifact
