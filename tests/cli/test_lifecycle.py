"""The whole contract in one story, through the real command line.

unrecorded -> record -> match -> the agent's behaviour changes -> check fails and
the baseline is untouched -> re-record -> match again -> record again is a no-op.
"""

from __future__ import annotations

import pytest
from support.silofixture import SiloProject, make_result


def test_record_check_change_rerecord(
    project: SiloProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project.root)  # the user's case: in the project, advice needs no -C
    project.add_run("TASK-002", env="crm-west", started="2026-03-16T10:00:00.000Z")

    # Unrecorded: a check that compares nothing is bad setup (exit 3, naming where it
    # looked), never a silent pass; a named task without a baseline is a failure.
    empty = project.cli("check")
    assert empty.exit_code == 3, empty.output
    assert "no baselines to check" in empty.stderr and "baselines/" in empty.stderr

    unrecorded = project.cli("check", "TASK-002")
    assert unrecorded.exit_code == 1, unrecorded.output
    assert "MISSING BASELINE" in unrecorded.stdout
    assert "2 missing-baseline" in unrecorded.stdout
    assert "silo-regress record TASK-002" in unrecorded.stdout
    assert not project.baselines.exists()

    # Record: two new files in canonical form and the format file.
    recorded = project.cli("record", "TASK-002")
    assert recorded.exit_code == 0, recorded.output
    assert "from run run_20260316100000_" in recorded.stdout
    assert recorded.stdout.count("new") == 2
    assert (project.baselines / ".silo-regress-format").read_bytes() == b"1\n"
    assert sorted(project.baseline_bytes()) == [
        ".silo-regress-format",
        "TASK-002.result.json",
        "TASK-002.state-diff.json",
    ]
    result_bytes = (project.baselines / "TASK-002.result.json").read_bytes()
    assert result_bytes.startswith(b'{\n  "agentOutput": "Done.",\n')
    assert result_bytes.endswith(b"}\n")

    # The same run matches.
    matched = project.cli("check")
    assert matched.exit_code == 0, matched.output
    assert "2 match (2 artifacts of 1 task)" in matched.stdout

    # A new run whose behaviour changed: a required check now fails.
    checks = [
        {"label": "Lead qualified", "passed": False, "detail": "stage is lead", "required": True},
        {"label": "Note logged", "passed": True, "detail": "AUD-0001", "required": False},
    ]
    project.add_run(
        "TASK-002",
        env="crm-west",
        started="2026-03-16T11:00:00.000Z",
        result=make_result(passed=False, reward=0, checks=checks, tool_calls=5),
    )
    before = project.baseline_bytes()
    failed = project.cli("check")
    assert failed.exit_code == 1, failed.output
    out = failed.stdout
    assert "CHANGED  TASK-002 (crm-west)  result.json  (run run_20260316110000_" in out
    assert "now FAILS (passed: true -> false)" in out
    assert "reward 1 -> 0" in out
    assert 'check "Lead qualified" passed -> failed' in out
    assert "toolCalls 3 -> 5 (+2)" in out
    assert '-  "passed": true,' in out
    assert '+  "passed": false,' in out
    assert "1 changed, 1 match" in out
    assert "accept it with: silo-regress record TASK-002" in out
    assert project.baseline_bytes() == before

    # Accept the new behaviour: one file changed, one unchanged.
    rerecorded = project.cli("record", "TASK-002")
    assert rerecorded.exit_code == 0, rerecorded.output
    assert "from run run_20260316110000_" in rerecorded.stdout
    lines = rerecorded.stdout.splitlines()
    assert any(line.split() == ["changed", "baselines/TASK-002.result.json"] for line in lines)
    assert any(
        line.split() == ["unchanged", "baselines/TASK-002.state-diff.json"] for line in lines
    )
    assert project.baseline_bytes()["TASK-002.result.json"] != before["TASK-002.result.json"]

    again = project.cli("check")
    assert again.exit_code == 0, again.output
    assert "2 match" in again.stdout

    after = project.baseline_bytes()
    noop = project.cli("record", "TASK-002")
    assert noop.exit_code == 0, noop.output
    assert noop.stdout.count("unchanged") == 2
    assert "new" not in noop.stdout.replace("newest", "")
    assert project.baseline_bytes() == after
