"""The baseline store: names, listing, the format file, and writes that are all or nothing."""

from __future__ import annotations

import itertools
import os
import stat
from pathlib import Path

import pytest
from support.silofixture import SiloProject, make_result, unreadable
from support.treestate import snapshot, temporaries

from silo_regress.errors import InputError, TaskRefError
from silo_regress.project.taskref import TaskRef, unsafe_reason
from silo_regress.store.baselines import (
    FORMAT_FILE,
    Baseline,
    BaselineStore,
    SourceKind,
    baseline_relpath,
    parse_relpath,
    write_all_atomic,
    write_atomic,
)
from silo_regress.store.gitsource import MappingSource

ARTIFACTS = ("result.json", "state-diff.json")


def test_names_of_baselines() -> None:
    assert baseline_relpath(TaskRef("TASK-002"), "result.json") == "TASK-002.result.json"
    assert (
        baseline_relpath(TaskRef("TASK-002", "crm-west"), "state-diff.json")
        == "crm-west/TASK-002.state-diff.json"
    )
    assert parse_relpath("crm-west/TASK-002.state-diff.json", ARTIFACTS) == Baseline(
        TaskRef("TASK-002", "crm-west"), "state-diff.json", "crm-west/TASK-002.state-diff.json"
    )
    assert parse_relpath("TASK.1.result.json", ARTIFACTS) == Baseline(
        TaskRef("TASK.1"), "result.json", "TASK.1.result.json"
    )
    for foreign in (
        "README.md",
        "result.json",  # no task id before the artifact
        ".silo-regress-format",
        ".hidden.result.json",
        "a/b/TASK-1.result.json",
        ".git/TASK-1.result.json",
        "TASK-1.trace.jsonl",
    ):
        assert parse_relpath(foreign, ARTIFACTS) is None, foreign


def test_listing_skips_foreign_files_and_sorts_by_task(tmp_path: Path) -> None:
    root = tmp_path / "baselines"
    for rel in (
        "TASK-010.state-diff.json",
        "TASK-010.result.json",
        "TASK-002.result.json",
        "crm-west/TASK-001.result.json",
        "crm-east/TASK-001.result.json",
        "README.md",
        FORMAT_FILE,
        "deep/er/TASK-009.result.json",
        ".TASK-003.result.json.abc123.tmp",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"{}\n")
    store = BaselineStore(root, ARTIFACTS)
    assert [b.relpath for b in store.entries()] == [
        "crm-east/TASK-001.result.json",
        "crm-west/TASK-001.result.json",
        "TASK-002.result.json",
        "TASK-010.result.json",
        "TASK-010.state-diff.json",
    ]
    assert store.format_version() == "{}"
    assert BaselineStore(tmp_path / "absent", ARTIFACTS).entries() == []


def test_path_for_refuses_what_could_leave_the_directory(tmp_path: Path) -> None:
    store = BaselineStore(tmp_path / "baselines", ARTIFACTS)
    assert store.path_for(TaskRef("T", "env"), "result.json") == (
        tmp_path / "baselines" / "env" / "T.result.json"
    )
    for ref in (
        TaskRef("../x"),
        TaskRef("x", ".."),
        TaskRef("a/b"),
        TaskRef("/etc/passwd"),
        TaskRef(".hidden"),
        TaskRef(""),
        TaskRef("x", "a\\b"),
    ):
        with pytest.raises(TaskRefError):
            store.path_for(ref, "result.json")


def test_mapping_source_reads_baselines_from_memory() -> None:
    files = {
        "TASK-002.result.json": b"{}\n",
        "crm-west/TASK-001.state-diff.json": b"[]\n",
        FORMAT_FILE: b"1\n",
        "notes.md": b"",
    }
    source = MappingSource(files, ARTIFACTS, label="git index", kind=SourceKind.INDEX)
    entries = source.entries()
    assert [str(b.ref) for b in entries] == ["crm-west/TASK-001", "TASK-002"]
    assert source.read(entries[1]) == b"{}\n"
    assert source.format_version() == "1"
    assert source.display_path(entries[1]) == ":baselines/TASK-002.result.json"
    commit = MappingSource(files, ARTIFACTS, label="HEAD~1")
    assert commit.display_path(entries[1]) == "HEAD~1:baselines/TASK-002.result.json"


@pytest.mark.parametrize("command", [("check",), ("record", "TASK-001"), ("status",), ("fmt",)])
def test_baselines_directory_that_is_a_file(project: SiloProject, command: tuple[str]) -> None:
    project.add_run("TASK-001")
    project.baselines.write_bytes(b"not a directory\n")
    result = project.cli(*command)
    assert result.exit_code == 3, result.output
    assert result.stderr == (
        "silo-regress: error: baselines: baselines directory is a file, not a directory\n"
    )
    assert project.baselines.read_bytes() == b"not a directory\n"


def test_record_writes_the_format_file_once(project: SiloProject) -> None:
    project.add_run("TASK-001")
    project.add_run("TASK-002")
    assert project.cli("record", "TASK-001").exit_code == 0
    fmt_file = project.baselines / FORMAT_FILE
    assert fmt_file.read_bytes() == b"1\n"
    mtime = fmt_file.stat().st_mtime_ns
    assert project.cli("record", "TASK-002").exit_code == 0
    assert fmt_file.stat().st_mtime_ns == mtime


def test_qualified_ref_writes_under_the_environment(project: SiloProject) -> None:
    project.add_run("TASK-002", env="crm-west")
    result = project.cli("record", "crm-west/TASK-002")
    assert result.exit_code == 0, result.output
    assert "baselines/crm-west/TASK-002.result.json" in result.stdout
    assert sorted(project.baseline_bytes()) == [
        ".silo-regress-format",
        "crm-west/TASK-002.result.json",
        "crm-west/TASK-002.state-diff.json",
    ]
    checked = project.cli("check", "--verbose")
    assert checked.exit_code == 0
    assert "ok  crm-west/TASK-002  result.json" in checked.stdout


@pytest.mark.parametrize(
    "ref", ["../../etc/x", "/abs/path", "/abs", ".hidden", "a/b/c", "x/..", ""]
)
@pytest.mark.parametrize("command", ["record", "check", "diff"])
def test_unsafe_task_refs_are_refused(project: SiloProject, ref: str, command: str) -> None:
    project.add_run("TASK-001")
    before = snapshot(project.root.parent)
    result = project.cli(command, ref)
    assert result.exit_code == 3, result.output
    assert result.stderr.startswith(f"silo-regress: error: task ref {ref!r}")
    assert result.stdout == ""
    assert snapshot(project.root.parent) == before


def test_written_files_are_readable_like_any_other_file(project: SiloProject) -> None:
    """mkstemp creates 0600 files; a baseline gets the mode the umask allows."""
    project.add_run("TASK-001")
    old = os.umask(0o022)
    try:
        assert project.cli("record", "TASK-001").exit_code == 0
    finally:
        os.umask(old)
    for path in (project.baselines / "TASK-001.result.json", project.baselines / FORMAT_FILE):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
    # A replaced file keeps the mode its owner gave it.
    path = project.baselines / "TASK-001.result.json"
    path.chmod(0o664)
    write_atomic(path, b"{}\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o664


def test_atomic_writes_leave_no_temporary_files(project: SiloProject) -> None:
    project.add_run("TASK-001", env="crm-west")
    project.add_run("TASK-001", env="crm-east")
    project.add_run("TASK-002")
    assert project.cli("record", "--all").exit_code == 0
    project.add_run("TASK-002", result=make_result(reward=0.5))
    assert project.cli("record", "TASK-002").exit_code == 0
    assert temporaries(project.root) == []
    assert len(project.baseline_bytes()) == 7


def _changed_project(project: SiloProject) -> dict[str, bytes]:
    """Baselines of TASK-002, and a newer run in which both artifacts differ."""
    project.add_run("TASK-002", started="2026-03-16T09:00:00.000Z")
    assert project.cli("record", "TASK-002").exit_code == 0
    project.add_run(
        "TASK-002",
        started="2026-03-16T10:00:00.000Z",
        result=make_result(reward=0.5),
        state_diff={"scalars": [], "collections": {}},
    )
    return project.baseline_bytes()


def test_a_write_failing_midway_changes_no_baseline(
    project: SiloProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _changed_project(project)
    real_replace = os.replace
    calls: list[str] = []

    def failing_second_replace(src: str, dst: str) -> None:
        if ".silo-regress-tmp" in str(dst):  # the batch's journal, not a baseline
            real_replace(src, dst)
            return
        calls.append(str(dst))
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_second_replace)
    result = project.cli("record", "TASK-002")
    monkeypatch.undo()
    assert result.exit_code == 3, result.output
    assert result.stderr.startswith("silo-regress: error: ")
    assert "TASK-002.state-diff.json: cannot write: No space left on device" in result.stderr
    assert calls[0].endswith("TASK-002.result.json")  # it had been replaced, then put back
    assert project.baseline_bytes() == before
    assert temporaries(project.root) == []


def test_a_target_that_is_a_directory_changes_no_baseline(project: SiloProject) -> None:
    before = _changed_project(project)
    target = project.baselines / "TASK-002.state-diff.json"
    target.unlink()
    target.mkdir()
    del before["TASK-002.state-diff.json"]
    result = project.cli("record", "TASK-002")
    assert result.exit_code == 3, result.output
    assert result.stderr == (
        "silo-regress: error: baselines/TASK-002.state-diff.json: is a directory, "
        "not a regular file\n"
    )
    assert project.baseline_bytes() == before
    assert temporaries(project.root) == []


def test_first_record_that_fails_leaves_no_files_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_replace = os.replace
    count = 0

    def failing_third_replace(src: str, dst: str) -> None:
        nonlocal count
        if ".silo-regress-tmp" in str(dst):  # the batch's journal, not one of the files
            real_replace(src, dst)
            return
        count += 1
        if count == 3:
            raise PermissionError(13, "Permission denied")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_third_replace)
    out = tmp_path / "out"
    out.mkdir()
    (out / "b.json").write_bytes(b"old b\n")
    files = [(out / "a.json", b"a\n"), (out / "b.json", b"b\n"), (out / "c", b"")]
    with pytest.raises(InputError, match=r"/c: cannot write: Permission denied"):
        write_all_atomic(files)
    assert sorted(p.name for p in out.iterdir()) == ["b.json"]
    assert (out / "b.json").read_bytes() == b"old b\n"


def test_unreadable_baseline_is_an_error_naming_it(project: SiloProject) -> None:
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    path = project.baselines / "TASK-001.result.json"
    with unreadable(path):
        result = project.cli("check")
    assert result.exit_code == 3
    # the message tests/integration/test_unreadable_as_other_user.py sees as nobody
    assert (
        "silo-regress: error: baselines/TASK-001.result.json: cannot read: Permission denied"
        in result.stderr
    )


def _parse_by_split(relpath: str, artifacts: tuple[str, ...]) -> tuple[object, ...] | None:
    """The naming rule read plainly (split, then test each part): parse_relpath's oracle."""
    parts = relpath.split("/")
    if len(parts) > 2 or any(p.startswith(".") for p in parts):
        return None
    for artifact in artifacts:
        suffix = "." + artifact
        if parts[-1].endswith(suffix) and len(parts[-1]) > len(suffix):
            task_id = parts[-1][: -len(suffix)]
            environment = parts[0] if len(parts) == 2 else None
            if unsafe_reason(task_id.partition("~")[0]):
                return None
            if environment is not None and unsafe_reason(environment):
                return None
            return (task_id.partition("~")[0], environment, artifact, relpath)
    return None


def test_parse_relpath_agrees_with_the_plain_reading_of_the_rule() -> None:
    """parse_relpath is written for speed (it runs for every baseline of every check)."""
    artifacts = ("result.json", "state-diff.json", "tool-events.json", "json")
    parts = ["", ".", "..", ".x", "TASK", "T~2", "T~1", "T~x~2", "crm~west", "crm-west"]
    parts += [".result.json", "result.json", "T.result.json", "T.state-diff.json"]
    parts += ["T~02.result.json", "T.json", "T..json", "T.tool-events.json", "é.json", "/"]
    checked = 0
    for first, second in itertools.product(parts, repeat=2):
        for relpath in (first, f"{first}/{second}", f"{first}/{second}/{first}", f"/{first}"):
            found = parse_relpath(relpath, artifacts)
            got = None
            if found is not None:
                got = (found.ref.task_id, found.ref.environment, found.artifact, found.relpath)
            assert got == _parse_by_split(relpath, artifacts), relpath
            checked += 1
    assert checked == 4 * len(parts) ** 2
