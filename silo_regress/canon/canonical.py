"""Canonical form v1: parse strictly, serialize as RFC 8785 order with 2-space indent.

Two paths produce the same bytes. The fast path lets orjson parse and print, and is
taken only when orjson's own output proves it saw the input faithfully (see
:func:`canonicalize`). Everything else goes through the exact path: the standard
library parser with hooks that keep integer literals exact and catch duplicate keys,
NaN and Infinity, then a serializer that prints numbers the way ECMAScript does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, NamedTuple, TypeAlias

import orjson

from silo_regress.canon.pointer import Part, PathPattern, format_pointer, walk
from silo_regress.errors import InputError

FORMAT_VERSION = 1
BOM = b"\xef\xbb\xbf"

# orjson prints floats in forms JavaScript never uses ("1.0", "1e+16", "1e-6");
# a round trip through such a literal would be faithful but not canonical.
# Each pattern starts with a literal, which the regex engine scans for in a tight C
# loop; a leading class would make it stop at every digit of a 50 MB file. The digit
# before an exponent is a lookbehind, tried only where the literal is found. "-6"
# rather than "e-6": a 1.8 KB result.json has 150 "e" and 8 "-" (0.35 us less).
# What follows a number token in orjson's output: , newline ] } or the end.
_INTEGRAL = re.compile(rb"\.0(?:[,\n\]}]|\Z)")  # orjson "1.0", JS "1"
_POSITIVE_EXPONENT = re.compile(rb"\+(?<=[0-9]e\+)")  # orjson from 1e16, JS from 1e21
_MICRO = re.compile(rb"-6(?![0-9])(?<=[0-9]e-6)")  # orjson "1e-6", JS "0.000001"
# ``int in bytes`` is one memchr; ``bytes in bytes`` first tries the needle as an int,
# and raising and clearing that TypeError costs 0.15 us, more than a 2 KB memchr.
_PLUS = ord("+")
_PRETTY = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
_SORTED = _PRETTY | orjson.OPT_SORT_KEYS
# Above this size the fast path holds one print of a file at a time (see
# canonicalize); below it, a file already in canonical order is printed once.
_SMALL_FILE = 1 << 20
# Bound once: an attribute lookup on the module is a step of its own.
_loads = orjson.loads
_dumps = orjson.dumps
_tuple_new = tuple.__new__
# What a file cut off inside a literal or number leaves where the parser stops.
# These two are compiled (and cached by re) only when a file is refused.
_PARTIAL_TOKEN = r"t(?:ru?)?|f(?:a(?:ls?)?)?|n(?:ul?)?|-|\.|[eE][+-]?"
_CONFLICT = rb"^(<{7}|={7}|>{7})( |$)"

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}
# A high surrogate followed by a low one is one character to JavaScript (a Python
# str can hold the pair as two code points); only lone surrogates are escaped.
_NEEDS_ESCAPE = re.compile('[\ud800-\udbff][\udc00-\udfff]|["\\\\\x00-\x1f\ud800-\udfff]')


# What json/orjson parse into, and every layer above reads. Recursive, so a value read
# from a file is one of these all the way down. Defined here, where values are made.
JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"


class Document(NamedTuple):
    """A parsed JSON document and its canonical bytes.

    A NamedTuple, not a frozen dataclass: the fast path builds one per file, and
    a dataclass's ``__init__`` (an ``object.__setattr__`` per field) costs about a
    quarter of orjson's whole parse and print of a 0.4 KB file. The fast path builds
    it with ``tuple.__new__`` (in C; NamedTuple's own ``__new__`` is Python code).
    """

    value: JsonValue
    text: bytes


class _Invalid:
    """Placeholder the parser hooks leave where a value cannot be canonical."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


class _Members(dict[str, Any]):
    duplicates: list[str]


class _Hooks:
    def __init__(self) -> None:
        self.trouble = False

    def members(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = _Members(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            obj.duplicates = [k for k, _ in pairs if k in seen or seen.add(k)]  # type: ignore[func-returns-value]
            self.trouble = True
        return obj

    def integer(self, literal: str) -> Any:
        try:
            return int(literal)
        except ValueError:  # beyond Python's limit on int/str conversions
            self.trouble = True
            return _Invalid(f"integer literal of {len(literal.lstrip('-'))} digits is too long")

    def number(self, literal: str) -> Any:
        value = float(literal)
        if value in (float("inf"), float("-inf")):
            self.trouble = True
            return _Invalid(f"number {literal} is out of range for a double")
        return value

    def constant(self, name: str) -> Any:
        self.trouble = True
        return _Invalid(f"{name} is not valid JSON")


def parse(data: bytes, *, source: str) -> Any:
    """Parse JSON exactly, or raise :class:`InputError` naming ``source`` and the path."""
    skipped = len(BOM) if data.startswith(BOM) else 0
    data = data[skipped:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        hint = " (it looks like UTF-16)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        where = _undecodable_at(data)
        raise InputError(
            f"{source}: not valid UTF-8 (byte {exc.start + skipped}){where}{hint}"
        ) from None
    hooks = _Hooks()
    try:
        value = json.loads(
            text,
            object_pairs_hook=hooks.members,
            parse_int=hooks.integer,
            parse_float=hooks.number,
            parse_constant=hooks.constant,
        )
    except json.JSONDecodeError as exc:
        conflict = re.search(_CONFLICT, data, re.MULTILINE)
        if conflict is not None:
            line = data.count(b"\n", 0, conflict.start()) + 1
            raise InputError(
                f"{source}: has git merge-conflict markers (line {line}); "
                "resolve the conflict, then re-record the task"
            ) from None
        if not text.strip():
            raise InputError(f"{source}: is empty") from None
        if _ends_early(text, exc):
            raise InputError(
                f"{source}: ends early at line {exc.lineno} column {exc.colno} (truncated file?)"
            ) from None
        raise InputError(
            f"{source}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise _too_deep(source) from None
    if hooks.trouble:
        try:
            _raise_first_trouble(value, source=source)
        except RecursionError:
            raise _too_deep(source) from None
    return value


def _undecodable_at(data: bytes) -> str:
    """`` at /POINTER`` of the first key or string holding a byte that is not UTF-8.

    docs/canonical-form.md promises the JSON Pointer with every refusal; the byte offset
    alone does not say which value of a 2 MB result.json is broken.
    """
    try:
        value = json.loads(data.decode("utf-8", "surrogateescape"))
    except (ValueError, RecursionError):
        return ""  # the byte is outside any string: the offset is all there is
    try:
        for parts, member in walk(value):
            if parts and isinstance(parts[-1], str) and _escaped(parts[-1]):
                return f" in a key at {_show([_visible(p) for p in parts])}"
            if isinstance(member, str) and _escaped(member):
                return f" at {_show([_visible(p) for p in parts])}"
    except RecursionError:
        return ""
    return ""


def _visible(part: Part) -> Part:
    """A pointer part with each undecodable byte written as ``\\xNN``."""
    if not isinstance(part, str) or not _escaped(part):
        return part
    return "".join(
        f"\\x{ord(ch) - 0xDC00:02x}" if "\udc80" <= ch <= "\udcff" else ch for ch in part
    )


def _escaped(text: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def _ends_early(text: str, exc: json.JSONDecodeError) -> bool:
    """True when the text stops inside a value, as a file cut off mid-write does."""
    if exc.msg.startswith("Unterminated string"):  # only said at the end of the text
        return True
    rest = text[exc.pos :].rstrip()
    return rest == "" or re.fullmatch(_PARTIAL_TOKEN, rest) is not None


def _too_deep(source: str) -> InputError:
    return InputError(f"{source}: arrays and objects are nested too deeply")


def _raise_first_trouble(value: Any, *, source: str) -> None:
    for parts, member in walk(value):
        if isinstance(member, _Invalid):
            raise InputError(f"{source}: {member.reason} at {_show(parts)}")
        if isinstance(member, _Members) and hasattr(member, "duplicates"):
            key = member.duplicates[0]
            raise InputError(f"{source}: duplicate key {key!r} at {_show((*parts, key))}")


def _show(parts: Sequence[Part]) -> str:
    return format_pointer(parts) or "the top level"


def canonicalize(data: bytes, *, source: str) -> Document:
    """Parse ``data`` and return it with its canonical bytes.

    The fast path, inline but for steps 2 and 3 of the proof (on a 0.4 KB file a call
    is a step of its own), returns orjson's sorted print of ``data`` when it is
    provably the canonical form;
    anything else takes :func:`_canonicalize_exact`. orjson is exact where it reads
    at all, except that it keeps the last of two duplicate keys, reads an integer
    beyond 64 bits as a float, prints some floats unlike JavaScript ("1.0", "1e+16",
    "1e-6") and sorts keys by code point, not by UTF-16 code unit. The proof,
    cheapest first:

    1. ``data`` is byte for byte one of orjson's prints of the value it read: the
       sorted print (a file already in canonical order, such as a baseline, needs
       no other) or the insertion-ordered one (Silo's ``JSON.stringify(x, null, 2)``
       is that print). A print holds every member once and each number as orjson
       prints the value it read, so nothing was dropped (a duplicate key would be
       in ``data`` and not in the print), and every integer literal is the exact
       integer (one read as a float prints as a float, never as the literal).
       Input in any other layout (compact, CRLF, 4 spaces, escapes like
       ``\u00e9``, a BOM, trailing data) fails this and takes the exact path.
    2. No number in ``data`` is in a form where orjson and JavaScript differ.
    3. Code point and UTF-16 orders differ only between a character of U+E000 to
       U+FFFF (one code unit, above the surrogates) and one beyond U+FFFF (a
       surrogate pair, U+D800 first); orjson refuses lone surrogates. So the orders
       agree when ``data`` has no such first character: no UTF-8 lead byte 0xEE or
       0xEF (a continuation byte is below 0xC0, and step 1 rules out ``\\u``
       escapes), or, when it has one, when no object's keys hold one.
    Then the sorted print is the value printed by the canonical rules: orjson
    escapes strings as JSON.stringify does (tested against node), and it refuses
    lone surrogates, NaN and Infinity on reading.

    Speed: on a 0.4 KB file orjson's parse and print take about 1.7 us and each
    Python-level step here 0.03-0.2 us, so every step counts; the tests in bytes
    are memchr searches for one byte wherever one can rule a hazard out.
    """
    try:
        value = _loads(data)
        if len(data) <= _SMALL_FILE:
            text = _dumps(value, option=_SORTED)
            proven = text == data or _dumps(value, option=_PRETTY) == data
        else:  # a large file: one print at a time, the sorted one only when needed
            proven = _dumps(value, option=_PRETTY) == data
            text = _dumps(value, option=_SORTED) if proven else b""
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):  # invalid, or > 254 levels
        proven = False
    if proven and _printed_as_canonical(data, value):
        return _tuple_new(Document, (value, text))
    value = text = b""  # not held while the exact path reads a large file again
    return _canonicalize_exact(data, source)


def _canonicalize_exact(data: bytes, source: str) -> Document:
    """The exact path: the standard library's parser with hooks, the ECMAScript printer."""
    value = parse(data, source=source)
    try:
        text = serialize(value)
    except RecursionError:
        raise _too_deep(source) from None
    return Document(value=value, text=text)


def _printed_as_canonical(printed: bytes, value: Any) -> bool:
    """Steps 2 and 3 of the proof (:func:`canonicalize`), once orjson's ``printed`` is
    known to be its faithful print of ``value``: every number in it is as JavaScript
    prints it, and its keys sort alike by code point and by UTF-16 code unit. The one
    statement of both, for the fast path and :func:`compact_is_canonical`.

    Numbers: orjson and JavaScript print a double with the same shortest digits, in
    the same form but for three cases: an integral value ends in ".0" in orjson
    (JavaScript: "1"), orjson uses an exponent from 1e16 (JavaScript: from 1e21) and
    from below 1e-5 (JavaScript: below 1e-6). Below 1e-6 both print "1.5e-7" alike (a
    test compares them over random doubles). So it is enough that no number token ends
    in ".0", none has a positive exponent and none ends in "e-6". A number token ends
    before a comma, a newline, "]", "}" or the end of the text. A hit inside a string
    only sends the file to the exact path, which is never wrong.

    Speed: a regex with a literal prefix scans for its first byte in a tight C loop,
    and on a file of 0.4 KB a Python-level call is most of its cost; so ".0" and "-6"
    are one regex search each (a visit per dot in Python cost 0.3 us a dot; ``b"e-6"
    in`` and ``bytes.find`` took longer than the regex), the plus sign a memchr before
    its regex, and the number and key tests are one call, not two (bench/canonical.py:
    as fast as when canonicalize inlined them both).
    """
    return (
        _INTEGRAL.search(printed) is None
        and (_PLUS not in printed or _POSITIVE_EXPONENT.search(printed) is None)
        and _MICRO.search(printed) is None
        and (printed.isascii() or not _has_high_bmp(printed) or _keys_sort_alike(value))
    )


def _has_high_bmp(data: bytes) -> bool:
    """Whether UTF-8 ``data`` holds a character of U+E000 to U+FFFF (two memchr)."""
    return 0xEE in data or 0xEF in data


def _keys_sort_alike(value: Any) -> bool:
    """True when no object has keys whose code-point and UTF-16 orders could differ."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if any(k and max(k) >= "\ue000" for k in item):
                return False
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


def compact_is_canonical(value: Any, data: bytes) -> bool:
    """True when orjson parsed the compact JSON ``data`` (one JSON.stringify line, no
    whitespace) faithfully, so that its sorted, indented printing of ``value`` is the
    canonical form. The same proof as :func:`canonicalize`'s fast path, on the compact print."""
    try:
        printed = orjson.dumps(value)
    except orjson.JSONEncodeError:
        return False
    return printed == data and _printed_as_canonical(printed, value)


def serialize(value: Any) -> bytes:
    """The canonical bytes of a JSON value (dict, list, str, int, float, bool, None)."""
    out: list[str] = []
    _write(value, out, "\n")
    out.append("\n")
    return "".join(out).encode("utf-8")


def _utf16_key(item: tuple[str, Any]) -> bytes:
    return item[0].encode("utf-16-be", "surrogatepass")


def _write(value: Any, out: list[str], newline: str) -> None:
    if isinstance(value, str):
        out.append(quote(value))
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif value is None:
        out.append("null")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(format_number(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        out.append("{")
        for i, (key, member) in enumerate(sorted(value.items(), key=_utf16_key)):
            out.append(inner if i == 0 else "," + inner)
            out.append(quote(key))
            out.append(": ")
            _write(member, out, inner)
        out.append(newline + "}")
    elif isinstance(value, list):
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        out.append("[")
        for i, member in enumerate(value):
            out.append(inner if i == 0 else "," + inner)
            _write(member, out, inner)
        out.append(newline + "]")
    else:
        raise TypeError(f"not a JSON value: {type(value).__name__}")


def quote(text: str) -> str:
    """A JSON string literal escaped as ``JSON.stringify`` escapes it."""
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if len(char) == 2:  # a surrogate pair: the character it encodes, raw
        return char.encode("utf-16-be", "surrogatepass").decode("utf-16-be")
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"


def format_number(value: float) -> str:
    """Print a double as ECMAScript ``Number.prototype.toString`` does."""
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError("NaN and Infinity have no JSON form")
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + (int(exponent) if exponent else 0)
    significant = digits.lstrip("0")
    point -= len(digits) - len(significant)
    significant = significant.rstrip("0")
    k = len(significant)
    if k <= point <= 21:
        text = significant + "0" * (point - k)
    elif 0 < point <= 21:
        text = significant[:point] + "." + significant[point:]
    elif -6 < point <= 0:
        text = "0." + "0" * -point + significant
    else:
        power = point - 1
        head = significant[0] + ("." + significant[1:] if k > 1 else "")
        text = f"{head}e{'+' if power >= 0 else '-'}{abs(power)}"
    return sign + text


# --- ignored paths ------------------------------------------------------------

IGNORED = "<ignored by silo-regress>"


def apply_ignores(value: Any, *, artifact: str, ignore: Sequence[PathPattern]) -> Any:
    """A copy of ``value`` with every ignored path replaced by a fixed placeholder."""
    rules = [p for p in ignore if p.applies_to(artifact)]
    if not rules:
        return value

    def replace(member: Any, parts: tuple[Part, ...]) -> Any:
        if parts and any(rule.matches(parts) for rule in rules):
            return IGNORED
        if isinstance(member, dict):
            return {k: replace(v, (*parts, k)) for k, v in member.items()}
        if isinstance(member, list):
            return [replace(v, (*parts, i)) for i, v in enumerate(member)]
        return member

    return replace(value, ())
