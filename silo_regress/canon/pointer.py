"""JSON Pointers (RFC 6901) and the path patterns config uses to exempt or ignore values."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

Part = str | int


def format_pointer(parts: Sequence[Part]) -> str:
    """Render path parts as a JSON Pointer; ``()`` is the whole document, ``""``."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def split_pointer(pointer: str) -> tuple[str, ...]:
    if pointer == "":
        return ()
    if not pointer.startswith("/"):
        raise ValueError(f"JSON Pointer {pointer!r} must start with '/'")
    return tuple(p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/"))


@dataclass(frozen=True)
class PathPattern:
    """A JSON Pointer in which a ``*`` segment matches any one key or index.

    An optional ``artifact:`` prefix (``result.json:/agentOutput/id``) limits the
    pattern to one artifact.
    """

    text: str
    artifact: str | None
    segments: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> PathPattern:
        artifact: str | None = None
        pointer = text
        if not text.startswith("/") and ":" in text:
            artifact, _, pointer = text.partition(":")
        return cls(text=text, artifact=artifact, segments=split_pointer(pointer))

    def applies_to(self, artifact: str) -> bool:
        return self.artifact is None or self.artifact == artifact

    def matches(self, parts: Sequence[Part]) -> bool:
        if len(parts) != len(self.segments):
            return False
        return all(s == "*" or s == str(p) for s, p in zip(self.segments, parts, strict=True))

    def covers(self, parts: Sequence[Part]) -> bool:
        """True when ``parts`` is this path or lies beneath it."""
        if len(parts) < len(self.segments):
            return False
        return self.matches(parts[: len(self.segments)])


def walk(value: Any, parts: tuple[Part, ...] = ()) -> Iterator[tuple[tuple[Part, ...], Any]]:
    """Yield every (path, value) pair, containers before their members."""
    yield parts, value
    if isinstance(value, dict):
        for key, member in value.items():
            yield from walk(member, (*parts, key))
    elif isinstance(value, list):
        for index, member in enumerate(value):
            yield from walk(member, (*parts, index))
