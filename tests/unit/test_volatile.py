"""The volatile scan (silo_regress.canon.volatile): run ids, wall-clock times, timing values.

Wall-clock time is judged against the run's own clock window (startedAt - 10 min to
finishedAt + 10 min); anything else dated is simulated time and records. The
differential tests plant simulated and wall-clock times in generated runs and ask
whether the scan (and, end to end, ``record``) finds exactly the wall-clock ones.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from support.silofixture import SiloProject, make_result, silo_json

from silo_regress.canon.canonical import canonicalize, serialize
from silo_regress.canon.pointer import PathPattern, format_pointer
from silo_regress.canon.volatile import Clock, Finding, might_be_volatile, scan_volatile

SETTINGS = settings(
    max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
STARTED = datetime(2026, 12, 2, 10, 0, 0, tzinfo=UTC)
FINISHED = datetime(2026, 12, 2, 10, 5, 0, tzinfo=UTC)
RUN = Clock.of_run(STARTED, FINISHED)  # 09:50 .. 10:15
ALONE = Clock.of_machine(FINISHED)  # no run at hand: the 30 days before


def pointers(
    value: Any,
    clock: Clock = RUN,
    artifact: str = "result.json",
    exempt: tuple[str, ...] = (),
) -> list[str]:
    patterns = [PathPattern.parse(p) for p in exempt]
    return [
        f.pointer for f in scan_volatile(value, artifact=artifact, clock=clock, exempt=patterns)
    ]


def iso(moment: datetime) -> str:
    """What JavaScript's Date.prototype.toISOString prints."""
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


# --- the rules -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "run_20260316101502_3k9",
        "see .silo/runs/run_20260316101502_zz/trace.jsonl",
        "run_20260316101502_100",
    ],
)
@pytest.mark.parametrize("clock", [RUN, ALONE], ids=["run", "alone"])
def test_run_ids_are_always_volatile(text: str, clock: Clock) -> None:
    findings = scan_volatile(["ok", text], artifact="result.json", clock=clock)
    assert findings == (Finding("/1", findings[0].reason),)
    assert "Silo run id" in findings[0].reason
    assert might_be_volatile(serialize(["ok", text]))


@pytest.mark.parametrize(
    "text",
    [
        "2026-12-02T10:02:03Z",
        "2026-12-02T10:02:03.123Z",
        "2026-12-02T09:50:00Z",  # the window's first second
        "2026-12-02T10:15:00.000Z",  # and its last
        "2026-12-02T11:02:03+01:00",  # 10:02 UTC
        "2026-12-02T05:02:03-0500",
        "2026-12-02 10:02",
        "meeting set for 2026-12-02T10:03:00Z, confirmed",
        "20261202T100203Z",
        "20261202T1002",
    ],
)
def test_datetimes_inside_the_runs_window_are_wall_clock(text: str) -> None:
    findings = scan_volatile({"agentOutput": text}, artifact="result.json", clock=RUN)
    assert [f.pointer for f in findings] == ["/agentOutput"]
    assert "wall-clock date-time" in findings[0].reason
    assert "2026-12-02T09:50:00Z..2026-12-02T10:15:00Z" in findings[0].reason
    assert might_be_volatile(serialize({"agentOutput": text}))


@pytest.mark.parametrize(
    "text",
    [
        "meeting set for 2026-03-16T10:00:00Z",  # the ERP world's simulated clock
        "2026-12-02T09:49:59Z",  # a second before the window
        "2026-12-02T10:15:00.001Z",  # a millisecond after it
        "2026-12-02T12:02:03+01:00",  # 11:02 UTC
        "2026-12-03T10:02:03Z",
        "2026-12-02",  # plain dates are never a clock reading
        "between 2026-12-02 and 2026-12-03",
        "10:02:03",
        "2026-13-45T99:99",  # names no instant
        "２０２６-12-02T10:02",  # fullwidth digits are not ISO 8601
    ],
)
def test_simulated_and_plain_dates_record(text: str) -> None:
    assert pointers({"agentOutput": text}) == []


def test_a_zoneless_datetime_is_wall_clock_in_any_zone() -> None:
    # Local time somewhere on earth: 14 hours either side of the window count.
    assert pointers(["2026-12-02 20:00"]) == ["/0"]
    assert pointers(["2026-12-03 00:14"]) == ["/0"]
    assert pointers(["2026-12-03 00:16"]) == []
    assert pointers(["2026-12-02T20:00Z"]) == []  # with a zone it is exact
    (finding,) = scan_volatile(["2026-12-02 20:00"], artifact="x", clock=RUN)
    assert "(no time zone), within 14 hours of the run's wall-clock window" in finding.reason


def test_epoch_numbers_under_time_like_keys_inside_the_window() -> None:
    seconds = int(datetime(2026, 12, 2, 10, 1, tzinfo=UTC).timestamp())
    value = {
        "createdAt": seconds,
        "updated_at": seconds * 1000,
        "at": seconds + 0.5,
        "startTime": seconds * 1000 + 17,
        "lastTimestamp": seconds,
        "epoch": seconds,
        "count": seconds,  # not a time-like key
        "format": seconds,
        "dueAt": seconds - 86_400,  # a day earlier: simulated
        "remindAt": "soon",
        "flagAt": True,
    }
    assert pointers(value) == [
        "/createdAt",
        "/updated_at",
        "/at",
        "/startTime",
        "/lastTimestamp",
        "/epoch",
    ]
    (first, *_) = scan_volatile(value, artifact="x", clock=RUN)
    assert first.reason.startswith(f"epoch time {seconds} under 'createdAt', inside the run's")
    # With no run at hand an epoch number cannot be told from any other.
    assert pointers(value, ALONE) == []
    assert might_be_volatile(serialize(value))


@pytest.mark.parametrize("clock", [RUN, ALONE], ids=["run", "alone"])
def test_timing_keys(clock: Clock) -> None:
    value = {
        "durationMs": 1234,
        "elapsedMs": 5,
        "toolDurationMs": 0.5,
        "stepElapsedMs": 12,
        "DurationMs": 1,  # no name before the suffix
        "duration": 3,
        "durationMsg": 4,
        "timeoutMs": 5,
        "nested": {"durationMs": "fast"},  # only numbers are timing values
    }
    assert pointers(value, clock) == [
        "/durationMs",
        "/elapsedMs",
        "/toolDurationMs",
        "/stepElapsedMs",
    ]
    assert (
        scan_volatile(value, artifact="x", clock=clock)[0].reason
        == "timing value under 'durationMs'"
    )


def test_a_run_json_is_volatile_by_its_own_clock() -> None:
    run = {
        "runId": "run_20261202100000_3k9",
        "environment": "crm-west",
        "taskId": "TASK-002",
        "startedAt": iso(STARTED),
        "finishedAt": iso(FINISHED),
        "durationMs": 300000,
        "terminationReason": "completed",
    }
    assert pointers(run) == ["/runId", "/startedAt", "/finishedAt", "/durationMs"]


def test_alone_only_the_last_30_days_count() -> None:
    value = {
        "a": "2026-12-01T08:00:00Z",
        "b": "2026-11-03T10:06:00Z",  # 29 days 23:59 before the clock
        "c": "2026-11-01T10:00:00Z",
        "d": "2026-03-16T10:00:00Z",
        "e": "2026-12-02T10:12:00Z",  # the 10 minutes ahead allowed for skew
        "f": "2026-12-02T11:00:00Z",
    }
    assert pointers(value, ALONE) == ["/a", "/b", "/e"]
    (finding, *_) = scan_volatile(value, artifact="x", clock=ALONE)
    assert finding.reason.endswith("inside the last 30 days of this clock")


def test_keys_holding_wall_clock_times_or_run_ids() -> None:
    value = {
        "agentOutput": {"2026-12-02T10:01:02Z": "seen", "2026-03-16T10:01:02Z": "simulated"},
        "runs": {"run_20260316101502_3k9": {"passed": True}},
    }
    findings = scan_volatile(value, artifact="result.json", clock=RUN)
    assert [f.pointer for f in findings] == [
        "/agentOutput/2026-12-02T10:01:02Z",
        "/runs/run_20260316101502_3k9",
    ]
    assert findings[0].reason.startswith("key holds a wall-clock date-time")
    assert findings[1].reason.startswith("key holds a Silo run id")
    assert pointers(value, exempt=("/runs/*", "/agentOutput")) == []


def test_pointers_escape_slash_and_tilde() -> None:
    value = {
        "a/b": {"durationMs": 1},
        "m~n": ["x", "2026-12-02T10:15:00Z"],
        "~1": "run_20260316101502_0",
    }
    assert pointers(value) == ["/a~1b/durationMs", "/m~0n/1", "/~01"]


def test_exemptions() -> None:
    now = "2026-12-02T10:01:00Z"
    value = {
        "checks": [
            {"label": f"at {now}", "detail": now},
            {"label": "ok", "detail": "took run_20260316101502_3k9"},
        ],
        "agentOutput": {"durationMs": 1, "text": now},
        "error": now,
    }
    everything = [
        "/checks/0/label",
        "/checks/0/detail",
        "/checks/1/detail",
        "/agentOutput/durationMs",
    ]
    everything += ["/agentOutput/text", "/error"]
    assert pointers(value) == everything
    assert pointers(value, exempt=("/checks/*/detail",)) == [
        "/checks/0/label",
        "/agentOutput/durationMs",
        "/agentOutput/text",
        "/error",
    ]
    # An artifact-qualified pattern applies only to that artifact.
    assert pointers(value, exempt=("result.json:/agentOutput",)) == [*everything[:3], "/error"]
    assert pointers(value, RUN, "state-diff.json", ("result.json:/agentOutput",)) == everything
    assert pointers(value, exempt=("/checks", "/agentOutput", "/error")) == []
    assert pointers(value, exempt=("",)) == []  # the whole document


# --- the prefilter -------------------------------------------------------------------


def test_silo_shaped_files_skip_the_scan() -> None:
    result = make_result(agent_output="Meeting set for 2026-12-03, see AUD-0001.")
    state = {"scalars": [{"field": "stage", "from": "lead", "to": "won"}], "collections": {}}
    samples: tuple[Any, ...] = (result, state, {}, [], None, "x", {"note": "at", "x": "startedAt"})
    for value in samples:
        assert not might_be_volatile(serialize(value))


_TIMES = [STARTED + timedelta(minutes=m) for m in (-11, -9, 0, 7, 14, 16)] + [
    datetime(2026, 3, 16, 10, tzinfo=UTC)
]
_PIECES = st.sampled_from(
    [iso(t) for t in _TIMES]
    + [t.strftime("%Y%m%dT%H%M%S") for t in _TIMES]
    + [t.astimezone(timezone(timedelta(hours=5, minutes=30))).isoformat() for t in _TIMES]
    + [
        "2026-12-02",
        " ",
        "T",
        ":",
        "10:15",
        "Z",
        "run_",
        "20260316101502",
        "_3k9",
        "９",
        '"',
        "\\",
        "\n",
    ]
)
_text = st.lists(_PIECES, max_size=4).map("".join)
_KEYS = st.one_of(
    _text,
    st.sampled_from(["at", "createdAt", "start_time", "durationMs", "toolElapsedMs", "count", "x"]),
)
_epochs = st.sampled_from(
    [int(t.timestamp()) for t in _TIMES] + [int(t.timestamp() * 1000) for t in _TIMES]
)
_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        _epochs,
        st.floats(allow_nan=False, allow_infinity=False),
        _text,
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(_KEYS, children, max_size=3)
    ),
    max_leaves=8,
)


@SETTINGS
@given(_values, st.sampled_from([RUN, ALONE]))
def test_the_prefilter_never_misses(value: Any, clock: Clock) -> None:
    found = scan_volatile(value, artifact="result.json", clock=clock)
    event("volatile" if found else "clean")
    if found:
        assert might_be_volatile(canonicalize(serialize(value), source="x").text)


@pytest.mark.parametrize(
    "extra",
    [
        {"durationMs": 5},
        {"createdAt": 1764669600},
        {"note": "run_20260316101502_0"},
        {"d": "2026-12-02T10:00"},
    ],
)
def test_the_prefilter_on_a_large_file_with_few_keys(extra: dict[str, Any]) -> None:
    ids = [f"AUD-{i:07d}" for i in range(60_000)]
    clean = serialize({"collections": {"auditLog": {"added": ids}}})
    assert len(clean) > 1 << 20 and not might_be_volatile(clean)
    assert might_be_volatile(serialize({"collections": {"auditLog": {"added": ids, **extra}}}))


# --- differential: generated runs with simulated and wall-clock times ---------------------


def _plant(rng: random.Random, started: datetime, finished: datetime) -> tuple[Any, set[str]]:
    """An agentOutput holding times of both kinds, and the pointers of the wall-clock ones."""
    wall: set[str] = set()
    output: dict[str, Any] = {}
    for i in range(rng.randint(1, 8)):
        if rng.random() < 0.5:  # wall clock: somewhere in [start - 10 min, finish + 10 min]
            span = (finished - started).total_seconds() + 1200
            moment = started - timedelta(minutes=10) + timedelta(seconds=rng.uniform(0, span))
            moment = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
            is_wall = True
        else:  # simulated: at least a day away, either side
            moment = started + rng.choice([-1, 1]) * timedelta(days=rng.uniform(1, 400))
            is_wall = False
        kind = rng.choice(["iso", "offset", "prose", "basic", "epoch-s", "epoch-ms", "key"])
        key = f"item{i}"
        if kind == "iso":
            member: Any = iso(moment)
        elif kind == "offset":
            zone = timezone(timedelta(hours=rng.randint(-11, 13)))
            member = moment.astimezone(zone).isoformat(timespec="seconds")
        elif kind == "prose":
            member = f"Meeting set for {moment.strftime('%Y-%m-%dT%H:%M:%SZ')}, see you."
        elif kind == "basic":
            member = moment.strftime("%Y%m%dT%H%M%SZ")
        elif kind == "epoch-s":
            key, member = f"item{i}At", int(moment.timestamp())
        elif kind == "epoch-ms":
            key, member = f"item{i}_time", int(moment.timestamp() * 1000)
        else:
            key, member = iso(moment), "seen"
        output[key] = member
        if is_wall:
            wall.add(format_pointer(("agentOutput", key)))
    return output, wall


@pytest.mark.parametrize("seed", range(40))
def test_differential_scan_finds_exactly_the_wall_clock_times(seed: int) -> None:
    rng = random.Random(seed)
    started = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=rng.uniform(0, 3e7))
    finished = started + timedelta(seconds=rng.uniform(0, 3600))
    output, wall = _plant(rng, started, finished)
    value = make_result(agent_output=output)
    text = canonicalize(orjson.dumps(value), source="x").text
    found = scan_volatile(value, artifact="result.json", clock=Clock.of_run(started, finished))
    assert {f.pointer for f in found} == wall
    assert might_be_volatile(text) or not wall


@pytest.mark.parametrize("seed", range(6))
def test_differential_record_refuses_exactly_the_wall_clock_times(
    project: SiloProject, seed: int
) -> None:
    rng = random.Random(1000 + seed)
    started = datetime(2026, 3, 16, 9, tzinfo=UTC) + timedelta(hours=rng.uniform(0, 48))
    finished = started + timedelta(seconds=rng.uniform(1, 900))
    output, wall = _plant(rng, started, finished)
    run_json = {
        "runId": f"run_{started:%Y%m%d%H%M%S}_a{seed}",
        "environment": "crm-west",
        "taskId": "TASK-002",
        "startedAt": iso(started),
        "finishedAt": iso(finished),
        "durationMs": int((finished - started).total_seconds() * 1000),
    }
    project.add_run(
        "TASK-002",
        started=iso(started),
        result=make_result(agent_output=output),
        files={"run.json": silo_json(run_json)},
    )
    result = project.cli("record", "TASK-002")
    if not wall:
        assert result.exit_code == 0, result.output
        recorded = json.loads((project.baselines / "TASK-002.result.json").read_bytes())
        assert recorded["agentOutput"] == output  # simulated times kept as they were
        return
    assert result.exit_code == 3, result.output
    assert result.stderr.startswith("silo-regress: error: refusing to record volatile content: ")
    named = {p for p in (f"/{part.split(': ')[0]}" for part in result.stderr.split(" at /")[1:])}
    assert named == wall
    assert not project.baselines.exists()
