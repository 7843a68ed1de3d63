"""Agent-controlled text made safe to show: every invisible or controlling character escaped.

Run files, task ids, tool names, agent output and shard reports are written by
programs we do not trust. On its way to a terminal, a pull-request comment or a CI
log, such text must not drive the reader's screen (ESC, CSI cursor movement,
OSC 52 clipboard writes, OSC 8 links, C1 controls), reorder what is shown (bidi
overrides U+202A-U+202E, U+2066-U+2069), hide characters (zero-width U+200B-U+200D,
U+FEFF) or start a new line that a CI runner reads as a command (``::error``).

Two functions, one rule (Python's :meth:`str.isprintable`, which holds exactly the
categories above as not printable):

- :func:`visible` for a single-line field (a name, a label, a path): reversible,
  so a backslash is doubled and ``\\x1b`` can only mean an ESC was there.
- :func:`shielded` for whole rendered output on its way out: newlines (and tabs)
  kept, everything else that is not printable escaped as ``\\uXXXX``, which is also
  a valid JSON escape, so JSON output stays JSON and parses to the same value.
  With ``colour``, the SGR colour and bold sequences our own palette writes pass.
"""

from __future__ import annotations

import re

# The SGR sequences our palette and pygments' terminal formatter write: colours, bold,
# dim, underline and reverse (the intraline highlights), and their resets. Nothing that
# conceals, blinks, moves the cursor or talks to the terminal (OSC) is on the list, so an
# agent could at most forge a colour.
_SGR_CODE = r"(?:0|00|01|1|2|4|7|22|24|27|39|49|3[0-7]|9[0-7])"
_OWN_SGR = rf"\x1b\[(?:{_SGR_CODE}(?:;{_SGR_CODE})*)?m"
_COLOURED = re.compile(_OWN_SGR + r"|[^\x00-\x7f]|[\x00-\x08\x0b-\x1f\x7f]")
_PLAIN = re.compile(r"[^\x00-\x7f]|[\x00-\x08\x0b-\x1f\x7f]")


LINE_CAP = 2000  # characters of one agent-controlled text a printed line shows


def capped(text: str, limit: int = LINE_CAP) -> str:
    """``text`` cut to ``limit`` characters, then how many more there were.

    A 10 MB agent output or a 100 MB check label is somebody else's text: a report
    line shows its start and says the rest is in the JSON report, which keeps it all.
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… {len(text) - limit} more characters; full text in the JSON report"


def visible(text: str) -> str:
    """``text`` as one visible line: ESC as ``\\x1b``, U+202E as ``\\u202e``, a newline
    as ``\\n``, a byte that was not UTF-8 (``surrogateescape``) as ``\\xNN``, and a
    backslash as ``\\\\``, so the original can always be read back."""
    if text.isprintable() and "\\" not in text:
        return text
    shown = []
    for char in text:
        if char == "\\":
            shown.append("\\\\")
        elif "\udc80" <= char <= "\udcff":
            shown.append(f"\\x{ord(char) - 0xDC00:02x}")
        elif char.isprintable():
            shown.append(char)
        else:
            shown.append(_escape(char))
    return "".join(shown)


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _json_escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # a JSON string spells an astral character as a surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def shielded(text: str, *, colour: bool = False) -> str:
    """Rendered output with nothing invisible or controlling left in it.

    Lines stay lines; a character that is not printable becomes ``\\uXXXX``. Inside a
    JSON string that is the same character again, and outside strings JSON holds
    none, so JSON output parses to exactly the value it had.
    """
    if text.isascii() and not _PLAIN.search(text):
        return text
    pattern = _COLOURED if colour else _PLAIN

    def replace(match: re.Match[str]) -> str:
        found = match.group()
        if len(found) > 1 or found.isprintable():
            return found  # one of our colours, or an ordinary non-ASCII letter
        return _json_escape(found)

    return pattern.sub(replace, text)


def one_line(text: str) -> str:
    """``text`` for a stderr sentence: :func:`shielded`, with line breaks escaped too,
    so no line of it can start a CI runner's workflow command."""
    return shielded(text).replace("\r", "\\r").replace("\n", "\\n")
