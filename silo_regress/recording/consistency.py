"""Whether a partial accept leaves ``result.json`` with scores no run could produce.

A verifier writes ``passed``, ``reward``, the required and check counts,
``failedRequired`` and each check's ``passed`` together. Accepting some of them
from the run and keeping others from the baseline (``/passed`` but not
``/reward``) writes a result that is neither the old behaviour nor the new one.
Values only: ``review`` words the mixture and asks before writing.

A mixture is named field by field, and so is what it breaks:
:func:`contradictions` reads the result the accept would write and names each pair
of fields that cannot both hold (``passed`` true while ``failedRequired`` names a
check), also when every changed field came from one side of a run that was itself
inconsistent.
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


@dataclass(frozen=True)
class Contradiction:
    """Two fields of one result that cannot both hold, with the values they have."""

    field: str
    value: Any
    other: str
    other_value: Any
    why: str


def contradictions(result: Any) -> tuple[Contradiction, ...]:
    """The pairs of score fields of ``result`` that contradict each other."""
    if not isinstance(result, dict):
        return ()
    found: list[Contradiction] = []
    passed, failed = result.get("passed"), result.get("failedRequired")
    checks = result.get("checks") if isinstance(result.get("checks"), list) else None
    if isinstance(passed, bool) and isinstance(failed, list) and passed == bool(failed):
        found.append(
            Contradiction(
                "passed", passed, "failedRequired", failed, "passed means no required check failed"
            )
        )
    if checks is not None and isinstance(failed, list):
        failing = [
            c.get("label")
            for c in checks
            if isinstance(c, dict) and c.get("required") is True and c.get("passed") is False
        ]
        if sorted(map(str, failing)) != sorted(map(str, failed)):
            found.append(
                Contradiction(
                    "failedRequired",
                    failed,
                    "checks",
                    failing,
                    "it lists the required checks that failed",
                )
            )
    total, passed_n = result.get("requiredTotal"), result.get("requiredPassed")
    if (
        isinstance(total, int)
        and isinstance(passed_n, int)
        and isinstance(failed, list)
        and passed_n != total - len(failed)
    ):
        found.append(
            Contradiction(
                "requiredPassed",
                passed_n,
                "failedRequired",
                failed,
                f"requiredTotal {total} less the failed ones",
            )
        )
    if checks is not None:
        ok, bad = result.get("checksPassed"), result.get("checksFailed")
        passing = sum(1 for c in checks if isinstance(c, dict) and c.get("passed") is True)
        if isinstance(ok, int) and ok != passing:
            found.append(
                Contradiction(
                    "checksPassed", ok, "checks", passing, "it counts the checks that passed"
                )
            )
        if isinstance(bad, int) and bad != len(checks) - passing:
            found.append(
                Contradiction(
                    "checksFailed",
                    bad,
                    "checks",
                    len(checks) - passing,
                    "it counts the checks that failed",
                )
            )
    return tuple(found)


def introduced_contradictions(
    baseline: Any, run: Any, pointers: Sequence[str]
) -> tuple[Contradiction, ...]:
    """The contradictions the accept of ``pointers`` would write that neither side had
    (a verifier that was inconsistent already is not this accept's doing)."""
    if not (isinstance(baseline, dict) and isinstance(run, dict)):
        return ()
    try:
        result = splice(baseline, run, pointers, where="result.json")
    except InputError:
        return ()  # the accept itself refuses these pointers, and says why
    had = {(c.field, c.other) for side in (baseline, run) for c in contradictions(side)}
    return tuple(c for c in contradictions(result) if (c.field, c.other) not in had)


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
