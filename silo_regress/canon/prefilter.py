"""The cheap test that rules volatile content out, before any scan.

Every artifact a check compares goes through :func:`might_be_volatile`; almost
none needs :func:`silo_regress.canon.volatile.scan_volatile`, whose patterns, clock and
findings are loaded only once a hint is seen (a matching check, the pre-commit hook
on most days, never loads them).
"""

from __future__ import annotations

import re

# Substrings every finding's canonical bytes contain, each found at memchr speed
# (a pattern with a literal first byte; a leading class would make the regex engine
# stop at every digit of a 50 MB file): a run id holds "run_", a timing key is
# printed as `...Ms": `, a time of day holds a colon not followed by a space (every
# key separator is `": `), a basic ISO 8601 time holds "T<digit>", an epoch is a
# number right after a time-like key.
_TIMING_HINT = b'Ms": '
_BASIC_HINT = re.compile(rb"T[0-9]")
# Every time-like key ends in one of these (see _TIME_KEY).
_EPOCH_HINTS = (b'At": ', b'at": ', b'ime": ', b'amp": ', b'och": ')
_DIGITS = frozenset(b"0123456789")
# The same hints as one search: `": ` (a literal, found at memchr speed) after the
# last two letters of a time-like or timing key, before a number. One pass instead
# of six: on a 2 KB result.json this was half of a match's volatile test.
_KEY_HINT = re.compile(rb'": (?<=(?:[Aa]t|me|mp|ch|Ms)": )[-0-9]')
_SPACELESS_COLON = re.compile(rb":(?! )")
# The exact test, paid only when a hint is found: compiled then, not at start-up.
_PREFILTER = (
    rb"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}|[0-9]{8}T[0-9]{4}|run_[0-9]{14}_"
    rb'|(?:uration|lapsed)Ms": |(?:[Aa]t|[Tt]ime|[Tt]imestamp|[Ee]poch)": [0-9]'
)


def might_be_volatile(text: bytes) -> bool:
    """A cheap test on canonical bytes: False means no volatile scan finds anything.

    It holds for every clock, so it runs before the run's clock is even read.
    """
    if not (
        b"run_" in text
        or _SPACELESS_COLON.search(text) is not None
        or _BASIC_HINT.search(text) is not None
        or _has_key_hint(text)
    ):
        return False
    return re.search(_PREFILTER, text) is not None  # re's cache: compiled once


def _has_key_hint(text: bytes) -> bool:
    """Whether a timing key, or a number after a key that may be time-like, is printed.

    One regex search is the fastest test on small files; a large file with few
    object members (millions of ids, long texts) is faster to test by looking at
    each of its few `": ` separators.
    """
    if len(text) < 1 << 20 or text.count(b'": ') > 4096:
        return _KEY_HINT.search(text) is not None
    at = text.find(b'": ')
    while at != -1:
        end = at + 3
        if text.startswith(_TIMING_HINT, end - len(_TIMING_HINT)):
            return True
        digit = end < len(text) and text[end] in _DIGITS
        if digit and any(text.startswith(hint, end - len(hint)) for hint in _EPOCH_HINTS):
            return True
        at = text.find(b'": ', end)
    return False
