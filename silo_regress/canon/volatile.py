"""The volatile scan: run ids, wall-clock times and timing values in an artifact.

A baseline must hold behaviour, not the moment it was recorded. Real Silo worlds
keep *simulated* time (ERP records dated 2026-03-16T10:00:00Z, tool outputs quoting
them), so a date-time is only wall-clock time when it falls inside the run's own
clock window, ``[startedAt - 10 min, finishedAt + 10 min]`` of its ``run.json``
(DESIGN.md, "Canonical form"). With no run at hand (a baseline checked alone) only
what needs no clock is judged, plus date-times from the last 30 days of this
machine's clock: the baseline someone wrote by hand with today's time in it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from silo_regress.canon.pointer import Part, PathPattern, format_pointer, walk
from silo_regress.canon.prefilter import might_be_volatile

__all__ = ["Clock", "Finding", "might_be_volatile", "scan_volatile"]

MARGIN = timedelta(minutes=10)
RECENT = timedelta(days=30)
# A date-time without a zone could be local time anywhere on earth.
_ZONELESS_SPREAD = timedelta(hours=14)

# ASCII digits only (re.ASCII): other scripts' digits are no ISO 8601 date-time, and
# the bytes prefilter below could not see them.
_EXTENDED = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?"
    r"(Z|z|[+-]\d{2}(?::?\d{2})?)?",
    re.ASCII,
)
_BASIC = re.compile(
    r"(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})?(?:[.,](\d+))?(Z|z|[+-]\d{2}(?::?\d{2})?)?",
    re.ASCII,
)
_RUN_ID = re.compile(r"run_\d{14}_[0-9a-z]+", re.ASCII)
# Keys whose numbers are epoch times: `at`, `time`, `timestamp`, `epoch` and names
# ending in them (`createdAt`, `start_time`, `lastTimestamp`).
_TIME_KEY = re.compile(
    r"^(?:at|time|timestamp|epoch)$|[a-z0-9](?:At|Time|Timestamp|Epoch)$|_(?:at|time|timestamp|epoch)$"
)
_TIMING_KEY = re.compile(r"^(?:duration|elapsed)Ms$|.(?:Duration|Elapsed)Ms$")


@dataclass(frozen=True)
class Finding:
    """Volatile content at one JSON Pointer."""

    pointer: str
    reason: str


@dataclass(frozen=True)
class Clock:
    """The wall-clock span an artifact's times are judged against."""

    start: datetime
    end: datetime
    epochs: bool  # numbers under time-like keys are judged only against a run's own clock
    label: str  # how a finding names the span

    @classmethod
    def of_run(cls, started: datetime, finished: datetime) -> Clock:
        start, end = _utc(started) - MARGIN, _utc(max(started, finished)) + MARGIN
        return cls(start, end, True, f"the run's wall-clock window {_show(start)}..{_show(end)}")

    @classmethod
    def of_machine(cls, now: datetime | None = None) -> Clock:
        moment = _utc(now or datetime.now(UTC))
        return cls(moment - RECENT, moment + MARGIN, False, "the last 30 days of this clock")

    def holds(self, moment: datetime, *, spread: timedelta = timedelta(0)) -> bool:
        return self.start - spread <= moment <= self.end + spread

    def holds_epoch(self, number: float) -> bool:
        for seconds in (number, number / 1000):
            try:
                moment = datetime.fromtimestamp(seconds, UTC)
            except (OverflowError, OSError, ValueError):
                continue
            if self.holds(moment):
                return True
        return False


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _show(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


# --- the scan ------------------------------------------------------------------


def scan_volatile(
    value: Any, *, artifact: str, clock: Clock, exempt: Sequence[PathPattern] = ()
) -> tuple[Finding, ...]:
    """Every run id, wall-clock time (by ``clock``) or timing value in ``value``.

    Keys are strings too: a key holding a run id or a wall-clock date-time is
    reported at the member it names.
    """
    rules = [p for p in exempt if p.applies_to(artifact)]
    findings: list[Finding] = []
    for parts, member in walk(value):
        if rules and any(rule.covers(parts) for rule in rules):
            continue
        reason = _judge_member(parts, member, clock)
        if reason is not None:
            findings.append(Finding(format_pointer(parts), reason))
    return tuple(findings)


def _judge_member(parts: tuple[Part, ...], member: Any, clock: Clock) -> str | None:
    key = parts[-1] if parts and isinstance(parts[-1], str) else None
    if key is not None:
        reason = _judge_text(key, clock)
        if reason is not None:
            return f"key holds a {reason}"
        if _is_number(member):
            if _TIMING_KEY.search(key):
                return f"timing value under {key!r}"
            if clock.epochs and _TIME_KEY.search(key) and clock.holds_epoch(member):
                return f"epoch time {member} under {key!r}, inside {clock.label}"
    if isinstance(member, str):
        return _judge_text(member, clock)
    return None


def _is_number(member: Any) -> bool:
    return isinstance(member, int | float) and not isinstance(member, bool)


def _judge_text(text: str, clock: Clock) -> str | None:
    hit = _RUN_ID.search(text)
    if hit is not None:
        return f"Silo run id {hit.group()!r}"
    for pattern in (_EXTENDED, _BASIC):
        for match in pattern.finditer(text):
            moment, zoned = _moment(match)
            if moment is None:
                continue
            if clock.holds(moment):
                return f"wall-clock date-time {match.group()!r}, inside {clock.label}"
            if not zoned and clock.holds(moment, spread=_ZONELESS_SPREAD):
                return (
                    f"wall-clock date-time {match.group()!r} (no time zone), within 14 hours "
                    f"of {clock.label}"
                )
    return None


def _moment(match: re.Match[str]) -> tuple[datetime | None, bool]:
    """The instant a date-time match names (UTC; zoneless read as UTC) and whether it has a zone."""
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    try:
        micro = int((fraction or "0")[:6].ljust(6, "0"))
        moment = datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second or 0), micro
        )
    except ValueError:  # 2026-13-45T99:99 names no instant: not a clock reading
        return None, False
    if zone is None:
        return moment.replace(tzinfo=UTC), False
    if zone in ("Z", "z"):
        return moment.replace(tzinfo=UTC), True
    sign = -1 if zone[0] == "-" else 1
    digits = zone[1:].replace(":", "")
    offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
    if offset >= timedelta(hours=24):
        return None, False
    return moment.replace(tzinfo=timezone(sign * offset)).astimezone(UTC), True
