"""The tally file: canonical round trip, and every hostile edit a named error with its path."""

from __future__ import annotations

import json
from typing import Any

import pytest

from silo_regress.errors import ExitCode, InputError
from silo_regress.stats.tally import (
    Tally,
    TallyError,
    TallyFormatError,
    parse_tally,
    serialize_tally,
)

SOURCE = "baselines/crm/TASK-001.tally.json"


def _tally() -> Tally:
    return Tally(
        rollouts=10,
        passed=9,
        checks=(("refund issued", 9), ("reply/sent", 10)),
        reward_sum=9.5,
        reward_squares=9.25,
        variants=(("result.json", (7, 2)),),
    )


def _bytes(value: dict[str, Any]) -> bytes:
    # the canonical layout by hand: sorted keys, two spaces, a final newline
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def _valid() -> dict[str, Any]:
    return json.loads(serialize_tally(_tally()))  # type: ignore[no-any-return]


def test_a_tally_round_trips_through_its_canonical_bytes() -> None:
    data = serialize_tally(_tally())
    assert parse_tally(data, source=SOURCE) == _tally()
    assert data == _bytes(_valid())
    assert b"at" not in data.replace(b"format", b"")  # no timestamps, no run ids
    text = data.decode()
    assert '"rollouts": 10' in text and '"sum-of-squares": 9.25' in text


def test_whole_rewards_print_as_integers() -> None:
    data = serialize_tally(Tally(rollouts=2, passed=2, reward_sum=2.0, reward_squares=2.0))
    assert b'"sum": 2,' in data
    assert parse_tally(data, source=SOURCE).reward_sum == 2


@pytest.mark.parametrize(
    ("edit", "path", "words"),
    [
        (lambda v: v.update(passed=11), "/passed", "more than the 10 rollouts"),
        (lambda v: v["checks"].update({"refund issued": 12}), "/checks/refund issued", "more than"),
        (lambda v: v["checks"].update({"reply/sent": -1}), "/checks/reply~1sent", "negative"),
        (lambda v: v.update(rollouts=-3), "/rollouts", "negative"),
        (lambda v: v.update(passed=4.5), "/passed", "whole number, not 4.5"),
        (lambda v: v.update(passed=True), "/passed", "whole number, not true"),
        (lambda v: v.update(rollouts="10"), "/rollouts", "whole number, not a string"),
        (lambda v: v["variants"].update({"result.json": [7, 4]}), "/variants/result.json", "11"),
        (lambda v: v["variants"].update({"result.json": 7}), "/variants/result.json", "array"),
        (lambda v: v["variants"]["result.json"].append(-1), "/variants/result.json/2", "negative"),
        (lambda v: v["reward"].update(sum=None), "/reward/sum", "a number, not null"),
        (lambda v: v["reward"].pop("sum-of-squares"), "/reward/sum-of-squares", "missing"),
        (lambda v: v["reward"].update({"mean": 1}), "/reward/mean", "not a key"),
        (lambda v: v.pop("checks"), "/checks", "missing"),
        (lambda v: v.update(startedAt="2026-03-16"), "/startedAt", "not a key"),
        (lambda v: v.update(format=0), "/format", "must be 1, not 0"),
        (lambda v: v.update(checks=[]), "/checks", "an object, not an array"),
    ],
)
def test_a_hostile_tally_is_a_named_error_with_its_json_path(
    edit: Any, path: str, words: str
) -> None:
    value = _valid()
    edit(value)
    with pytest.raises(TallyError) as caught:
        parse_tally(_bytes(value), source=SOURCE)
    message = caught.value.message
    assert message.startswith(f"{SOURCE}: {path} "), message
    assert words in message, message
    assert caught.value.exit_code is ExitCode.BAD_INPUT


def test_a_non_canonical_tally_is_refused_and_fmt_named() -> None:
    compact = json.dumps(_valid()).encode()
    with pytest.raises(TallyError, match="not in canonical form: run `silo-regress fmt`"):
        parse_tally(compact, source=SOURCE)


def test_a_tally_of_a_newer_format_asks_for_an_upgrade() -> None:
    value = _valid()
    value["format"] = 2
    with pytest.raises(TallyFormatError, match=r"/format is 2, written by a newer silo-regress"):
        parse_tally(_bytes(value), source=SOURCE)


def test_a_tally_that_is_not_json_or_not_an_object_names_the_file() -> None:
    with pytest.raises(InputError, match=SOURCE):
        parse_tally(b'{"rollouts": ', source=SOURCE)
    with pytest.raises(TallyError, match=f"{SOURCE}: / must be an object, not an array"):
        parse_tally(b"[]\n", source=SOURCE)


def test_a_tally_value_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError):
        Tally(rollouts=3, passed=4)
