"""The fast path's proof (canonical.canonicalize): each way orjson can read or
print a file unlike the canonical rules must send that file to the exact path, and
what the fast path does take must be byte for byte what the exact path makes.

The exact path (the standard library parser with exact hooks, then the ECMAScript
serializer) is checked against node in test_canonical.py; here it is the oracle.
"""

from __future__ import annotations

import math
import struct
import tracemalloc
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.fastpath import fast_path

from silo_regress.canon import canonical
from silo_regress.canon.canonical import canonicalize, format_number, parse, serialize
from silo_regress.errors import InputError

SOURCE = "runs/run_x/state-diff.json"


def exact(data: bytes) -> bytes:
    return serialize(parse(data, source=SOURCE))


def pretty(value: Any) -> bytes:
    """The bytes Silo writes for ``value`` (JSON.stringify(value, null, 2) + newline)."""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


# Each of these is one of orjson's own prints, or near one, where reading with orjson
# and printing sorted would not give the canonical bytes.
DECLINED = {
    "duplicate key": b'{\n  "a": 1,\n  "a": 2\n}\n',
    "duplicate key, sorted": b'{\n  "a": 1,\n  "b": 2,\n  "b": 2\n}\n',
    "integral float": b'{\n  "reward": 1.0\n}\n',
    "integral float last in an array": b"[\n  2,\n  1.0\n]\n",
    "zero as a float": b"[\n  0.0\n]\n",
    "integral float as the whole text": b"7.0\n",
    "negative zero float": b"[\n  -0.0\n]\n",
    "negative zero integer": b"[\n  -0\n]\n",
    "integer beyond 64 bits": b"[\n  18446744073709551616\n]\n",
    "integer below -2**63": b"[\n  -9223372036854775809\n]\n",
    "1e16 as orjson prints it": b"[\n  1e+16\n]\n",
    "1e21": b"[\n  1e+21\n]\n",
    "1e-6 as orjson prints it": b"[\n  1e-6\n]\n",
    "4.5e-6 as orjson prints it": b'{\n  "p": 4.5e-6\n}\n',
    "-1e-6, a minus before the mantissa too": pretty([-1e-6, "OPP-6"]),
    "1e16 beside a plus sign in a string": pretty(["a+b", 1e16]),
    "upper-case exponent": b"[\n  1E-7\n]\n",
    "escaped letter": b'{\n  "name": "Zo\\u00eb"\n}\n',
    "escaped key sorting apart": b'{\n  "\\ue000": 1,\n  "\\ud83d\\ude00": 2\n}\n',
    "escaped slash": b'[\n  "a\\/b"\n]\n',
    "UTF-16 key order": '{\n  "\ue000": 1,\n  "\U0001f600": 2\n}\n'.encode(),
    "UTF-16 key order, nested, U+FFFF": pretty({"a": [{"\U00010000": 1, "\uffff": 2}]}),
    "lone surrogate": b'[\n  "\\ud800"\n]\n',
    "lone surrogate in a key": b'{\n  "\\udfff": 1\n}\n',
    "trailing data": b'{\n  "a": 1\n}\n{}\n',
    "nested deeper than orjson prints": b"[" * 255 + b"]" * 255 + b"\n",
    "CRLF": b'{\r\n  "a": 1\r\n}\r\n',
    "BOM": b'\xef\xbb\xbf{\n  "a": 1\n}\n',
    "no final newline": b'{\n  "a": 1\n}',
    "two final newlines": b'{\n  "a": 1\n}\n\n',
    "compact": b'{"b":1,"a":2}',
    "four-space indent": b'{\n    "a": 1\n}\n',
    "a dot and zero ending a word in a string": b'[\n  "release 2.0, final"\n]\n',
    "integral float after many sentences": pretty({"a": "One. Two. " * 40, "b": [1.0]}),
    "integral float between many sentences": pretty(["Done. " * 40, 3.0, "Again. " * 40]),
}


@pytest.mark.parametrize("data", DECLINED.values(), ids=DECLINED.keys())
def test_the_fast_path_declines_what_it_cannot_prove(data: bytes) -> None:
    assert fast_path(data) is None
    try:
        expected = exact(data)
    except InputError as exc:  # the exact path refuses it: so must canonicalize
        with pytest.raises(InputError) as info:
            canonicalize(data, source=SOURCE)
        assert info.value.message == exc.message
        return
    assert canonicalize(data, source=SOURCE).text == expected


def test_a_duplicate_key_is_refused_with_its_path() -> None:
    with pytest.raises(InputError, match=r"duplicate key 'a' at /a"):
        canonicalize(DECLINED["duplicate key"], source=SOURCE)


def test_trailing_data_is_refused() -> None:
    with pytest.raises(InputError, match="invalid JSON at line 4 column 1"):
        canonicalize(b'{\n  "a": 1\n}\n{}\n', source=SOURCE)


TAKEN = {
    "Silo's insertion order": pretty({"scalars": [], "collections": {"b": 1, "a": [0.5]}}),
    "already canonical": b'{\n  "a": [\n    0.25,\n    -3\n  ],\n  "b": null\n}\n',
    "tiny float, printed alike": b"[\n  1e-7,\n  1.5e-300\n]\n",
    "exponent 60 is not 6": b"[\n  1e-60\n]\n",
    "-6 in a word and as an integer": pretty({"id": "OPP-6", "n": -6, "m": [-6]}),
    "a plus sign in a string beside a tiny float": pretty({"op": "a+b", "p": 1.5e-7}),
    "fraction with a zero": b"[\n  0.05,\n  10.25\n]\n",
    "escaped control character": b'[\n  "tab\\tand\\u001f"\n]\n',
    "64-bit extremes": b"[\n  18446744073709551615,\n  -9223372036854775808\n]\n",
    "non-ASCII values and keys below U+E000": pretty({"z\u00eb": "\u2713 \U0001f600", "a": 1}),
    "fractions after many sentences": pretty({"a": "One. Two. " * 40, "b": [0.5, 10.05]}),
    "keys beyond U+FFFF only": pretty({"\U0001f600": 1, "\U0001f4a9": 2, "z\U00010000": 3}),
    "U+E000 to U+FFFF in values, plain keys": pretty({"b": "\ufffd\ue000", "a": "\U0001f600"}),
}


@pytest.mark.parametrize("data", TAKEN.values(), ids=TAKEN.keys())
def test_the_fast_path_takes_faithful_files(data: bytes) -> None:
    fast = fast_path(data)
    assert fast is not None
    assert fast.text == exact(data)
    assert fast.value == parse(data, source=SOURCE)


def test_a_large_file_takes_the_fast_path_one_print_at_a_time() -> None:
    ids = [f"AUD-{n:07d}" for n in range(80_000)]
    data = pretty({"scalars": [1.5], "collections": {"auditLog": {"removed": [], "added": ids}}})
    assert len(data) > canonical._SMALL_FILE
    fast = fast_path(data)
    assert fast is not None
    assert fast.text == exact(data)
    doubled = data.replace(b'"removed": []', b'"removed": [],\n      "added": []', 1)
    assert fast_path(doubled) is None  # a duplicate key, large


def test_a_declined_file_is_not_held_twice_while_the_exact_path_reads_it() -> None:
    """orjson's reading of a file the fast path declines is dropped before the exact
    path parses the file again: a 37 MB state diff must not cost two parses of memory."""
    ids = [f"AUD-{n:07d}" for n in range(60_000)]
    data = pretty({"ids": ids, "reward": 1.0})  # declined for its 1.0 alone
    assert len(data) > canonical._SMALL_FILE

    def peak(read: Callable[[], object]) -> int:
        tracemalloc.start()
        try:
            read()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    fast = peak(lambda: orjson.dumps(orjson.loads(data)))  # what the fast path holds
    exact_path = peak(lambda: canonical._canonicalize_exact(data, SOURCE))
    whole = peak(lambda: canonicalize(data, source=SOURCE))
    assert whole < max(fast, exact_path) * 1.2, (whole, fast, exact_path)


EDGES = [
    0.0,
    -0.0,
    1.0,
    0.1,
    1e-5,
    9.999999999999999e-6,
    1e-6,
    9.999999999999999e-7,
    1e-7,
    5e-324,
    1e15,
    1e16,
    123456789012345680000.0,
    1e21,
    1.7976931348623157e308,
]


@given(
    st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(EDGES),
    st.sampled_from(["", "OPP-6", "a+b", "1e+", "x.0,"]),
)
def test_the_fast_path_takes_a_faithful_print_exactly_when_the_number_check_passes(
    value: float, word: str
) -> None:
    """Beside words that hold a piece of a hazard, a file of orjson's print (faithful)
    takes the fast path exactly when the proof's number check passes."""
    number = {"word": word, "value": value}
    data = pretty(number)
    fast = fast_path(data)
    assert (fast is not None) == canonical._printed_as_canonical(data, number)
    if fast is not None:
        assert fast.text == exact(data)


@given(st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(EDGES))
def test_orjson_prints_a_double_as_javascript_unless_the_check_says_otherwise(
    value: float,
) -> None:
    """The claim the number check rests on, for every double: where it passes orjson's
    print, that print is ECMAScript's (format_number is checked against node)."""
    for printed in (orjson.dumps(value), orjson.dumps([value], option=orjson.OPT_INDENT_2)):
        if canonical._printed_as_canonical(printed, value):
            assert printed.strip(b"[] \n") == format_number(value).encode()


def test_orjson_prints_doubles_of_every_magnitude_as_javascript_where_the_check_passes() -> None:
    for exponent in range(-325, 309):
        for mantissa in (1.0, 1.5, 4.823040373928001, 9.999999999999999):
            value = mantissa * 10.0**exponent if exponent < 308 else mantissa * 1e308
            if not math.isfinite(value):
                continue
            printed = orjson.dumps(value)
            if canonical._printed_as_canonical(printed, value):
                assert printed == format_number(value).encode(), value
    # Random bit patterns reach subnormals and odd exponents the loop above does not.
    for bits in range(0, 1 << 64, (1 << 64) // 20_011):
        value = struct.unpack("<d", struct.pack("<Q", bits))[0]
        if math.isfinite(value):
            printed = orjson.dumps(value)
            if canonical._printed_as_canonical(printed, value):
                assert printed == format_number(value).encode(), value


@given(st.lists(st.text(st.characters(blacklist_categories=["Cs"])), min_size=2, max_size=8))
def test_code_point_and_utf16_orders_differ_only_with_a_character_from_u_e000(
    keys: list[str],
) -> None:
    """The claim step 3 of the proof rests on: without a character of U+E000 to U+FFFF
    (UTF-8 lead byte 0xEE or 0xEF), sorting by code point is sorting by UTF-16 unit."""
    in_utf16 = sorted(keys, key=lambda k: k.encode("utf-16-be"))
    if not any(canonical._has_high_bmp(k.encode()) for k in keys):
        assert sorted(keys) == in_utf16
    plain = [k.translate({c: None for c in range(0xE000, 0x10000)}) for k in keys]
    assert sorted(plain) == sorted(plain, key=lambda k: k.encode("utf-16-be"))


def test_a_document_cannot_be_changed_after_it_is_built() -> None:
    document = canonicalize(TAKEN["Silo's insertion order"], source=SOURCE)
    with pytest.raises(AttributeError):
        setattr(document, "text", b"{}\n")  # noqa: B010 (the point is the attribute)
    assert document.text == exact(TAKEN["Silo's insertion order"])


@pytest.mark.parametrize(
    "data", [b"[1.0]", b"1.0", b'{"a":2.0}', b"[1,2.0,3]", b"[1e+16]", b"[1e-6]"]
)
def test_a_compact_print_with_a_number_unlike_javascript_is_not_canonical(data: bytes) -> None:
    value = orjson.loads(data)
    assert orjson.dumps(value) == data  # faithful: only the number check can refuse it
    assert not canonical.compact_is_canonical(value, data)


@pytest.mark.parametrize("data", [b"[1.5]", b"1.05", b'{"a":"2.0"}', b"[1,20.25,3]", b"[1e-7]"])
def test_a_compact_print_with_numbers_as_javascript_prints_them_is_canonical(data: bytes) -> None:
    value = orjson.loads(data)
    assert canonical.compact_is_canonical(value, data)


SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=["Cs"]), max_size=8)
)
KEYS = st.text(st.characters(blacklist_categories=["Cs"]), max_size=4)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=8,
)


def printed_members(pairs: list[tuple[str, Any]]) -> bytes:
    """An object printed in orjson's (and Silo's) layout, keys as given, repeats kept."""
    members = []
    for key, member in pairs:
        inner = orjson.dumps(member, option=orjson.OPT_INDENT_2).replace(b"\n", b"\n  ")
        members.append(b"  " + orjson.dumps(key) + b": " + inner)
    return b"{\n" + b",\n".join(members) + b"\n}\n"


@given(
    st.dictionaries(KEYS, VALUES, min_size=1, max_size=5),
    st.integers(min_value=0),
    st.integers(min_value=0),
    VALUES,
)
def test_a_repeated_key_in_silo_layout_never_takes_the_fast_path(
    value: dict[str, Any], pick: int, at: int, other: Any
) -> None:
    pairs = list(value.items())
    key = pairs[pick % len(pairs)][0]
    pairs.insert(at % (len(pairs) + 1), (key, other))
    data = printed_members(pairs)
    assert printed_members(list(value.items())) == pretty(value)  # the layout is orjson's
    assert fast_path(data) is None
    with pytest.raises(InputError, match="duplicate key"):
        canonicalize(data, source=SOURCE)
