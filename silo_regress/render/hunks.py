"""Line diffs of two canonical files that stay fast when the files are huge.

``difflib`` is quadratic in the worst case and slow on millions of lines, while a
check of a 50 MB artifact usually changes a few lines in the middle. So the common
prefix and suffix are skipped at C speed on the raw bytes, and only the region in
between (at most :data:`WINDOW` lines of each side) goes through difflib. Reports
cap what they print anyway; :class:`LineDiff` says exactly which lines were left out,
and each printed line shows at most ``LINE_CAP`` characters (canon/visible.py).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from silo_regress.canon.visible import capped

CONTEXT = 3
WINDOW = 4000  # lines of each side handed to difflib; beyond it the diff is cut
_CHUNK = 1 << 20

Opcode = tuple[str, int, int, int, int]


@dataclass(frozen=True)
class Cut:
    """Lines (1-based, inclusive) of each file that were not compared."""

    before_first: int
    before_last: int
    after_first: int
    after_last: int

    @property
    def before_count(self) -> int:
        return max(self.before_last - self.before_first + 1, 0)

    @property
    def after_count(self) -> int:
        return max(self.after_last - self.after_first + 1, 0)


@dataclass(frozen=True)
class LineDiff:
    """The changed region of two files: its lines, their offsets and the opcodes.

    ``before_start``/``after_start`` are the 0-based line numbers of the first
    line in ``before``/``after``; opcodes index into those lists.
    """

    before: list[str]
    after: list[str]
    before_start: int
    after_start: int
    groups: list[list[Opcode]]
    cut: Cut | None = None

    @property
    def same(self) -> bool:
        return not self.groups and self.cut is None


def common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix of ``a`` and ``b``."""
    limit = min(len(a), len(b))
    start = 0
    while start < limit and a[start : start + _CHUNK] == b[start : start + _CHUNK]:
        start += _CHUNK
    low, high = start, min(start + _CHUNK, limit)
    while low < high:  # invariant: a[:low] == b[:low]
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return min(low, limit)


def common_suffix(a: bytes, b: bytes, *, limit: int) -> int:
    """Length of the longest common suffix of ``a`` and ``b``, at most ``limit``."""
    size_a, size_b = len(a), len(b)
    done = 0
    while done < limit:
        step = min(_CHUNK, limit - done)
        if a[size_a - done - step : size_a - done] == b[size_b - done - step : size_b - done]:
            done += step
            continue
        low, high = 0, step
        while low < high:  # the last ``low`` bytes of this chunk match
            middle = (low + high + 1) // 2
            if (
                a[size_a - done - middle : size_a - done]
                == b[size_b - done - middle : size_b - done]
            ):
                low = middle
            else:
                high = middle - 1
        return done + low
    return limit


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", "replace").split("\n")[:-1] if data else []


def _context_before(data: bytes, end: int, count: int) -> bytes:
    """Up to ``count`` whole lines of ``data`` ending at ``end`` (a line start)."""
    start = end
    for _ in range(count):
        if start == 0:
            break
        start = data.rfind(b"\n", 0, start - 1) + 1
    return data[start:end]


def _context_after(data: bytes, start: int, count: int) -> bytes:
    end = start
    for _ in range(count):
        if end >= len(data):
            break
        newline = data.find(b"\n", end)
        end = len(data) if newline < 0 else newline + 1
    return data[start:end]


def line_diff(before: bytes, after: bytes, *, window: int = WINDOW) -> LineDiff:
    """The grouped opcodes of a line diff, computed around the changed region only."""
    if not before.endswith(b"\n") and before:
        before += b"\n"
    if not after.endswith(b"\n") and after:
        after += b"\n"
    if before == after:
        return LineDiff([], [], 0, 0, [])
    prefix = common_prefix(before, after)
    head = before.rfind(b"\n", 0, prefix) + 1  # start of the first differing line
    head_lines = before.count(b"\n", 0, head)
    tail = common_suffix(before, after, limit=min(len(before), len(after)) - head)
    tail_a, tail_b = len(before) - tail, len(after) - tail
    if tail and not (before[tail_a - 1 : tail_a] == b"\n" == after[tail_b - 1 : tail_b]):
        # Start the suffix at a line start of both files: past the first newline
        # inside it, where both sides hold the same bytes.
        newline = before.find(b"\n", tail_a)
        step = (len(before) if newline < 0 else newline + 1) - tail_a
        tail_a, tail_b = tail_a + step, tail_b + step
    count_a = before.count(b"\n", head, tail_a)
    count_b = after.count(b"\n", head, tail_b)
    cut = None
    if count_a > window or count_b > window:
        cut = Cut(
            before_first=head_lines + min(window, count_a) + 1,
            before_last=head_lines + count_a,
            after_first=head_lines + min(window, count_b) + 1,
            after_last=head_lines + count_b,
        )
        # Decode only the lines difflib will see, not the whole middle.
        middle_a = _lines(_context_after(before, head, min(window, count_a)))
        middle_b = _lines(_context_after(after, head, min(window, count_b)))
        trailing_a: list[str] = []
        trailing_b: list[str] = []
    else:
        middle_a = _lines(before[head:tail_a])
        middle_b = _lines(after[head:tail_b])
        trailing_a = _lines(_context_after(before, tail_a, CONTEXT))
        trailing_b = _lines(_context_after(after, tail_b, CONTEXT))
    leading = _lines(_context_before(before, head, CONTEXT))
    a = leading + middle_a + trailing_a
    b = leading + middle_b + trailing_b
    matcher = difflib.SequenceMatcher(None, a, b)
    groups = list(matcher.get_grouped_opcodes(CONTEXT))
    start = head_lines - len(leading)
    return LineDiff(a, b, start, start, groups, cut)


def _range(start: int, length: int) -> str:
    """A unified diff range, 1-based, as difflib prints it."""
    beginning = start + 1
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


def unified_lines(diff: LineDiff, *, before_name: str, after_name: str) -> Iterator[str]:
    """The diff in unified format (without the cut note)."""
    if not diff.groups:
        return
    yield f"--- {before_name}"
    yield f"+++ {after_name}"
    for group in diff.groups:
        first, last = group[0], group[-1]
        before_range = _range(diff.before_start + first[1], last[2] - first[1])
        after_range = _range(diff.after_start + first[3], last[4] - first[3])
        yield f"@@ -{before_range} +{after_range} @@"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for line in diff.before[i1:i2]:
                    yield " " + capped(line)
                continue
            if tag in {"replace", "delete"}:
                for line in diff.before[i1:i2]:
                    yield "-" + capped(line)
            if tag in {"replace", "insert"}:
                for line in diff.after[j1:j2]:
                    yield "+" + capped(line)


def cut_note(cut: Cut, *, before_name: str, after_name: str) -> str:
    return (
        f"... diff cut short: lines {cut.before_first}-{cut.before_last} of {before_name} "
        f"({cut.before_count} lines) and {cut.after_first}-{cut.after_last} of {after_name} "
        f"({cut.after_count} lines) were not compared here; the full files are "
        f"{before_name} and {after_name}"
    )


def unified_diff(
    before: bytes, after: bytes, *, before_name: str, after_name: str, cap: int
) -> list[str]:
    """A unified diff of two canonical files, at most ``cap`` lines plus one note."""
    diff = line_diff(before, after)
    lines: list[str] = []
    total = 0
    for line in unified_lines(diff, before_name=before_name, after_name=after_name):
        total += 1
        if not cap or total <= cap:
            lines.append(line)
    if cap and total > cap:
        lines.append(
            f"... {total - cap} more diff lines not shown; "
            f"the full files are {before_name} and {after_name}"
        )
    if diff.cut is not None:
        lines.append(cut_note(diff.cut, before_name=before_name, after_name=after_name))
    return lines


@dataclass(frozen=True)
class Row:
    """One row of a side-by-side diff; a missing side has number None."""

    tag: str  # equal, replace, delete, insert, gap
    before_number: int | None
    before: str
    after_number: int | None
    after: str


def _aligned(
    diff: LineDiff, tag: str, i1: int, i2: int, j1: int, j2: int
) -> Iterator[tuple[int | None, int | None]]:
    """Rows of one opcode: a replaced line beside the line that replaced it
    (:func:`paired`), the lines between them side by side by position."""
    anchors = paired(diff.before[i1:i2], diff.after[j1:j2]) if tag == "replace" else []
    i, j = i1, j1
    for a, b in [*((i1 + a, j1 + b) for a, b in anchors), (i2, j2)]:
        left, right = range(i, a), range(j, b)
        for k in range(max(len(left), len(right))):
            yield (left[k] if k < len(left) else None, right[k] if k < len(right) else None)
        if a < i2 and b < j2:
            yield a, b
        i, j = a + 1, b + 1


def side_by_side(diff: LineDiff, *, cap: int) -> tuple[list[Row], int]:
    """Rows of a side-by-side diff and how many rows past ``cap`` were left out."""
    rows: list[Row] = []
    for n, group in enumerate(diff.groups):
        if n:
            rows.append(Row("gap", None, "", None, ""))
        for tag, i1, i2, j1, j2 in group:
            for i, j in _aligned(diff, tag, i1, i2, j1, j2):
                rows.append(
                    Row(
                        tag,
                        None if i is None else diff.before_start + i + 1,
                        "" if i is None else capped(diff.before[i]),
                        None if j is None else diff.after_start + j + 1,
                        "" if j is None else capped(diff.after[j]),
                    )
                )
    if cap and len(rows) > cap:
        return rows[:cap], len(rows) - cap
    return rows, 0


# --- within a changed line ------------------------------------------------------------

# Words, runs of spaces, and single punctuation marks: `"reward": 1,` against
# `"reward": 0.33,` marks `1` and `0.33`, not the whole line.
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
INTRALINE_LIMIT = 2000  # characters per line; a longer line is marked whole
INTRALINE_RATIO = 0.4  # below this the lines share too little for a word diff to help
MIDDLE_TOKENS = 64  # words a side handed to difflib (quadratic), between the common head and tail


@dataclass(frozen=True)
class Span:
    """A piece of one side of a changed line; ``changed`` marks what the other side lacks."""

    text: str
    changed: bool


def intraline(before: str, after: str) -> tuple[tuple[Span, ...], tuple[Span, ...]] | None:
    """The changed words of a line and the line that replaced it, each side as spans.

    The common leading and trailing words are set aside first (a value changes in
    place), and only the middle goes through difflib, at most :data:`MIDDLE_TOKENS`
    words a side; a longer middle is marked whole. None when the lines are too long
    or share too little: a whole-line mark is then the truer picture.
    """
    if len(before) > INTRALINE_LIMIT or len(after) > INTRALINE_LIMIT:
        return None
    a, b = _TOKEN.findall(before), _TOKEN.findall(after)
    head = 0
    while head < len(a) and head < len(b) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < len(a) - head and tail < len(b) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    middle_a, middle_b = a[head : len(a) - tail], b[head : len(b) - tail]
    left: list[Span] = []
    right: list[Span] = []
    _add(left, "".join(a[:head]), changed=False)
    _add(right, "".join(b[:head]), changed=False)
    shared = 2 * (_words(a[:head]) + _words(a[len(a) - tail :]))
    if len(middle_a) > MIDDLE_TOKENS or len(middle_b) > MIDDLE_TOKENS:
        _add(left, "".join(middle_a), changed=True)
        _add(right, "".join(middle_b), changed=True)
    else:
        matcher = difflib.SequenceMatcher(None, middle_a, middle_b, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            same = tag == "equal"
            shared += 2 * _words(middle_a[i1:i2]) if same else 0
            _add(left, "".join(middle_a[i1:i2]), changed=not same)
            _add(right, "".join(middle_b[j1:j2]), changed=not same)
    _add(left, "".join(a[len(a) - tail :]), changed=False)
    _add(right, "".join(b[len(b) - tail :]), changed=False)
    if shared < INTRALINE_RATIO * (_words(a) + _words(b)):
        return None
    return _joined(left), _joined(right)


def _words(tokens: Sequence[str]) -> int:
    """Tokens that are not spaces: two lines of different words share every space."""
    return sum(1 for token in tokens if not token.isspace())


def _joined(spans: list[Span]) -> tuple[Span, ...]:
    """Changed words separated only by spaces read as one change: ``pricing call``."""
    out: list[Span] = []
    for n, span in enumerate(spans):
        inner = 0 < n < len(spans) - 1 and spans[n - 1].changed and spans[n + 1].changed
        _add(out, span.text, changed=span.changed or (inner and span.text.isspace()))
    return tuple(out)


def _add(spans: list[Span], text: str, *, changed: bool) -> None:
    if not text:
        return
    if spans and spans[-1].changed == changed:
        spans[-1] = Span(spans[-1].text + text, changed)
    else:
        spans.append(Span(text, changed))


def paired(removed: Sequence[str], added: Sequence[str]) -> list[tuple[int, int]]:
    """Which removed line each added line replaced, in order.

    Lines of canonical JSON that name a member pair by that name and indent
    (``"reward": 1,`` with ``"reward": 0.33,``), so a list that grew in between
    does not shift every later pair; other lines pair by position when both
    sides have as many.
    """
    keys_a, keys_b = [_member(line) for line in removed], [_member(line) for line in added]
    if len(removed) == len(added) and all(a == b for a, b in zip(keys_a, keys_b, strict=True)):
        return [(k, k) for k in range(len(removed))]
    pairs: list[tuple[int, int]] = []
    start = 0
    for i, key in enumerate(keys_a):
        if key is None:
            continue
        for j in range(start, len(added)):
            if keys_b[j] == key:
                pairs.append((i, j))
                start = j + 1
                break
    return pairs


_MEMBER = re.compile(r'\s*"(?:[^"\\]|\\.)*":')


def _member(line: str) -> str | None:
    """A JSON member line's indent and name, ``  "reward":``; None for any other line."""
    found = _MEMBER.match(line)
    return found.group(0) if found else None
