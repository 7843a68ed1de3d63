"""Reports name the run's agent and commit where known, and bad inputs or records are
named, never trusted and never a traceback.

The runs are real: fake Silo started by ``silo-regress run`` (which writes the
provenance record), or written by hand where Silo alone would have made them.
"""

from __future__ import annotations

import json
import os
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support.gitrepo import agent_project
from support.silofixture import SiloProject, git, make_project, make_result, unreadable

from silo_regress import __version__
from silo_regress.project import fingerprint
from silo_regress.runs.provenance import PROVENANCE_FILE, Provenance, write_provenance

HEX = set("0123456789abcdef")


@pytest.fixture(autouse=True)
def _quiet_silo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAKE_SILO_CONTROL", raising=False)
    monkeypatch.setenv("FAKE_SILO_MODE", "ok")


def _project(tmp_path: Path, extra: str = "") -> SiloProject:
    return agent_project(tmp_path / "project", extra=extra, files={"notes.md": "notes\n"})


def _regressed(project: SiloProject, monkeypatch: pytest.MonkeyPatch) -> str:
    """TASK-001 recorded passing, then run again (same agent) failing; HEAD's hash."""
    assert project.cli("run", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    time.sleep(1.1)  # fake Silo names runs by the second
    (project.root / "notes.md").write_text("edited, not committed\n")  # the tree is dirty
    monkeypatch.setenv("FAKE_SILO_MODE", "fail")
    project.cli("run", "TASK-001")
    return git(project.root, "rev-parse", "HEAD").stdout.strip()


def test_every_format_names_the_agent_and_commit_of_a_changed_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path)
    head = _regressed(project, monkeypatch)
    made_by = f"made by agent silo.agent.ts at commit {head[:7]}+dirty"
    text = project.cli("check")
    assert text.exit_code == 1, text.output
    assert "CHANGED  TASK-001 (crm-west)  result.json" in text.stdout
    assert f"\n  {made_by}\n" in text.stdout

    document = json.loads(project.cli("check", "--format", "json").stdout)
    changed = next(r for r in document["results"] if r["status"] == "changed")
    record = changed["provenance"]
    assert record["agent"] == "silo.agent.ts" and set(record["agentSha256"]) <= HEX
    assert len(record["agentSha256"]) == 64
    assert (record["commit"], record["dirty"], record["toolVersion"]) == (head, True, __version__)

    markdown = project.cli("check", "--format", "markdown").stdout
    assert f"- {made_by}" in markdown
    html = project.cli("check", "--format", "html").stdout
    assert made_by in html
    failure = ET.fromstring(project.cli("check", "--format", "junit").stdout).find(".//failure")
    assert failure is not None and failure.text is not None and made_by in failure.text

    # merge reads the provenance back: the merged report says the same.
    report = tmp_path / "report.json"
    project.cli("check", "--format", "json", "--output", str(report))
    merged = project.cli("merge", str(report))
    assert f"\n  {made_by}\n" in merged.stdout
    again = json.loads(project.cli("merge", str(report), "--format", "json").stdout)
    assert again["results"] == document["results"]


def test_a_run_silo_made_alone_has_no_provenance(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    project.add_run("TASK-001", result=make_result(passed=False, reward=0))
    checked = project.cli("check")
    assert checked.exit_code == 1
    assert "made by" not in checked.stdout
    results = json.loads(project.cli("check", "--format", "json").stdout)["results"]
    assert [r["provenance"] for r in results] == [None, None]


def _record(task: str = "TASK-001") -> Provenance:
    return Provenance(
        environment="crm-west",
        task_id=task,
        fingerprint=None,
        inputs=(),
        agent="lead.agent.ts",
        agent_sha256="a" * 64,
        silo_command=("npx", "silo"),
        commit="0123456789abcdef0123456789abcdef01234567",
        dirty=False,
    )


def test_without_inputs_a_record_still_names_the_run(tmp_path: Path) -> None:
    """No `inputs` and no `agent`: nothing is stale, but the record says who made the run."""
    project = make_project(tmp_path / "p")
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    run = project.add_run("TASK-001", result=make_result(passed=False, reward=0))
    write_provenance(run, _record())
    checked = project.cli("check")
    assert checked.exit_code == 1
    assert "\n  made by agent lead.agent.ts at commit 0123456\n" in checked.stdout
    results = json.loads(project.cli("check", "--format", "json").stdout)["results"]
    assert results[0]["provenance"]["commit"] == _record().commit
    assert results[0]["provenance"]["dirty"] is False


def test_without_inputs_a_matching_run_leaves_its_record_unread(tmp_path: Path) -> None:
    """The hook's common case pays nothing for provenance: a match reads no record.

    A broken record beside a matching run would warn if it were read; it stays
    silent, while the same task's changed run still names what made it.
    """
    project = make_project(tmp_path / "p")
    first = project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    (first / PROVENANCE_FILE).write_bytes(b"{ not json")
    checked = project.cli("check", "--format", "json")
    assert checked.exit_code == 0
    assert PROVENANCE_FILE not in checked.stderr
    assert [r["provenance"] for r in json.loads(checked.stdout)["results"]] == [None, None]

    run = project.add_run("TASK-001", result=make_result(passed=False, reward=0))
    write_provenance(run, _record())
    results = json.loads(project.cli("check", "--format", "json").stdout)["results"]
    assert [r["status"] for r in results] == ["changed", "match"]
    # One run made both artifacts: the matching one is named too, from the same record.
    assert [r["provenance"]["commit"] for r in results] == [_record().commit] * 2


@pytest.mark.parametrize(
    ("mangle", "problem"),
    [
        (lambda b: b[: len(b) // 2], "silo-regress.json is not valid JSON (truncated?)"),
        (
            lambda b: b.replace(b'"version": 1', b'"version": 9'),
            "silo-regress.json was written by a newer silo-regress",
        ),
        (
            lambda b: b.replace(b"TASK-001", b"TASK-002"),
            "silo-regress.json names task crm-west/TASK-002, not this run's crm-west/TASK-001",
        ),
    ],
    ids=["truncated", "newer", "forged"],
)
def test_a_record_that_cannot_be_trusted_is_named_and_ignored(
    tmp_path: Path, mangle: object, problem: str
) -> None:
    project = make_project(tmp_path / "p")
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    run = project.add_run("TASK-001", result=make_result(passed=False, reward=0))
    write_provenance(run, _record())
    path = run / PROVENANCE_FILE
    path.write_bytes(mangle(path.read_bytes()))  # type: ignore[operator]
    checked = project.cli("check", "--format", "json")
    assert checked.exit_code == 1  # the verdict stands on the run's own files
    assert "Traceback" not in checked.output
    where = f".silo/runs/{run.name}/"
    assert f"silo-regress: warning: {where}{problem}" in checked.stderr
    assert "its agent and commit are not known" in checked.stderr
    results = json.loads(checked.stdout)["results"]
    assert [r["status"] for r in results] == ["changed", "match"]
    assert [r["provenance"] for r in results] == [None, None]


# --- inputs that cannot be trusted ---------------------------------------------------


def _recorded(tmp_path: Path, extra: str = "") -> SiloProject:
    """A project whose run Silo made alone (no record, judged by time), recorded."""
    project = _project(tmp_path, extra)
    project.add_run("TASK-001", env="crm-west", started="2026-01-01T00:00:00.000Z")
    assert project.cli("record", "TASK-001").exit_code == 0
    os.utime(project.root / "silo.agent.ts", (0, 0))  # older than the run
    assert project.cli("check").exit_code == 0
    return project


def test_an_input_dated_in_the_future_is_clock_skew_not_a_pass(tmp_path: Path) -> None:
    project = _recorded(tmp_path)
    future = time.time() + 3 * 86400
    os.utime(project.root / "silo.agent.ts", (future, future))
    checked = project.cli("check")
    assert checked.exit_code == 1
    assert "STALE RUN  TASK-001 (crm-west)  result.json" in checked.stdout
    assert (
        "silo.agent.ts has a modification time in the future (clock skew?), so no run is "
        "newer than it; fix the clock or `touch` it"
    ) in checked.stdout


def test_an_input_that_matches_nothing_is_a_named_warning(tmp_path: Path) -> None:
    project = _recorded(tmp_path, 'inputs = ["silo.agent.ts", "prompts/*.md"]\n')
    checked = project.cli("check")
    assert checked.exit_code == 0
    assert (
        "silo-regress: warning: inputs: 'prompts/*.md' matches no file in the working tree\n"
        in checked.stderr
    )


def test_an_input_symlink_out_of_the_project_is_named(tmp_path: Path) -> None:
    project = _recorded(tmp_path, 'inputs = ["*.ts"]\n')
    outside = tmp_path / "outside.ts"
    outside.write_text("not the project's\n")
    (project.root / "shared.ts").symlink_to(outside)
    os.utime(project.root / "shared.ts", (0, 0), follow_symlinks=False)
    checked = project.cli("check")
    assert checked.exit_code == 0, checked.output  # hashed as the link git stores, not followed
    assert "inputs: shared.ts is a symlink out of the project" in checked.stderr


def test_an_input_too_large_or_changing_is_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _recorded(tmp_path)
    monkeypatch.setattr(fingerprint, "MAX_FILE_BYTES", 4)
    huge = project.cli("check")
    assert huge.exit_code == 3
    assert huge.stderr.startswith("silo-regress: error: inputs: silo.agent.ts is 18 bytes;")
    assert huge.stdout == ""  # no verdict from inputs it could not read
    monkeypatch.setattr(fingerprint, "MAX_FILE_BYTES", 1 << 20)
    monkeypatch.setattr(fingerprint, "_hash_regular", lambda full, path: None)
    changing = project.cli("check")
    assert changing.exit_code == 3
    assert "silo.agent.ts kept changing while it was fingerprinted" in changing.stderr
    assert "Traceback" not in changing.output


def test_an_unreadable_input_is_exit_3(tmp_path: Path) -> None:
    project = _recorded(tmp_path)
    with unreadable(project.root / "silo.agent.ts"):
        checked = project.cli("check")
    assert checked.exit_code == 3
    assert checked.stderr == (
        "silo-regress: error: inputs: silo.agent.ts: cannot read: Permission denied\n"
    )


def test_a_git_index_that_cannot_be_read_stops_the_hook(tmp_path: Path) -> None:
    project = _recorded(tmp_path)
    index = project.root / ".git" / "index"
    before = project.baseline_bytes()
    index.write_bytes(b"DIRC" + b"\0" * 4)  # cut short, as by a full disk
    staged = project.cli("check", "--staged")
    assert staged.exit_code == 3
    assert staged.stderr.startswith("silo-regress: error: ")
    assert ".git/index: index file smaller than expected" in staged.stderr
    assert "Traceback" not in staged.output and staged.stdout == ""
    assert project.baseline_bytes() == before  # a check never writes


def test_an_input_deleted_since_the_run_is_named_and_stale(tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert project.cli("run", "TASK-001").exit_code == 0
    assert project.cli("record", "TASK-001").exit_code == 0
    (project.root / "silo.agent.ts").unlink()
    checked = project.cli("check")
    assert checked.exit_code == 1
    assert "STALE RUN  TASK-001 (crm-west)  result.json" in checked.stdout
    assert "silo.agent.ts was removed since it was made, in the working tree" in checked.stdout
    assert (
        "silo-regress: warning: inputs: 'silo.agent.ts' matches no file in the working tree\n"
        in checked.stderr
    )
