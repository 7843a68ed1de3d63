"""Task references (``TASK-002``, ``crm-west/TASK-002``) and the names inside them.

Environment names and task ids come from run files written by someone else's
program, so they are untrusted: a name that could climb out of the baselines
directory, hide as a dotfile or carry control characters is refused here, once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from silo_regress.canon.visible import visible
from silo_regress.errors import TaskRefError

_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\]")


def unsafe_reason(name: str) -> str | None:
    """Why ``name`` cannot be a path component of a baseline, or None when it can."""
    if not name:
        return "it is empty"
    if ".." in name:  # DESIGN.md refuses any "..", not only a whole ".." component
        return "it contains '..'"
    if name.startswith("."):
        return "it starts with a dot"
    if _UNSAFE.search(name):
        return "it contains a path separator or a control character"
    if "~" in name:  # baselines/TASK~2.result.json is the task's second accepted variant
        return "it contains '~', which names accepted variants (TASK~2)"
    try:
        encoded = name.encode("utf-8")
    except UnicodeEncodeError:  # a byte that is not UTF-8, as argv decodes it
        return "it is not valid UTF-8"
    if not name.isprintable():  # C1 controls, bidi overrides, zero-width characters
        return "it contains a character that does not print (a control, bidi or zero-width one)"
    if len(encoded) > 200:
        return "it is longer than 200 bytes"
    return None


def printable(name: str) -> str:
    """``name`` safe to print: a name refused for its control characters is still named.

    Characters that are not printable are escaped (``\\x1b``, ``\\u202e``), a byte that
    was not UTF-8 (decoded with ``surrogateescape``) as ``\\xNN``, and a backslash as
    ``\\\\``, so no escape a name holds can pass for one made here.
    """
    return visible(name)


@dataclass(frozen=True, order=True)
class TaskRef:
    """A task, qualified by its environment or not."""

    task_id: str
    environment: str | None = None

    def __str__(self) -> str:
        return f"{self.environment}/{self.task_id}" if self.environment else self.task_id

    @property
    def qualified(self) -> bool:
        return self.environment is not None

    def label_with(self, environment: str | None) -> str:
        """How every report names the task: ``crm-west/TASK-004`` for a qualified ref,
        ``TASK-004 (crm-west)`` for an unqualified one run in ``environment``."""
        if self.environment is not None or environment is None:
            return str(self)
        return f"{self} ({environment})"

    def sort_key(self) -> tuple[str, str]:
        return (self.environment or "", self.task_id)


def parse_ref(text: str) -> TaskRef:
    """Parse a ref given by a user; raise :class:`TaskRefError` for an unsafe one."""
    parts = text.split("/")
    if len(parts) > 2 or text.startswith("/"):
        raise TaskRefError(
            f"task ref {text!r} is not TASK-ID or ENV/TASK-ID "
            "(a baseline can never be written outside the baselines directory)"
        )
    for part in parts:
        reason = unsafe_reason(part)
        if reason is not None:
            raise TaskRefError(f"task ref {text!r} is refused: {reason}")
    if len(parts) == 2:
        return TaskRef(task_id=parts[1], environment=parts[0])
    return TaskRef(task_id=parts[0])
