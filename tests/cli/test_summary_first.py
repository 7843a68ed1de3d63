"""Summary first: counts by direction, scores, one line per task, shared notes folded."""

from __future__ import annotations

from support.silofixture import SiloProject, make_result, make_state_diff


def test_identical_notes_across_tasks_fold_into_one_line(project: SiloProject) -> None:
    for n, task in enumerate(("TASK-002", "TASK-003", "TASK-004")):
        project.add_run(task, started=f"2026-03-16T09:00:0{n}.000Z")
    assert project.cli("record", "--all").exit_code == 0
    for n, task in enumerate(("TASK-003", "TASK-004")):
        project.add_run(
            task,
            started=f"2026-03-16T10:00:0{n}.000Z",
            state_diff=make_state_diff(added=("AUD-0001", "AUD-0002"), changed=("OPP-007",)),
        )
    project.add_run(
        "TASK-002", started="2026-03-16T10:00:09.000Z", result=make_result(passed=False, reward=0)
    )
    out = project.cli("check").stdout
    lines = out.splitlines()
    assert lines[1] == "by task: 1 regression, 2 drifts (3 tasks)"
    assert lines[2] == "pass rate 3/3 -> 2/3, total reward 3 -> 2 over 3 tasks with results"
    # One line per task, regressions first.
    assert lines[3].startswith("  regression  TASK-002 (crm-west): now FAILS")
    assert lines[4].startswith(
        "  drift       TASK-003 (crm-west): auditLog: now also adds AUD-0002"
    )
    assert lines[5].startswith("  drift       TASK-004 (crm-west): ")
    # Shared notes once, in the reader's words, naming the tasks once for all of them.
    shared = lines.index("  same in TASK-003 (crm-west), TASK-004 (crm-west) (state-diff.json):")
    assert (
        "    - opportunities: no longer changes OPP-005; now also changes OPP-007"
        in lines[shared + 1 : shared + 3]
    )
    assert out.count("same in ") == 1
    assert out.count("now also changes OPP-007") == 3  # two summary lines + the folded one
    assert "    - and 2 shared with other tasks (listed above)" in out
