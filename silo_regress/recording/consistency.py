"""Whether a partial accept leaves ``result.json`` with scores no run could produce.

A verifier writes ``passed``, ``reward``, the required and check counts,
``failedRequired`` and each check's ``passed`` together. Accepting some of them
from the run and keeping others from the baseline (``/passed`` but not
``/reward``) writes a result that is neither the old behaviour nor the new one.
Values only: ``review`` words the mixture and asks before writing.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from silo_regress.canon.pointer import split_pointer
from silo_regress.errors import InputError
from silo_regress.recording.acceptance import ABSENT, lookup, splice

SCORE_FIELDS = (
    "passed",
    "reward",
    "requiredPassed",
    "requiredTotal",
    "failedRequired",
    "checksPassed",
    "checksFailed",
)


class Side(enum.StrEnum):
    BASELINE = "baseline"
    RUN = "run"


@dataclass(frozen=True)
class Taken:
    """One score field the two sides disagree on, and the side the accept keeps it from."""

    pointer: str
    side: Side
    value: Any


def mixed_scores(baseline: Any, run: Any, pointers: Sequence[str]) -> tuple[Taken, ...]:
    """The score fields that differ, when the accept takes some from each side; else ()."""
    if not (isinstance(baseline, dict) and isinstance(run, dict)):
        return ()
    try:
        result = splice(baseline, run, pointers, where="result.json")
    except InputError:
        return ()  # the accept itself refuses these pointers, and says why
    taken = []
    for pointer in _score_pointers(baseline, run):
        parts = split_pointer(pointer)
        old, new, kept = lookup(baseline, parts), lookup(run, parts), lookup(result, parts)
        if _same(old, new):
            continue
        if _same(kept, new):
            taken.append(Taken(pointer, Side.RUN, new))
        elif _same(kept, old):
            taken.append(Taken(pointer, Side.BASELINE, old))
    if len({t.side for t in taken}) < 2:
        return ()
    return tuple(taken)


def _score_pointers(baseline: dict[str, Any], run: dict[str, Any]) -> list[str]:
    pointers = [f"/{name}" for name in SCORE_FIELDS]
    checks = [c for c in (baseline.get("checks"), run.get("checks")) if isinstance(c, list)]
    pointers += [f"/checks/{n}/passed" for n in range(max(map(len, checks), default=0))]
    return pointers


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON: ``true`` is not ``1``, and an absent member equals only another."""
    if a is ABSENT or b is ABSENT:
        return a is b
    return type(a) is type(b) and bool(a == b)
