"""record's options, judged by the use case without typer (commands/recording.py): each
rule that refuses a combination, and the combinations that go through."""

from __future__ import annotations

import pytest

from silo_regress.commands.recording import RecordRequest, check_request
from silo_regress.commands.rollouts import RolloutFlags
from silo_regress.errors import UsageError

REFUSED = [
    (RecordRequest(refs=("T",), repeat=3, dry_run=True), "--path and --dry-run"),
    (RecordRequest(refs=("T",), paths=("/x",), add_variant=True), "--path edits"),
    (RecordRequest(run_id="r", old_run_id="r"), "give --run-id once"),
    (RecordRequest(refs=("T",), flags=RolloutFlags(jobs=2)), "--jobs only apply with --repeat"),
    (RecordRequest(refs=("T",), all_tasks=True), "--all records every task"),
    (RecordRequest(), "name the tasks to record"),
    (RecordRequest(run_id="r", repeat=3), "give no --run-id"),
    (RecordRequest(refs=("T",), force=True), "--force only applies"),
    (RecordRequest(refs=("T",), variants=True), "--variants only applies"),
    (RecordRequest(refs=("T",), repeat=3, variants=True, force=True), "choose one"),
    (RecordRequest(refs=("T",), repeat=3, add_variant=True), "--add-variant adds one run"),
]


@pytest.mark.parametrize(("request_", "words"), REFUSED)
def test_a_combination_that_cannot_work_is_a_usage_error(
    request_: RecordRequest, words: str
) -> None:
    with pytest.raises(UsageError, match=words):
        check_request(request_, named=bool(request_.refs))


@pytest.mark.parametrize(
    "request_",
    [
        RecordRequest(refs=("T",)),
        RecordRequest(all_tasks=True),
        RecordRequest(run_id="run_20260316101502_3k9"),
        RecordRequest(refs=("T",), repeat=4, variants=True, flags=RolloutFlags(jobs=2)),
        RecordRequest(refs=("T",), repeat=4, force=True),
        RecordRequest(refs=("T",), paths=("/reward",), dry_run=True),
        RecordRequest(refs=("T",), add_variant=True),
    ],
)
def test_the_combinations_that_work_go_through(request_: RecordRequest) -> None:
    check_request(request_, named=bool(request_.refs))
