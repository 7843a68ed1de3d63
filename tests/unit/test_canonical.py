"""Tests for canonical form v1 (silo_regress.canon.canonical).

The oracle for the canonical bytes is Node itself: the canonical form is defined as
``JSON.stringify`` with keys sorted by UTF-16 code units, 2-space indent and one
trailing newline, so each Node test sends a batch of JSON texts to one ``node``
process running a tiny canonical serializer written in JavaScript (see ``_ORACLE``),
and compares its output with ours. Tests that need Node skip when it is absent.
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import re
import shutil
import subprocess
from decimal import Decimal
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from support.fastpath import fast_path
from support.nodeoracle import CANON

from silo_regress.canon import canonical
from silo_regress.canon.canonical import (
    FORMAT_VERSION,
    IGNORED,
    Document,
    apply_ignores,
    canonicalize,
    format_number,
    parse,
    quote,
    serialize,
)
from silo_regress.canon.pointer import PathPattern
from silo_regress.canon.volatile import might_be_volatile
from silo_regress.errors import InputError

SOURCE = "runs/run_x/result.json"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")
SETTINGS = settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# --- helpers -----------------------------------------------------------------

# For each JSON text: JSON.parse it, then print it three ways. `canon` iterates
# Object.keys(o).sort() (UTF-16 code unit order) itself, so JavaScript's habit of
# putting integer-like keys ("9", "10") first in objects does not matter.
_ORACLE = r"""
const jcs = (v) => {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return "[" + v.map(jcs).join(",") + "]";
  return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + jcs(v[k]))
    .join(",") + "}";
};
const texts = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(texts.map((t) => {
  const v = JSON.parse(t);
  return { pretty: JSON.stringify(v, null, 2) + "\n", canon: canon(v, "") + "\n", jcs: jcs(v) };
})));
"""


def node_oracle(texts: list[str]) -> list[dict[str, bytes]]:
    """One node process for the whole batch: pretty (Silo's own writer), canon, jcs."""
    assert NODE is not None
    done = subprocess.run(
        [NODE, "-e", CANON + _ORACLE],
        input=json.dumps(texts),  # ASCII: lone surrogates travel as \\uXXXX escapes
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
        timeout=60,
    )
    out = json.loads(done.stdout)
    assert len(out) == len(texts)
    return [{k: v.encode("utf-8") for k, v in item.items()} for item in out]


def strip_ws(text: bytes) -> bytes:
    """Remove JSON whitespace outside string literals."""
    out = bytearray()
    in_string = escaped = False
    for byte in text:
        if in_string:
            out.append(byte)
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
            out.append(byte)
        elif byte not in b" \t\r\n":
            out.append(byte)
    return bytes(out)


def ref_number(x: float) -> str:
    """ECMAScript Number::toString, written from the spec independently of the module."""
    if x == 0:
        return "0"
    if x < 0:
        return "-" + ref_number(-x)
    _, digit_tuple, exp = Decimal(repr(x)).normalize().as_tuple()
    assert isinstance(exp, int)
    s = "".join(map(str, digit_tuple))
    k, n = len(s), len(s) + exp
    if k <= n <= 21:
        return s + "0" * (n - k)
    if 0 < n <= 21:
        return s[:n] + "." + s[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + s
    e = n - 1
    return (s[0] + ("." + s[1:] if k > 1 else "")) + "e" + ("+" if e >= 0 else "-") + str(abs(e))


_SHORT = {
    0x22: '\\"',
    0x5C: "\\\\",
    0x08: "\\b",
    0x09: "\\t",
    0x0A: "\\n",
    0x0C: "\\f",
    0x0D: "\\r",
}


def ref_string(text: str) -> str:
    """JSON.stringify for a string, working on UTF-16 code units as JavaScript does."""
    raw = text.encode("utf-16-be", "surrogatepass")
    units = [int.from_bytes(raw[i : i + 2], "big") for i in range(0, len(raw), 2)]
    out = ['"']
    i = 0
    while i < len(units):
        u = units[i]
        if 0xD800 <= u <= 0xDBFF and i + 1 < len(units) and 0xDC00 <= units[i + 1] <= 0xDFFF:
            out.append(chr(0x10000 + ((u - 0xD800) << 10) + (units[i + 1] - 0xDC00)))
            i += 2
            continue
        if u in _SHORT:
            out.append(_SHORT[u])
        elif u < 0x20 or 0xD800 <= u <= 0xDFFF:
            out.append(f"\\u{u:04x}")
        else:
            out.append(chr(u))
        i += 1
    out.append('"')
    return "".join(out)


def _utf16_units(key: str) -> list[int]:
    raw = key.encode("utf-16-be", "surrogatepass")
    return [int.from_bytes(raw[i : i + 2], "big") for i in range(0, len(raw), 2)]


def ref_jcs(value: Any) -> str:
    """RFC 8785 bytes (as str) for a Python JSON value."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return ref_number(value)
    if isinstance(value, str):
        return ref_string(value)
    if isinstance(value, list):
        return "[" + ",".join(ref_jcs(v) for v in value) + "]"
    keys = sorted(value, key=_utf16_units)
    return "{" + ",".join(ref_string(k) + ":" + ref_jcs(value[k]) for k in keys) + "}"


def js_pretty(value: Any, ind: str = "") -> str:
    """JSON.stringify(value, null, 2) in insertion order (the shape Silo writes)."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = ind + "  "
        items = [f"{inner}{ref_string(k)}: {js_pretty(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + ind + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        inner = ind + "  "
        return "[\n" + ",\n".join(inner + js_pretty(v, inner) for v in value) + "\n" + ind + "]"
    return ref_jcs(value)


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values, where numbers are equal when they are the same double.

    A double such as 3.622979269366257e16 prints as "36229792693662570", which reads
    back as that exact integer: the bytes are stable, the Python type is not.
    """
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    numbers = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if (
        isinstance(a, numbers)
        and isinstance(b, numbers)
        and (isinstance(a, float) or isinstance(b, float))
    ):
        return float(a) == float(b)
    return type(a) is type(b) and a == b


def canon(data: bytes | str) -> bytes:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return canonicalize(data, source=SOURCE).text


def exact(data: bytes) -> bytes:
    return serialize(parse(data, source=SOURCE))


def input_error(data: bytes | str, source: str = SOURCE) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    with pytest.raises(InputError) as info:
        canonicalize(data, source=source)
    message = info.value.message
    assert message.startswith(source + ": "), message
    return message


# --- strategies -------------------------------------------------------------------

_TRICKY_CHARS = st.sampled_from(
    [
        *"\x00\x01\x08\t\n\x0b\x0c\r\x1b\x1f\x7f",
        '"',
        "\\",
        "/",
        "\u2028",
        "\u2029",
        "é",
        "\ud800",
        "\udbff",
        "\udc00",
        "\udfff",
        "\ue000",
        "\uffff",
        "\U0001f600",
        "\U0010ffff",
        "0",
        "e",
        ".",
    ]
)
json_text = st.text(alphabet=st.one_of(st.characters(), _TRICKY_CHARS), max_size=12)
json_floats = st.floats(allow_nan=False, allow_infinity=False)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**64), max_value=2**64),
    json_floats,
    json_text,
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(json_text, children, max_size=4),
    ),
    max_leaves=20,
)
# I-JSON: integers a double holds exactly, so JavaScript prints them as we do.
ijson_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**53), max_value=2**53),
        json_floats,
        json_text,
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(json_text, children, max_size=4),
    ),
    max_leaves=20,
)


def to_json_text(value: Any, *, indent: int | None = None, ascii_only: bool = True) -> bytes:
    """Some non-canonical JSON text for ``value`` (Python's json module)."""
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates cannot be raw UTF-8
        return json.dumps(value, indent=indent).encode("utf-8")


# --- 1. differential tests against Node ---------------------------------------

_CONTROLS = "".join(f"\\u{c:04x}" for c in range(0x20))
DIFFERENTIAL_CASES: list[str] = [
    # numbers
    repr(0.1 + 0.2),
    "1e21",
    "1e+21",
    "1E21",
    "1e-7",
    "0.0000001",
    "0.000015",
    "5e-324",
    "2.2250738585072014e-308",
    "1.7976931348623157e308",
    str(2**53),
    str(-(2**53)),
    "-0",
    "-0.0",
    "0.0",
    "0e10",
    "1e16",
    "10000000000000000",
    "1e20",
    "123456789012345680000",
    "1.2345678901234568e+20",
    "123e-20",
    "1.5e300",
    "-1.5e300",
    "0.000001",
    "1e-6",
    "0.0000015",
    "1.0",
    "100.0",
    "100",
    "1.50",
    "4.35",
    "0.1",
    "-0.5",
    "123456789.123456789",
    "0.1000000000000000055511151231257827",
    "1e-400",
    "9007199254740993.0",
    "[1.0, 2.50, -3e0, 1e2, 12.5e-1]",
    # strings
    '"\u2028\u2029"',
    '"\\u2028\\u2029"',
    f'"{_CONTROLS}"',
    '"\\b\\t\\n\\f\\r"',
    '"\x7f"',
    '"\\u007f"',
    '"😀 é ü 中文"',
    '"\\ud83d\\ude00 \\u00e9"',
    '"\\ud800"',
    '"\\udfff"',
    '"\\udc00\\ud800"',
    '"\\ud83d\\ud83d\\ude00x\\ude00"',
    '"\\"quoted\\" back\\\\slash"',
    '"/ and \\/ slash"',
    '""',
    '"\\u0041\\u00DF\\uABCD"',
    # keys
    '{"\\ue000": 1, "😀": 2, "\\uffff": 3, "\\ud800": 4, "z": 5, "é": 6}',
    '{"\\uff61": "a", "\\ud83d\\ude00": "b", "\\ufb01": "c", "\\ud800\\udc00": "d"}',
    '{"10": "ten", "9": "nine", "1": "one", "01": "oh-one", "a": "a", "": "empty"}',
    '{"": {"": []}, "b": {}, "a": [], "A": [[]], "c": [{}, [], {"x": {}}]}',
    '{"B": 1, "a": 2, "_": 3, "aa": 4, "a\\u0000": 5, "\\u0000": 6}',
    '{"\\u2028": 1, "\\u001f": 2, "/": 3, "~": 4, "\\"": 5, "\\\\": 6}',
    # containers and literals
    "[]",
    "{}",
    "[[], {}, [[[]]], [{}]]",
    "true",
    "null",
    '[true, false, null, 0, "", [], {}]',
    '{"passed": false, "reward": 0.6666666666666666, "checks": [{"detail": ""}]}',
]


@pytest.fixture(scope="module")
def oracle() -> dict[str, dict[str, bytes]]:
    if NODE is None:
        pytest.skip("node is not installed")
    return dict(zip(DIFFERENTIAL_CASES, node_oracle(DIFFERENTIAL_CASES), strict=True))


@needs_node
@pytest.mark.parametrize("case", DIFFERENTIAL_CASES)
def test_matches_node(case: str, oracle: dict[str, dict[str, bytes]]) -> None:
    expected = oracle[case]
    # The text as written here (exact path: not shaped like orjson's output).
    assert canon(case) == expected["canon"]
    # The same value as Silo writes it (JSON.stringify pretty): usually the fast path.
    assert canon(expected["pretty"]) == expected["canon"]
    assert exact(expected["pretty"]) == expected["canon"]
    # Without the whitespace, the canonical bytes are RFC 8785.
    assert strip_ws(expected["canon"]) == expected["jcs"]


def test_golden_bytes() -> None:
    """A hand-written expectation, independent of Node and of the module."""
    data = (
        b'{"z": [1.0, -0, 1e21, 1e-7, 0.000001], "\xee\x80\x80": "\\u00e9\\n",'
        b' "\xf0\x9f\x98\x80": {}, "10": [], "9": "\\ud800\\u001F/"}'
    )
    assert canon(data) == (
        b"{\n"
        b'  "10": [],\n'
        b'  "9": "\\ud800\\u001f/",\n'
        b'  "z": [\n'
        b"    1,\n"
        b"    0,\n"
        b"    1e+21,\n"
        b"    1e-7,\n"
        b"    0.000001\n"
        b"  ],\n"
        b'  "\xf0\x9f\x98\x80": {},\n'
        b'  "\xee\x80\x80": "\xc3\xa9\\n"\n'
        b"}\n"
    )


def _random_value(rnd: random.Random, depth: int = 0) -> Any:
    """A random I-JSON value biased towards the awkward corners."""
    kind = rnd.randrange(10 if depth < 3 else 7)
    if kind == 0:
        return rnd.choice([None, True, False])
    if kind == 1:
        return rnd.randint(-(2**53), 2**53)
    if kind == 2:
        return rnd.uniform(-1, 1) * 10.0 ** rnd.randint(-330, 308)
    if kind == 3:
        return rnd.choice([0.1 + 0.2, 1e21, 1e-7, 5e-324, -0.0, 1e16, 0.000001, 2.0**53])
    if kind == 4:
        bits = rnd.getrandbits(64)
        x = float.fromhex(
            f"{'-' if bits & 1 else ''}0x1.{bits >> 12:013x}p{rnd.randint(-1074, 1023)}"
        )
        return x if math.isfinite(x) else 1.0
    if kind in (5, 6):
        return _random_text(rnd)
    if kind in (7, 8):
        return {_random_text(rnd): _random_value(rnd, depth + 1) for _ in range(rnd.randrange(5))}
    return [_random_value(rnd, depth + 1) for _ in range(rnd.randrange(5))]


_ALPHABET = [
    *'ab9/~"\\ \x00\x1f\x7f\n',
    "10",
    "é",
    "\u2028",
    "\ud800",
    "\udfff",
    "\ue000",
    "\uffff",
    "\U0001f600",
    "\U00010000",
]


def _random_text(rnd: random.Random) -> str:
    return "".join(rnd.choice(_ALPHABET) for _ in range(rnd.randrange(6)))


@needs_node
def test_random_values_match_node() -> None:
    rnd = random.Random(20260316)
    values = [_random_value(rnd) for _ in range(200)]
    texts = [json.dumps(v) for v in values]
    results = node_oracle(texts)
    for value, text, expected in zip(values, texts, results, strict=True):
        assert canon(text) == expected["canon"], text
        assert canon(expected["pretty"]) == expected["canon"], text
        assert serialize(value) == expected["canon"], text
        assert strip_ws(canon(text)) == expected["jcs"], text
        assert ref_jcs(value).encode("utf-8") == expected["jcs"], text  # the reference itself


# --- 2. properties -----------------------------------------------------------------


@SETTINGS
@given(json_values, st.sampled_from([None, 0, 4]), st.booleans())
def test_idempotent(value: Any, indent: int | None, ascii_only: bool) -> None:
    first = canonicalize(to_json_text(value, indent=indent, ascii_only=ascii_only), source=SOURCE)
    assert first.value == value
    assert first.text == serialize(value)
    second = canonicalize(first.text, source=SOURCE)
    assert second.text == first.text
    assert same_json(second.value, value)
    assert serialize(second.value) == first.text
    assert first.text.endswith(b"\n") and not first.text.endswith(b"\n\n")


@SETTINGS
@given(ijson_values, st.sampled_from([None, 2]))
def test_without_whitespace_is_rfc8785(value: Any, indent: int | None) -> None:
    text = canon(to_json_text(value, indent=indent))
    assert strip_ws(text) == ref_jcs(value).encode("utf-8")


@SETTINGS
@given(json_values)
def test_fast_path_equals_exact_path(value: Any) -> None:
    shaped = [(js_pretty(value) + "\n").encode("utf-8")]
    with contextlib.suppress(orjson.JSONEncodeError):  # lone surrogates, huge integers
        shaped.append(orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n")
    for data in shaped:
        fast = fast_path(data)
        event("fast path" if fast is not None else "exact path")
        expected = exact(data)
        assert canon(data) == expected
        if fast is not None:
            assert fast.text == expected
            assert same_json(fast.value, value)


def test_fast_path_taken_for_plain_documents() -> None:
    value = {
        "b": [1, -2, 18446744073709551615, -9223372036854775808, 0.5, 0.6666666666666666],
        "a": {"x": "text with é and 😀 and \u2028 and \x7f", "y": None, "z": [True, False]},
        "c": [[], {}, ""],
    }
    data = (js_pretty(value) + "\n").encode("utf-8")
    fast = fast_path(data)
    assert fast is not None
    assert fast.text == exact(data)
    assert fast.text.startswith(b'{\n  "a": {\n')


@pytest.mark.parametrize(
    "value",
    [
        {"\ue000": 1, "\U0001f600": 2},  # UTF-16 order differs from code point order
        {"k": 1e21, "j": 1e-7},  # orjson would print 1e21 / 1e-7 differently or alike
        {"k": 100.0},
        {"k": 2**64},  # orjson reads it as a float
        {"k": -(2**63) - 1},
        {"k": "\ud800"},
    ],
)
def test_fast_path_declines_what_it_cannot_do(value: Any) -> None:
    data = (js_pretty(value) + "\n").encode("utf-8")
    assert canon(data) == serialize(value)
    assert canon(data) == exact(data)


def test_keys_sorted_by_utf16_code_units() -> None:
    data = '{\n  "\ue000": 1,\n  "\U0001f600": 2,\n  "\uffff": 3\n}\n'.encode()
    text = canon(data).decode("utf-8")
    assert [line.split('"')[1] for line in text.splitlines()[1:-1]] == [
        "\U0001f600",
        "\ue000",
        "\uffff",
    ]


def test_deep_nesting() -> None:
    for depth in (254, 255, 600):  # orjson prints at most 254 levels
        data = ("[" * depth + "]" * depth + "\n").encode()
        text = canon(data)
        assert text.count(b"[") == depth
        assert canonicalize(text, source=SOURCE).text == text
    message = input_error("[" * 100_000 + "]" * 100_000)
    assert "nested too deeply" in message


# --- 3. files written by Silo's own serializer -------------------------------------

SILO_RESULT: dict[str, Any] = {
    "passed": False,
    "reward": 0.6666666666666666,
    "requiredPassed": 2,
    "requiredTotal": 3,
    "failedRequired": ["Opportunity OPP-006 is Closed Won"],
    "checksPassed": 3,
    "checksFailed": 1,
    "toolCalls": 7,
    "toolErrors": 0,
    "terminationReason": "completed",
    "agentOutput": {
        "summary": "Moved OPP-005 and OPP-006 to the west région — “done” ✓ 😀",
        "opportunities": ["OPP-005", "OPP-006"],
        "confidence": 0.85,
        "notes": None,
        "steps": [],
        "extra": {},
    },
    "error": None,
    "checks": [
        {
            "label": "Opportunity OPP-005 is Closed Won",
            "passed": True,
            "detail": "",
            "required": True,
        },
        {
            "label": "Opportunity OPP-006 is Closed Won",
            "passed": False,
            "detail": 'stage is "Negotiation"\nexpected "Closed Won" on 2026-03-16',
            "required": True,
        },
        {"label": "Audit log entry written", "passed": True, "detail": "", "required": True},
        {"label": "No e-mail sent", "passed": True, "detail": "", "required": False},
    ],
}
SILO_STATE_DIFF: dict[str, Any] = {
    "scalars": [
        {"field": "quarterTarget", "from": 100000, "to": 125000},
        {"field": "owner", "to": "alice"},
        {"field": "now", "from": "2026-03-16", "to": "2026-03-17"},
    ],
    "collections": {
        "opportunities": {"added": [], "removed": [], "changed": ["OPP-005", "OPP-006"]},
        "auditLog": {"added": ["AUD-0001", "AUD-0002"], "removed": [], "changed": []},
    },
}
SILO_UNTOUCHED: dict[str, Any] = {"scalars": [], "collections": {}}


@needs_node
@pytest.mark.parametrize(
    "value",
    [SILO_RESULT, SILO_STATE_DIFF, SILO_UNTOUCHED, {**SILO_RESULT, "agentOutput": "plain text"}],
    ids=["result", "state-diff", "untouched", "string-output"],
)
def test_silo_files_take_fast_path(value: Any) -> None:
    [written] = node_oracle([json.dumps(value)])
    data = written["pretty"]
    assert data == (js_pretty(value) + "\n").encode("utf-8")  # our model of Silo's writer
    fast = fast_path(data)
    assert fast is not None
    assert fast.text == exact(data) == written["canon"]
    assert fast.value == value
    document = canonicalize(data, source=SOURCE)
    assert document.text == written["canon"]
    assert not might_be_volatile(document.text)  # Silo's own files never pay the scan


# --- 4. integers, invalid numbers, duplicate keys, broken files ----------------------


@pytest.mark.parametrize(
    "literal",
    [
        "123456789012345678901234567890",
        "-18446744073709551617",
        "18446744073709551616",
        "18446744073709551615",
        "-9223372036854775809",
        "9007199254740993",
        "1" + "0" * 400,
    ],
)
def test_integer_literals_are_exact(literal: str) -> None:
    for data in (literal, literal + "\n", f'{{\n  "n": {literal}\n}}\n', f"[{literal}]"):
        document = canonicalize(data.encode(), source=SOURCE)
        assert literal.encode() in document.text
        assert canon(document.text) == document.text
    document = canonicalize(f'{{\n  "n": {literal}\n}}\n'.encode(), source=SOURCE)
    assert document.value == {"n": int(literal)}
    assert type(document.value["n"]) is int


def test_enormous_integer_literal_is_an_input_error() -> None:
    message = input_error('{"checks": [1, ' + "9" * 5000 + "]}")
    assert "/checks/1" in message
    assert "5000 digits" in message


@pytest.mark.parametrize(
    ("data", "pointer", "words"),
    [
        ('{"reward": NaN}', "/reward", "NaN"),
        ('{"a": [1, Infinity]}', "/a/1", "Infinity"),
        ('{"a": {"b": -Infinity}}', "/a/b", "-Infinity"),
        ('{"reward": 1e999}', "/reward", "1e999"),
        ('{"reward": -1E400}', "/reward", "-1E400"),
        ("NaN", "the top level", "NaN"),
        ('{"passed": true, "passed": false}', "/passed", "duplicate key 'passed'"),
        (
            '{"checks": [{"label": "a"}, {"label": "b", "passed": true, "label": "c"}]}',
            "/checks/1/label",
            "duplicate key 'label'",
        ),
        ('{"a/b": {"m~n": 1, "m~n": 2}}', "/a~1b/m~0n", "duplicate key"),
        ('{"x": [NaN], "x": 1}', "/x", ""),  # the first problem in document order
    ],
)
def test_invalid_values_name_file_and_pointer(data: str, pointer: str, words: str) -> None:
    message = input_error(data)
    assert f"at {pointer}" in message
    assert words in message
    # The same document shaped like Silo's output must fail the same way.
    pretty = data.replace(", ", ",\n  ")
    assert input_error(pretty) == message


def test_duplicate_key_in_pretty_document() -> None:
    data = b'{\n  "a": 1,\n  "a": 1\n}\n'  # orjson alone would quietly drop one
    assert "duplicate key 'a' at /a" in input_error(data)


@pytest.mark.parametrize(
    "data",
    [
        b'{\n  "passed": true,\n  "reward": 0.5',
        b'{\n  "passed": true,\n  "reward": 0.5,\n',
        b'{\n  "passed": true,\n  "agentOutput": "half a sent',
        b'{\n  "passed": true,\n  "checks": [\n    {\n',
        b'{\n  "passed": tr',
        b"[1, 2",
        b"{",
        b'{"a": fals',
        b'{"a": n',
        b'{"a": -',
        b'{"a": 1.',
        b'{"a": 1.5e',
        b'{"a": 1.5E-',
    ],
)
def test_truncated_file(data: bytes) -> None:
    message = input_error(data)
    assert "truncated" in message


def test_invalid_json_syntax() -> None:
    message = input_error(b'{"a": 1,, "b": 2}')
    assert "invalid JSON at line 1 column 9" in message
    message = input_error(b'{"a": 1}\n{"b": 2}\n')
    assert "invalid JSON at line 2" in message
    message = input_error("{'a': 1}")
    assert "invalid JSON" in message
    for data in ('{"a": tru}', '{"a": nul]', '{"a": 1.}', '{"a": x', '{"a": 1 2'):
        assert "truncated" not in input_error(data), data


def test_invalid_utf8_names_byte() -> None:
    message = input_error(b'{"a": "\xff"}')
    assert "not valid UTF-8 (byte 7)" in message
    with_bom = canonical.BOM + b'{"a": "\xc3"}'
    assert "not valid UTF-8 (byte 10)" in input_error(with_bom)  # offset in the file
    message = input_error(b'"\xed\xa0\x80"')  # a surrogate encoded raw is not UTF-8
    assert "not valid UTF-8" in message
    message = input_error('{"a": "é"}'.encode("utf-16"))
    assert "UTF-16" in message


@pytest.mark.parametrize("data", [b"", b"\n", b"  \r\n\t\n", canonical.BOM])
def test_empty_file(data: bytes) -> None:
    assert input_error(data).endswith(": is empty")


def test_merge_conflict_markers() -> None:
    data = (
        b'{\n  "passed": true,\n<<<<<<< HEAD\n  "reward": 1\n=======\n  "reward": 0.5\n'
        b">>>>>>> feature\n}\n"
    )
    message = input_error(data)
    assert "merge-conflict markers (line 3)" in message
    crlf = input_error(data.replace(b"\n", b"\r\n"))
    assert "merge-conflict markers (line 3)" in crlf


def test_source_is_used_verbatim() -> None:
    message = input_error(b"{", source="baselines/crm-west/TASK-002.result.json")
    assert message.startswith("baselines/crm-west/TASK-002.result.json: ")


# --- 5. inputs reformatted by other tools -----------------------------------------

REFORMAT_VALUE: dict[str, Any] = {
    "passed": True,
    "reward": 0.5,
    "agentOutput": {"text": 'café 😀 \u2028 / "q" \\', "n": [1, 2.5, -3, 1e-7, 1e21]},
    "checks": [{"label": "é", "detail": "", "required": True}],
    "empty": {"a": [], "o": {}},
}
REFORMAT_EXPECTED = serialize(REFORMAT_VALUE)


@pytest.mark.parametrize(
    "data",
    [
        json.dumps(REFORMAT_VALUE, indent=4, ensure_ascii=False).encode() + b"\n",
        json.dumps(REFORMAT_VALUE, indent=2, ensure_ascii=True).encode() + b"\n",
        json.dumps(REFORMAT_VALUE, indent="\t").encode(),
        json.dumps(REFORMAT_VALUE, separators=(",", ":"), ensure_ascii=False).encode(),
        json.dumps(REFORMAT_VALUE, indent=2, ensure_ascii=False).replace("\n", "\r\n").encode()
        + b"\r\n",
        canonical.BOM + json.dumps(REFORMAT_VALUE, indent=2, ensure_ascii=False).encode() + b"\n",
        REFORMAT_EXPECTED.rstrip(b"\n"),  # no final newline
        REFORMAT_EXPECTED + b"\n\n",  # extra blank lines
        b"  \n" + REFORMAT_EXPECTED,
        REFORMAT_EXPECTED.replace(b"\n", b"\r\n"),
        canonical.BOM + REFORMAT_EXPECTED,
        orjson.dumps(REFORMAT_VALUE, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS),
        orjson.dumps(REFORMAT_VALUE),
    ],
    ids=[
        "indent4",
        "ascii-escapes",
        "tabs",
        "minified",
        "crlf",
        "bom",
        "no-final-newline",
        "extra-newlines",
        "leading-space",
        "crlf-canonical",
        "bom-canonical",
        "orjson-sorted",
        "orjson-minified",
    ],
)
def test_reformatted_inputs_become_canonical(data: bytes) -> None:
    assert data != REFORMAT_EXPECTED
    document = canonicalize(data, source=SOURCE)
    assert document.text == REFORMAT_EXPECTED
    assert document.value == REFORMAT_VALUE


def test_ascii_escapes_become_raw_utf8() -> None:
    data = b'{"a": "caf\\u00e9 \\ud83d\\ude00 \\u002f \\/ \\u0041"}'
    assert canon(data) == '{\n  "a": "café 😀 / / A"\n}\n'.encode()
    assert b"\\u" not in canon(data)
    assert canon(b'"\\u00E9"') == '"é"\n'.encode()


def test_reformatted_expected_is_what_js_prints() -> None:
    text = REFORMAT_EXPECTED.decode("utf-8")
    assert "1e-7" in text and "1e+21" in text and "2.5" in text
    assert text.startswith('{\n  "agentOutput": {\n    "n": [\n      1,\n')
    assert "\r" not in text and not text.startswith("\ufeff")


# --- public helpers ----------------------------------------------------------------


def test_quote() -> None:
    assert quote("") == '""'
    assert quote('a"b\\c/d') == '"a\\"b\\\\c/d"'
    assert quote("\b\t\n\f\r") == '"\\b\\t\\n\\f\\r"'
    assert quote("\x00\x01\x0b\x1f\x7f") == '"\\u0000\\u0001\\u000b\\u001f\x7f"'
    assert quote("\u2028\u2029é😀") == '"\u2028\u2029é😀"'
    assert quote("\ud800x\udfff") == '"\\ud800x\\udfff"'
    # Two code points forming a surrogate pair are one character to JavaScript.
    assert quote("\ud83d\ude00") == '"😀"'
    assert quote("\ud800\ud83d\ude00\udc00") == '"\\ud800😀\\udc00"'


@SETTINGS
@given(json_text)
def test_quote_is_json_stringify(text: str) -> None:
    assert quote(text) == ref_string(text)
    assert json.loads(quote(text)).encode("utf-16-be", "surrogatepass") == text.encode(
        "utf-16-be", "surrogatepass"
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.1 + 0.2, "0.30000000000000004"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (123456789012345680000.0, "123456789012345680000"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (0.000001, "0.000001"),
        (0.000015, "0.000015"),
        (5e-324, "5e-324"),
        (2.0**53, "9007199254740992"),
        (-0.0, "0"),
        (0.0, "0"),
        (1e16, "10000000000000000"),
        (123e-20, "1.23e-18"),
        (1.5e300, "1.5e+300"),
        (-1.5e300, "-1.5e+300"),
        (1.0, "1"),
        (100.0, "100"),
        (-2.5, "-2.5"),
        (0.6666666666666666, "0.6666666666666666"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
    ],
)
def test_format_number(value: float, expected: str) -> None:
    assert format_number(value) == expected


@SETTINGS
@given(json_floats)
def test_format_number_round_trips(value: float) -> None:
    text = format_number(value)
    assert text == ref_number(value)
    assert float(text) == value
    assert re.fullmatch(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?(e[+-][1-9][0-9]*)?", text)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_format_number_rejects_non_finite(value: float) -> None:
    with pytest.raises(ValueError, match="NaN and Infinity"):
        format_number(value)


def test_serialize_rejects_non_json() -> None:
    with pytest.raises(TypeError, match="set"):
        serialize({"a": {1, 2}})
    with pytest.raises(ValueError):
        serialize([math.nan])


def test_serialize_layout() -> None:
    assert serialize({}) == b"{}\n"
    assert serialize([]) == b"[]\n"
    assert serialize({"b": [1, {}], "a": None}) == (
        b'{\n  "a": null,\n  "b": [\n    1,\n    {}\n  ]\n}\n'
    )
    assert serialize(True) == b"true\n"


def test_document_and_version() -> None:
    assert FORMAT_VERSION == 1
    document = canonicalize(b'{"b":1,"a":2}', source=SOURCE)
    assert document == Document(value={"a": 2, "b": 1}, text=b'{\n  "a": 2,\n  "b": 1\n}\n')
    assert isinstance(document, Document)
    with pytest.raises(AttributeError):
        document.text = b""  # type: ignore[misc]


# --- 6. ignored paths ---------------------------------------------------------------


def test_apply_ignores() -> None:
    value: dict[str, Any] = {
        "checks": [
            {"label": "a", "detail": "took 12 ms"},
            {"label": "b", "detail": {"nested": [1]}},
        ],
        "agentOutput": {"text": "hi", "id": "x"},
        "reward": 1,
    }
    before = json.dumps(value)
    patterns = [PathPattern.parse(p) for p in ("/checks/*/detail", "result.json:/agentOutput/id")]
    ignored = apply_ignores(value, artifact="result.json", ignore=patterns)
    assert ignored == {
        "checks": [
            {"label": "a", "detail": IGNORED},
            {"label": "b", "detail": IGNORED},
        ],
        "agentOutput": {"text": "hi", "id": IGNORED},
        "reward": 1,
    }
    assert json.dumps(value) == before  # the input is not modified
    other = apply_ignores(value, artifact="state-diff.json", ignore=patterns)
    assert other["agentOutput"]["id"] == "x"
    assert other["checks"][0]["detail"] == IGNORED
    # Both sides get the same placeholder, so differing values compare equal.
    changed = json.loads(before)
    changed["checks"][0]["detail"] = "took 15 ms"
    assert apply_ignores(changed, artifact="result.json", ignore=patterns) == ignored
    assert apply_ignores(value, artifact="result.json", ignore=[]) == value
    missing = [PathPattern.parse("/nothing/here"), PathPattern.parse("/checks/5/detail")]
    assert apply_ignores(value, artifact="result.json", ignore=missing) == value
    whole = apply_ignores(value, artifact="result.json", ignore=[PathPattern.parse("/checks")])
    assert whole["checks"] == IGNORED
    index = apply_ignores(value, artifact="x", ignore=[PathPattern.parse("/checks/1")])
    assert index["checks"] == [value["checks"][0], IGNORED]
    assert serialize(ignored).count(IGNORED.encode()) == 3
