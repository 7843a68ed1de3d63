"""tool-events.json through the real command line: like any artifact, derived from the trace."""

from __future__ import annotations

import json
from pathlib import Path

from support.silofixture import SiloProject, git, git_init, make_project, make_result

CONFIG = 'artifacts = ["result.json", "tool-events.json"]\n'


def trace(*calls: tuple[str, dict[str, object], dict[str, object], bool]) -> bytes:
    """An old-format trace: seq on every event, odd for a call, even for its result."""
    lines = []
    for i, (tool, given, output, error) in enumerate(calls):
        at = f"2026-03-16T10:00:{i:02d}.000Z"
        lines.append(
            {"seq": 2 * i + 1, "type": "tool_call", "at": at, "tool": tool, "input": given}
        )
        lines.append(
            {
                "seq": 2 * i + 2,
                "type": "tool_result",
                "at": at,
                "tool": tool,
                "output": output,
                "isError": error,
            }
        )
    return b"".join(json.dumps(e, separators=(",", ":")).encode() + b"\n" for e in lines)


FIRST = trace(
    ("search_contacts", {"q": "Zoë"}, {"ids": ["CON-1"]}, False),
    ("update_deal", {"id": "DEAL-7", "amount": 140000}, {"ok": True}, False),
)
SECOND = trace(
    ("search_contacts", {"q": "Zoë"}, {"ids": ["CON-1"]}, False),
    ("update_deal", {"id": "DEAL-7", "amount": 14000}, {"ok": True}, False),
)


def add(
    project: SiloProject, data: bytes | None, *, calls: int = 2, started: str | None = None
) -> Path:
    return project.add_run(
        "TASK-001",
        started=started,
        result=make_result(tool_calls=calls),
        files={"trace.jsonl": data},
    )


def recorded(root: Path) -> SiloProject:
    project = make_project(root, config=CONFIG)
    add(project, FIRST)
    done = project.cli("record", "TASK-001")
    assert done.exit_code == 0, done.output
    return project


def test_record_writes_the_derived_path_and_check_matches(tmp_path: Path) -> None:
    project = recorded(tmp_path / "p")
    baseline = (project.baselines / "TASK-001.tool-events.json").read_bytes()
    assert baseline.startswith(b'[\n  {\n    "input": {\n      "q": "Zo\xc3\xab"\n    },\n')
    assert b'"at"' not in baseline
    assert not (project.runs_dir / "tool-events.json").exists()
    matched = project.cli("check")
    assert matched.exit_code == 0, matched.output
    assert "2 match" in matched.stdout


def test_a_changed_path_fails_check_in_every_format(tmp_path: Path) -> None:
    project = recorded(tmp_path / "p")
    add(project, SECOND, started="2026-03-16T11:00:00.000Z")
    text = project.cli("check")
    assert text.exit_code == 1
    assert "tool-events.json" in text.stdout and "CHANGED" in text.stdout
    assert "    - call 2 update_deal: input.amount 140000 -> 14000\n" in text.stdout
    report = json.loads(project.cli("check", "--format", "json").stdout)
    [changed] = [r for r in report["results"] if r["status"] == "changed"]
    assert changed["artifact"] == "tool-events.json"
    assert changed["run"].endswith("/trace.jsonl")
    assert changed["changes"] == [{"path": "/2/input/amount", "baseline": 140000, "run": 14000}]
    assert changed["notes"] == [
        {
            "kind": "tool-call-changed",
            "call": 2,
            "tool": "update_deal",
            "side": "input",
            "path": "/amount",
            "baseline": 140000,
            "run": 14000,
        }
    ]
    markdown = project.cli("check", "--format", "markdown").stdout
    assert "| call 2 update_deal: input.amount 140000 -> 14000 |" in markdown
    for fmt in ("markdown", "junit", "github"):
        out = project.cli("check", "--format", fmt)
        assert out.exit_code == 1 and "tool-events.json" in out.stdout, fmt
    status = project.cli("status")
    assert "changed" in status.stdout


def test_a_truncated_trace_is_an_incomplete_run_with_its_reason(tmp_path: Path) -> None:
    project = recorded(tmp_path / "p")
    run = add(project, FIRST[:-20], started="2026-03-16T11:00:00.000Z")
    report = json.loads(project.cli("check", "--format", "json").stdout)
    by_artifact = {r["artifact"]: r for r in report["results"]}
    assert by_artifact["result.json"]["status"] == "match"
    assert by_artifact["tool-events.json"]["status"] == "incomplete-run"
    text = project.cli("check")
    assert text.exit_code == 1
    assert f"{run.name}/trace.jsonl line 4 is cut off" in text.stdout
    refused = project.cli("record", "TASK-001")
    assert refused.exit_code == 3
    assert f"so run {run.name} cannot be recorded" in refused.stderr
    assert "Traceback" not in refused.output


def test_no_trace_and_no_calls_records_the_empty_path(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", config=CONFIG)
    add(project, None, calls=0)
    assert project.cli("record", "TASK-001").exit_code == 0
    assert (project.baselines / "TASK-001.tool-events.json").read_bytes() == b"[]\n"
    add(project, None, calls=3, started="2026-03-16T11:00:00.000Z")
    lost = project.cli("check")
    assert lost.exit_code == 1
    assert "trace.jsonl is missing, but result.json counts 3 tool calls" in lost.stdout


def test_configured_per_task_like_any_artifact(tmp_path: Path) -> None:
    # With the default artifacts, the trace is never read: a broken one does not matter.
    project = make_project(tmp_path / "p")
    add(project, b"garbage")
    assert project.cli("record", "TASK-001").exit_code == 0
    assert project.cli("check").exit_code == 0
    assert not (project.baselines / "TASK-001.tool-events.json").exists()


def test_check_against_a_commit(tmp_path: Path) -> None:
    project = recorded(tmp_path / "repo")
    git_init(project.root)
    git(project.root, "add", "-A")
    git(project.root, "commit", "-q", "-m", "Baselines with the tool path")
    first = git(project.root, "rev-parse", "HEAD").stdout.strip()
    add(project, SECOND, started="2026-03-16T11:00:00.000Z")
    assert project.cli("record", "TASK-001").exit_code == 0
    git(project.root, "commit", "-q", "-am", "Accept the smaller amount")
    assert project.cli("check").exit_code == 0
    old = project.cli("check", "--against", first[:10], "--format", "json")
    assert old.exit_code == 1
    statuses = {r["artifact"]: r["status"] for r in json.loads(old.stdout)["results"]}
    assert statuses == {"result.json": "match", "tool-events.json": "changed"}


def test_trace_events_chooses_the_event_types_kept(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", config=CONFIG + 'trace-events = ["tool_call"]\n')
    add(project, FIRST)
    assert project.cli("record", "TASK-001").exit_code == 0
    baseline = (project.baselines / "TASK-001.tool-events.json").read_bytes()
    assert baseline.count(b'"type": "tool_call"') == 2
    assert b"tool_result" not in baseline
