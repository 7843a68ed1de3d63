"""The tally file ``baselines/[ENV/]TASK.tally.json``: the evidence of a stats gate, in git.

A canonical, timestamp-free count of a task's recorded rollouts, reviewed in a pull
request like any baseline::

    {
      "checks": {"refund issued": 9, "reply sent": 10},
      "format": 1,
      "passed": 9,
      "reward": {"sum": 9, "sum-of-squares": 9},
      "rollouts": 10,
      "variants": {"result.json": [7, 3]}
    }

``checks`` counts the rollouts in which each check (by label) passed; ``variants``
counts, per artifact, the rollouts that matched accepted variant 1, 2, ...
A tally is read with full validation: anything hand-edited into an impossible or
non-canonical state is a :class:`TallyError` naming the file and the JSON path.

Every number is bounded, so a forged tally is refused in one sentence instead of
hanging or crashing whatever reads it (check, the hook, status, fmt, diff, log, merge):
at most :data:`MAX_ROLLOUTS` rollouts, rewards whose sums are finite doubles no larger
in size than :data:`MAX_REWARD` per rollout, and a file of at most :data:`MAX_TALLY_BYTES`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from silo_regress.canon.canonical import canonicalize, serialize
from silo_regress.canon.markers import has_markers, split_sides
from silo_regress.errors import InputError

TALLY_FORMAT = 1
SUFFIX = ".tally.json"
# The most rollouts a tally counts (and a candidate, or a shard's count, may claim).
# Far beyond any real repeat count; the gate's exact tests, pass^k and every printed
# list are bounded in time and length at this count (docs/statistics.md).
MAX_ROLLOUTS = 100_000
# The largest reward a rollout may score in size: a reward sum beyond
# rollouts x MAX_REWARD (or its squares beyond rollouts x MAX_REWARD ** 2) is forged.
MAX_REWARD = 1e12
# A canonical tally with a few hundred check labels is a few KB; a file beyond this
# is refused before it is parsed (a 100 MB "tally" would otherwise be read as JSON).
MAX_TALLY_BYTES = 1 << 20
MAX_LABELS = 1000  # check labels a tally counts
MAX_VARIANTS = 1000  # artifacts, and accepted variants per artifact
_KEYS = ("checks", "format", "passed", "reward", "rollouts", "variants")
_REWARD_KEYS = ("sum", "sum-of-squares")


class TallyError(InputError):
    """A tally file that is not a valid, canonical tally (exit code 3)."""


class TallyFormatError(TallyError):
    """A tally written by a newer silo-regress (its ``format`` is above ours)."""


@dataclass(frozen=True)
class Tally:
    """A task's counts over its recorded rollouts."""

    rollouts: int
    passed: int
    checks: tuple[tuple[str, int], ...] = ()  # (label, passes), by label
    reward_sum: float = 0
    reward_squares: float = 0
    variants: tuple[tuple[str, tuple[int, ...]], ...] = ()  # artifact -> matches per variant
    format: int = TALLY_FORMAT
    _check_map: Mapping[str, int] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not 0 <= self.passed <= self.rollouts:
            raise ValueError(f"{self.passed} passes of {self.rollouts} rollouts")
        object.__setattr__(self, "_check_map", dict(self.checks))

    def check_passed(self, label: str) -> int | None:
        return self._check_map.get(label)

    @property
    def labels(self) -> frozenset[str]:
        return frozenset(self._check_map)

    @property
    def varied(self) -> bool:
        """Whether the rollouts differed in a recorded artifact: some matched a later
        variant, or none (byte-exact gating cannot hold for such a task)."""
        return any(len(counts) > 1 or sum(counts) < self.rollouts for _, counts in self.variants)

    @property
    def rate(self) -> float:
        return self.passed / self.rollouts if self.rollouts else 0.0

    @property
    def reward_mean(self) -> float | None:
        return self.reward_sum / self.rollouts if self.rollouts else None

    def to_json(self) -> dict[str, Any]:
        return {
            "checks": dict(self.checks),
            "format": self.format,
            "passed": self.passed,
            "reward": {"sum": self.reward_sum, "sum-of-squares": self.reward_squares},
            "rollouts": self.rollouts,
            "variants": {artifact: list(counts) for artifact, counts in self.variants},
        }


def serialize_tally(tally: Tally) -> bytes:
    """The tally's canonical bytes (canonical form v1, like every baseline)."""
    return serialize(tally.to_json())


def _error(source: str, path: str, problem: str) -> TallyError:
    return TallyError(f"{source}: {path or '/'} {problem}")


def _count(value: Any, *, source: str, path: str, most: int | None = None) -> int:
    # bool is an int to Python: a hand-written `true` must not count as 1.
    if isinstance(value, bool) or not isinstance(value, int):
        raise _error(source, path, f"must be a whole number, not {_shown(value)}")
    if value < 0:
        raise _error(source, path, f"must not be negative, not {_shown(value)}")
    if most is None and value > MAX_ROLLOUTS:
        raise _error(
            source,
            path,
            f"is {_shown(value)}, more than the {MAX_ROLLOUTS} rollouts a tally counts",
        )
    if most is not None and value > most:
        raise _error(source, path, f"is {_shown(value)}, more than the {most} rollouts")
    return value


def _number(value: Any, *, source: str, path: str, most: float) -> float:
    """A finite number no larger in size than ``most``; a 400-digit integer is refused
    here, before any float arithmetic could overflow on it."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _error(source, path, f"must be a number, not {_shown(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise _error(source, path, f"must be a finite number, not {_shown(value)}")
    if abs(value) > most:
        raise _error(
            source, path, f"is {_shown(value)}, beyond the {most:g} its rollouts can sum to"
        )
    return value


def _object(value: Any, *, source: str, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _error(source, path, f"must be an object, not {_shown(value)}")
    return value


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, int) and abs(value) >= 10**15:
        return f"a {len(str(abs(value)))}-digit number"  # never a 400-digit sentence
    return repr(value)


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def merge_advice(task: str, *, rollouts: int | None = None) -> str:
    """What to do with two tallies a merge joined: they count two code states, and
    their sum or either side would describe code nobody ran (docs/git.md)."""
    repeat = rollouts if rollouts and rollouts >= 2 else "N"
    return (
        "a tally counts the rollouts of one code state and is never merged: count the "
        f"merge result again with `silo-regress record --repeat {repeat} {task}`"
    )


def conflicted_tally(data: bytes, *, source: str, task: str | None = None) -> TallyError | None:
    """The error for a tally that holds git's conflict markers, or None when it holds none;
    ``task`` defaults to the file's name without ``.tally.json``."""
    if not has_markers(data):
        return None
    rollouts = None
    try:
        sides = split_sides(data, source=source)
        if sides is not None:
            value = canonicalize(sides.ours, source=source).value
            counted = value.get("rollouts") if isinstance(value, dict) else None
            if isinstance(counted, int):
                rollouts = counted
    except InputError:
        pass  # the advice says N
    if task is None:
        name = source.replace("\\", "/").rsplit("/", 1)[-1]
        task = name[: -len(SUFFIX)] if name.endswith(SUFFIX) else name
    return TallyError(
        f"{source}: has git merge-conflict markers; {merge_advice(task, rollouts=rollouts)}"
    )


def parse_tally(data: bytes, *, source: str) -> Tally:
    """Read a tally's bytes, or raise :class:`TallyError` naming ``source`` and the path."""
    check_tally_size(data, source=source)
    conflicted = conflicted_tally(data, source=source)
    if conflicted is not None:
        raise conflicted
    document = canonicalize(data, source=source)  # InputError for JSON that is not JSON
    value = _object(document.value, source=source, path="")
    version = value.get("format")
    if isinstance(version, int) and not isinstance(version, bool) and version > TALLY_FORMAT:
        raise TallyFormatError(
            f"{source}: /format is {version}, written by a newer silo-regress "
            f"(this one reads format {TALLY_FORMAT}): upgrade silo-regress"
        )
    # `"format": true` equals 1 to Python: only the integer 1 is format 1.
    if isinstance(version, bool) or version != TALLY_FORMAT:
        raise _error(source, "/format", f"must be {TALLY_FORMAT}, not {_shown(version)}")
    unknown = sorted(set(value) - set(_KEYS))
    if unknown:
        raise _error(source, "/" + _escape(unknown[0]), "is not a key of a tally")
    missing = [k for k in _KEYS if k not in value]
    if missing:
        raise _error(source, "/" + missing[0], "is missing")
    rollouts = _count(value["rollouts"], source=source, path="/rollouts")
    passed = _count(value["passed"], source=source, path="/passed", most=rollouts)
    checks = _object(value["checks"], source=source, path="/checks")
    if len(checks) > MAX_LABELS:
        raise _error(source, "/checks", f"has {len(checks)} labels, more than {MAX_LABELS}")
    counted = tuple(
        (label, _count(n, source=source, path=f"/checks/{_escape(label)}", most=rollouts))
        for label, n in sorted(checks.items())
    )
    reward = _object(value["reward"], source=source, path="/reward")
    extra = sorted(set(reward) - set(_REWARD_KEYS))
    if extra:
        raise _error(source, "/reward/" + _escape(extra[0]), "is not a key of a tally's reward")
    for key in _REWARD_KEYS:
        if key not in reward:
            raise _error(source, f"/reward/{key}", "is missing")
    reward_sum = _number(
        reward["sum"], source=source, path="/reward/sum", most=rollouts * MAX_REWARD
    )
    squares = _number(
        reward["sum-of-squares"],
        source=source,
        path="/reward/sum-of-squares",
        most=rollouts * MAX_REWARD**2,
    )
    if squares < 0:
        raise _error(source, "/reward/sum-of-squares", f"must not be negative, not {squares}")
    variants = _object(value["variants"], source=source, path="/variants")
    if len(variants) > MAX_VARIANTS:
        raise _error(
            source, "/variants", f"has {len(variants)} artifacts, more than {MAX_VARIANTS}"
        )
    matched = []
    for artifact, counts in sorted(variants.items()):
        where = f"/variants/{_escape(artifact)}"
        if not isinstance(counts, list):
            raise _error(source, where, f"must be an array of counts, not {_shown(counts)}")
        if len(counts) > MAX_VARIANTS:
            raise _error(source, where, f"has {len(counts)} variants, more than {MAX_VARIANTS}")
        numbers = tuple(
            _count(n, source=source, path=f"{where}/{i}", most=rollouts)
            for i, n in enumerate(counts)
        )
        if sum(numbers) > rollouts:
            raise _error(
                source, where, f"counts {sum(numbers)} matches, more than the {rollouts} rollouts"
            )
        matched.append((artifact, numbers))
    tally = Tally(
        rollouts=rollouts,
        passed=passed,
        checks=counted,
        reward_sum=reward_sum,
        reward_squares=squares,
        variants=tuple(matched),
    )
    if document.text != data:
        raise _error(source, "", "is not in canonical form: run `silo-regress fmt` to rewrite it")
    return tally


def check_tally_size(data: bytes, *, source: str) -> None:
    """Refuse bytes too long to be a tally, before anything parses them."""
    if len(data) > MAX_TALLY_BYTES:
        raise _error(
            source, "", f"is {len(data)} bytes, more than the {MAX_TALLY_BYTES} a tally may be"
        )


def tally_name(stem: str) -> str:
    """``[ENV/]TASK`` -> ``[ENV/]TASK.tally.json``."""
    return stem + SUFFIX
