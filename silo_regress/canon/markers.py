"""Git's conflict markers in a text file: each side read back out, and blocks written.

A file git left conflicted holds the lines both sides agree on, and blocks of
``<<<<<<<`` ours ``|||||||`` base (diff3 style only) ``=======`` theirs ``>>>>>>>``.
Reading every block's ours part (and theirs, and base) with the common lines gives
each side whole again, which is what ``fmt --resolve`` merges.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass

from silo_regress.errors import InputError

OURS_MARK = b"<<<<<<<"
BASE_MARK = b"|||||||"
SPLIT_MARK = b"======="
THEIRS_MARK = b">>>>>>>"
# A marker is seven characters at the start of a line, then a space (and a label) or the
# end of the line; "========" (a Markdown rule) is not one.
_MARKER = re.compile(rb"^(<{7}|\|{7}|={7}|>{7})(?:[ \r\n]|$)", re.MULTILINE)


class _Part(enum.Enum):
    COMMON = "common"
    OURS = "ours"
    BASE = "base"
    THEIRS = "theirs"


@dataclass(frozen=True)
class Sides:
    """The texts a conflicted file joins: ours, theirs and (diff3 style) the base."""

    ours: bytes
    theirs: bytes
    base: bytes | None  # None unless every block has a ``|||||||`` section
    blocks: int
    # The lines (0-based, of each side's text) that came from inside a block: that side's
    # own lines. The lines outside every block may be either side's, taken by git's line
    # merge.
    ours_marked: frozenset[int] = frozenset()
    theirs_marked: frozenset[int] = frozenset()
    base_marked: frozenset[int] = frozenset()


def has_markers(data: bytes) -> bool:
    """Whether ``data`` holds a line that starts a conflict block."""
    return any(m.group(1) == OURS_MARK for m in _MARKER.finditer(data))


def split_sides(data: bytes, *, source: str) -> Sides | None:
    """The sides of a conflicted file, or None when it holds no conflict block.

    Raises :class:`InputError` naming ``source`` and the line when the markers do not
    nest as git writes them (a block left half-edited by hand)."""
    if not has_markers(data):
        return None
    ours: list[bytes] = []
    theirs: list[bytes] = []
    base: list[bytes] = []
    ours_marked: set[int] = set()
    theirs_marked: set[int] = set()
    base_marked: set[int] = set()
    part = _Part.COMMON
    blocks = with_base = 0
    for number, line in enumerate(data.splitlines(keepends=True), start=1):
        mark = _MARKER.match(line)
        kind = mark.group(1) if mark else None
        if kind is None:
            for text, marked, own in (
                (ours, ours_marked, _Part.OURS),
                (theirs, theirs_marked, _Part.THEIRS),
                (base, base_marked, _Part.BASE),
            ):
                if part is own:
                    marked.add(len(text))
                if part in (_Part.COMMON, own):
                    text.append(line)
            continue
        expected = {
            _Part.COMMON: (OURS_MARK,),
            _Part.OURS: (BASE_MARK, SPLIT_MARK),
            _Part.BASE: (SPLIT_MARK,),
            _Part.THEIRS: (THEIRS_MARK,),
        }[part]
        if kind not in expected:
            raise InputError(
                f"{source}: conflict marker {kind.decode()} at line {number} is out of place "
                f"(expected {' or '.join(e.decode() for e in expected)}); fix the markers by hand"
            )
        if kind == OURS_MARK:
            part, blocks = _Part.OURS, blocks + 1
        elif kind == BASE_MARK:
            part, with_base = _Part.BASE, with_base + 1
        elif kind == SPLIT_MARK:
            part = _Part.THEIRS
        else:
            part = _Part.COMMON
    if part is not _Part.COMMON:
        raise InputError(f"{source}: a conflict block is not closed (no {THEIRS_MARK.decode()})")
    return Sides(
        ours=b"".join(ours),
        theirs=b"".join(theirs),
        base=b"".join(base) if with_base == blocks else None,
        blocks=blocks,
        ours_marked=frozenset(ours_marked),
        theirs_marked=frozenset(theirs_marked),
        base_marked=frozenset(base_marked),
    )


def block(ours: Sequence[str], theirs: Sequence[str], *, labels: tuple[str, str]) -> list[str]:
    """The lines of one conflict block (each line without its newline)."""
    return [
        f"{OURS_MARK.decode()} {labels[0]}",
        *ours,
        SPLIT_MARK.decode(),
        *theirs,
        f"{THEIRS_MARK.decode()} {labels[1]}",
    ]


def conflict_text(ours: bytes, theirs: bytes, *, labels: tuple[str, str]) -> bytes:
    """One block around the lines where ``ours`` and ``theirs`` differ, for a file that
    must stay conflicted whole (a tally, a side that is not JSON)."""
    a = ours.splitlines(keepends=True)
    b = theirs.splitlines(keepends=True)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    middle = [
        f"{OURS_MARK.decode()} {labels[0]}\n".encode(),
        *[_ended(line) for line in a[head : len(a) - tail]],
        SPLIT_MARK + b"\n",
        *[_ended(line) for line in b[head : len(b) - tail]],
        f"{THEIRS_MARK.decode()} {labels[1]}\n".encode(),
    ]
    return b"".join([*a[:head], *middle, *a[len(a) - tail :]])


def _ended(line: bytes) -> bytes:
    return line if line.endswith(b"\n") else line + b"\n"
