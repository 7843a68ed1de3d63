"""Split the checked tasks into N shards for a CI matrix: ``check --shard K/N``.

A task's shard depends on its ref alone (a SHA-256 of ``str(ref)``), never on
Python's hash seed, the machine, the order of the baselines or which runs exist,
so N jobs started anywhere check every task exactly once, and both artifacts of
a task land in the same shard.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from silo_regress.errors import UsageError
from silo_regress.project.taskref import TaskRef

MAX_SHARDS = 1000
_FORM = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


class _HasRef(Protocol):
    @property
    def ref(self) -> TaskRef: ...


T = TypeVar("T", bound=_HasRef)


def parse_shard(text: str) -> Shard:
    """``"2/4"`` -> Shard(2, 4); anything else is a usage error."""
    match = _FORM.fullmatch(text)
    if match is None:
        raise UsageError(f"--shard {text!r}: expected K/N, e.g. --shard 2/4")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or count > MAX_SHARDS:
        raise UsageError(f"--shard {text!r}: N must be between 1 and {MAX_SHARDS}")
    if not 1 <= index <= count:
        raise UsageError(f"--shard {text!r}: K must be between 1 and N ({count})")
    return Shard(index, count)


def shard_of(ref: TaskRef, count: int) -> int:
    """The 1-based shard that checks ``ref`` when there are ``count`` shards."""
    digest = hashlib.sha256(str(ref).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def select_shard(targets: Sequence[T], shard: Shard) -> list[T]:
    """The targets shard ``shard`` checks, in their original order."""
    return [t for t in targets if shard_of(t.ref, shard.count) == shard.index]
