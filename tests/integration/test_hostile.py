"""Hostile files: FIFOs, devices, links and odd targets get a sentence, never a hang.

Every case here once hung, crashed or wrote where it should not (issue 13). The
fault matrix (signals and kills at every point of a record) is in
test_hostile_faults.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from support.silofixture import SiloProject, make_result
from support.treestate import snapshot

from silo_regress.errors import InputError
from silo_regress.store.transaction import (
    WORK_DIR,
    LockHeldError,
    commit,
    containment_problem,
    writer_lock,
)
from silo_regress.system.fsio import (
    FileError,
    FileKind,
    read_optional,
    read_regular,
    write_atomic,
    write_output,
)

TIMEOUT = 20  # seconds: a hang fails the test instead of the suite


def _recorded(project: SiloProject, *tasks: str) -> dict[str, bytes]:
    for task in tasks or ("TASK-001",):
        project.add_run(task)
    result = project.cli("record", "--all")
    assert result.exit_code == 0, result.output
    return project.baseline_bytes()


def _cli(project: SiloProject, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """The real command in a subprocess, bounded in time (a hang is a failure)."""
    streams: dict[str, Any] = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **kwargs}
    done: subprocess.CompletedProcess[str] = subprocess.run(
        [sys.executable, "-m", "silo_regress", "--project", str(project.root), *args],
        text=True,
        timeout=TIMEOUT,
        check=False,
        **streams,
    )
    return done


# --- safe reads -----------------------------------------------------------------


def test_read_regular_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to("/etc/hostname")
    cases: list[tuple[Path | str, FileKind, bool]] = [
        (fifo, FileKind.FIFO, True),
        ("/dev/zero", FileKind.CHAR_DEVICE, True),
        (tmp_path, FileKind.DIRECTORY, True),
        (link, FileKind.SYMLINK, False),
    ]
    for path, kind, follow in cases:
        with pytest.raises(FileError) as caught:
            read_regular(path, shown="x", follow=follow)
        assert caught.value.kind is kind, path
        assert caught.value.message.startswith("x: is a"), caught.value.message
    assert read_optional(tmp_path / "absent", shown="x") is None


def test_reads_are_bounded(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.write_bytes(b"x" * 1000)
    assert read_regular(big, shown="big", limit=1000) == b"x" * 1000
    with pytest.raises(FileError, match="big: 1000 bytes, more than the 999"):
        read_regular(big, shown="big", limit=999)


def test_a_symlink_loop_is_a_sentence(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(FileError, match="loop of symbolic links"):
        read_regular(loop, shown="loop")


# --- --output onto anything -------------------------------------------------------


def test_output_streams_into_a_fifo_with_a_reader(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        write_output(fifo, b"report\n", shown="fifo")
        out, _ = reader.communicate(timeout=TIMEOUT)
    finally:
        reader.kill()
    assert out == b"report\n"
    assert fifo.is_fifo()  # never replaced by a regular file


def test_output_into_a_fifo_nobody_reads_is_an_error_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(FileError, match=r"fifo: no process is reading this FIFO \(waited 2 s\)"):
        write_output(fifo, b"report\n", shown="fifo")
    assert fifo.is_fifo()


def test_output_onto_devices_and_links(tmp_path: Path) -> None:
    write_output(Path("/dev/null"), b"gone\n")
    with pytest.raises(FileError, match="/dev/full: cannot write the report: No space left"):
        write_output(Path("/dev/full"), b"x\n", shown="/dev/full")
    target = tmp_path / "real.json"
    target.write_bytes(b"old\n")
    link = tmp_path / "link.json"
    link.symlink_to("real.json")
    write_output(link, b"new\n")
    assert link.is_symlink() and target.read_bytes() == b"new\n"
    with pytest.raises(FileError, match="is a directory"):
        write_output(tmp_path, b"x\n")


def test_output_creates_no_directories(project: SiloProject) -> None:
    _recorded(project)
    result = project.cli("check", "--output", "a/b/c/x.json")
    assert result.exit_code == 3
    assert result.stderr.endswith(
        "silo-regress: error: a/b/c/x.json: directory a/b/c does not exist "
        "(silo-regress creates none here)\n"
    )
    assert not Path("a").exists()


def test_check_output_to_its_own_stdout_through_a_link(project: SiloProject) -> None:
    """``ln -s /proc/self/fd/1 out; check --output out | cat`` hung for ever."""
    _recorded(project)
    link = project.root / "out"
    link.symlink_to("/proc/self/fd/1")
    done = subprocess.run(
        f"{sys.executable} -m silo_regress --project {project.root} check --format json "
        f"--output {link} | cat",
        shell=True,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert '"version": 1' in done.stdout
    assert "1 match" in done.stdout or "2 match" in done.stdout
    assert link.is_symlink()


def test_merge_of_a_report_that_is_a_fifo_or_device(project: SiloProject, tmp_path: Path) -> None:
    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)
    for path in (str(fifo), "/dev/zero"):
        done = _cli(project, "merge", path)
        assert done.returncode == 3, done.stderr
        kind = "a FIFO" if path != "/dev/zero" else "a character device"
        assert done.stderr == f"silo-regress: error: {path}: is {kind}, not a regular file\n"


# --- stdout and argv ----------------------------------------------------------------


def test_stdout_full_or_closed_is_one_sentence(project: SiloProject) -> None:
    _recorded(project)
    with open("/dev/full", "w") as full:
        done = _cli(project, "check", stdout=full)
    assert done.returncode == 3
    assert done.stderr == (
        "silo-regress: error: stdout: cannot write the output: No space left on device\n"
    )
    closed = subprocess.run(
        f"{sys.executable} -m silo_regress --project {project.root} check >&-",
        shell=True,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert closed.returncode == 3
    assert (
        closed.stderr == "silo-regress: error: stdout: cannot write the output: stdout is closed\n"
    )


def test_a_task_ref_that_is_not_utf8(project: SiloProject) -> None:
    _recorded(project)
    done = subprocess.run(
        [sys.executable, "-m", "silo_regress", "-C", str(project.root), "check", b"TASK-\xff"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 3
    assert done.stderr == (
        "silo-regress: error: task ref 'TASK-\\udcff' is refused: it is not valid UTF-8\n"
    )


# --- FIFOs, links and directories as baselines ---------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "directory", "link"])
def test_odd_baseline_paths_are_never_skipped_silently(project: SiloProject, kind: str) -> None:
    _recorded(project)
    path = project.baselines / "TASK-001.result.json"
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to("/etc/hostname")
    for command in (("check",), ("fmt",), ("fmt", "--check"), ("record", "TASK-001")):
        done = _cli(project, *command)
        assert done.returncode in (1, 3), (command, done.stdout, done.stderr)
        assert "baselines/TASK-001.result.json" in done.stdout + done.stderr, command
        assert "Traceback" not in done.stderr
    status = _cli(project, "status")  # a table that always exits 0, with the verdict in it
    assert status.returncode == 0 and "not-canonical" in status.stdout, status.stdout
    assert path.is_symlink() or (os.path.lexists(path) and not path.is_file())


def test_fmt_never_writes_through_a_symlinked_directory(
    project: SiloProject, tmp_path: Path
) -> None:
    _recorded(project)
    outside = tmp_path / "OUTSIDE"
    outside.mkdir()
    (outside / "TASK-009.result.json").write_bytes(b'{"b":1,"a":2}')
    (project.baselines / "evil").symlink_to(outside)
    before = snapshot(outside)
    for command in (("fmt",), ("check",), ("status",)):
        result = project.cli(*command)
        assert result.exit_code == 3, (command, result.output)
        assert result.stderr.startswith("silo-regress: error: baselines/evil: is a symbolic link")
    explicit = project.cli("fmt", str(project.baselines / "evil" / "TASK-009.result.json"))
    assert explicit.exit_code == 3
    assert "baselines/evil is a symbolic link (writes never follow one)" in explicit.stderr
    assert snapshot(outside) == before


@pytest.mark.parametrize("where", ["symlinked-root", "absolute", "dotdot"])
def test_record_never_writes_outside_the_project(
    project: SiloProject, tmp_path: Path, where: str
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    project.add_run("TASK-001")
    if where == "symlinked-root":
        project.baselines.symlink_to(outside)
    else:
        value = str(outside) if where == "absolute" else "../elsewhere"
        with (project.root / "pyproject.toml").open("a") as handle:
            handle.write(f'baselines-dir = "{value}"\n')
    result = project.cli("record", "TASK-001")
    assert result.exit_code == 3, result.output
    # The config refuses the last two itself; the writer's rule would refuse them too.
    reasons = ("baselines cannot be written", "refused", "lies outside the project")
    assert any(reason in result.stderr for reason in reasons), result.stderr
    assert list(outside.iterdir()) == []


# --- the writer lock --------------------------------------------------------------------


def test_a_held_lock_names_its_holder(project: SiloProject) -> None:
    _recorded(project)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; "
            "from silo_regress.store.transaction import writer_lock\n"
            "with writer_lock(Path(sys.argv[1]), command='fmt'):\n"
            "    print('held', flush=True); time.sleep(30)\n",
            str(project.baselines),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with (
            pytest.raises(LockHeldError) as caught,
            writer_lock(project.baselines, command="record", wait=0.2),
        ):
            pass
        message = caught.value.message
        assert message.startswith(
            f"baselines/{WORK_DIR}/lock: silo-regress fmt (pid {holder.pid}, since "
        )
        assert "is writing these baselines; waited 0.2 s" in message
    finally:
        holder.kill()
        holder.communicate()  # reaps it and closes its pipe
    with writer_lock(project.baselines, command="record", wait=5):  # a killed holder frees it
        pass
    assert not (project.baselines / WORK_DIR).exists()  # and a finished writer tidies up


def test_readers_never_need_the_lock(project: SiloProject) -> None:
    _recorded(project)
    with writer_lock(project.baselines, command="fmt"):
        assert _cli(project, "check").returncode == 0
        assert _cli(project, "fmt", "--check").returncode == 0


def test_the_lock_is_reentrant_and_writes_under_it(tmp_path: Path) -> None:
    root = tmp_path / "baselines"
    with writer_lock(root, command="record"), writer_lock(root, command="record"):
        commit(root, [(root / "a.json", b"1\n")], shown=str)
    assert (root / "a.json").read_bytes() == b"1\n"


# --- temp files, journal, containment ------------------------------------------------


def test_stale_temp_files_are_swept_and_ignored_by_git(project: SiloProject) -> None:
    before = _recorded(project)
    work = project.baselines / WORK_DIR
    work.mkdir()
    (work / ".gitignore").write_text("*\n")
    stale = work / ".TASK-001.result.json.silo-regress-0000.tmp"
    stale.write_bytes(b"copy")
    old_style = project.baselines / ".TASK-001.result.json.abc123.tmp"
    old_style.write_bytes(b"copy")
    subprocess.run(["git", "init", "-q"], cwd=project.root, check=True)
    subprocess.run(["git", "add", "baselines/"], cwd=project.root, check=True)
    staged = subprocess.run(
        ["git", "ls-files", "--cached", "baselines"],
        cwd=project.root,
        text=True,
        capture_output=True,
        check=True,
    ).stdout.split()
    assert not [name for name in staged if WORK_DIR in name]
    project.add_run("TASK-001", result=make_result(reward=0.5))
    assert project.cli("record", "TASK-001").exit_code == 0
    assert not work.exists() and not old_style.exists()
    assert project.baseline_bytes() != before


def test_a_killed_batch_is_rolled_back_by_the_next_writer(tmp_path: Path) -> None:
    root = tmp_path / "baselines"
    root.mkdir()
    (root / "a.json").write_bytes(b"old a\n")
    (root / "b.json").write_bytes(b"old b\n")
    script = (
        "import os, sys\nfrom pathlib import Path\n"
        "from silo_regress.store.transaction import commit\n"
        "real = os.replace\n"
        "def replace(src, dst):\n"
        "    if str(dst).endswith('b.json'): os.kill(os.getpid(), 9)\n"  # a.json renamed
        "    real(src, dst)\n"
        "os.replace = replace\n"
        "root = Path(sys.argv[1])\n"
        "commit(root, [(root / 'a.json', b'new a\\n'), (root / 'b.json', b'new b\\n'),"
        " (root / 'c.json', b'new c\\n')], shown=str)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(root)], timeout=TIMEOUT, check=False)
    assert done.returncode == -9
    assert (root / "a.json").read_bytes() == b"new a\n"  # torn between two renames
    with writer_lock(root, command="fmt"):
        pass
    assert sorted(p.name for p in root.iterdir()) == ["a.json", "b.json"]
    assert (root / "a.json").read_bytes() == b"old a\n"
    assert (root / "b.json").read_bytes() == b"old b\n"


def test_sigint_during_the_renames_rolls_back_every_file(
    project: SiloProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    """17 of 17 trials left one baseline changed while saying nothing was recorded."""
    _recorded(project, "TASK-001", "TASK-002")
    before = project.baseline_bytes()
    for task in ("TASK-001", "TASK-002"):
        project.add_run(task, result=make_result(reward=0.25))
    real = os.replace
    renamed: list[str] = []

    def replace(src: str, dst: str) -> None:
        real(src, dst)
        if WORK_DIR not in str(dst):
            renamed.append(str(dst))
            if len(renamed) == 1:
                # At the main thread, as a terminal's Ctrl-C reaches a one-thread
                # record: a process-directed kill may land on a thread an earlier
                # test left (executor, progress bar) where the signal is not blocked.
                signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    monkeypatch.setattr(os, "replace", replace)
    result = project.cli("record", "--all")
    monkeypatch.undo()
    assert result.exit_code == 130, result.output
    assert len(renamed) >= 4  # the batch finished its renames, then was undone
    assert project.baseline_bytes() == before
    assert not (project.baselines / WORK_DIR).exists()


def test_containment_rule(tmp_path: Path) -> None:
    root = tmp_path / "baselines"
    (root / "env").mkdir(parents=True)
    (root / "link").symlink_to(tmp_path)
    assert containment_problem(root, root / "env" / "x.json", project=tmp_path) is None
    assert "symbolic link" in (containment_problem(root, root / "link" / "x.json") or "")
    assert "outside" in (containment_problem(root, tmp_path / "x.json") or "")
    assert "'..'" in (containment_problem(root, root / ".." / "x.json") or "")
    assert "outside the project" in (
        containment_problem(root, root / "x.json", project=tmp_path / "other") or ""
    )
    with pytest.raises(InputError, match="refused"):
        commit(root, [(root / "link" / "x.json", b"")], shown=str)


def test_write_atomic_keeps_a_symlink_a_link(tmp_path: Path) -> None:
    real = tmp_path / "pyproject.toml.real"
    real.write_bytes(b"old")
    link = tmp_path / "pyproject.toml"
    link.symlink_to(real.name)
    write_atomic(link, b"new")
    assert link.is_symlink() and real.read_bytes() == b"new"


# --- baselines that are links in git, values a run may not hold ----------------------


def test_a_baseline_staged_as_a_symlink_is_a_verdict(tmp_path: Path) -> None:
    """It vanished from the hook: `11 match`, exit 0, one artifact no longer compared."""
    from support.gitrepo import commit_all, recorded

    project = recorded(tmp_path / "repo")
    path = project.baselines / "TASK-001.result.json"
    path.unlink()
    path.symlink_to("/etc/hostname")
    subprocess.run(["git", "add", "baselines"], cwd=project.root, check=True)
    for args in (("check", "--staged"), ("check", "--against", "HEAD")):
        if args[1] == "--against":
            commit_all(project, "A link where a baseline was")
        result = project.cli(*args)
        assert result.exit_code == 1, (args, result.output)
        assert "1 not-canonical" in result.stdout
        assert "TASK-001.result.json" in result.stdout
        assert "is a symbolic link in git, not a baseline file" in result.stdout


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (b"NaN", "NaN is not valid JSON at /reward"),
        (b"1e400", "number 1e400 is out of range for a double at /reward"),
        (b'"a\xffb"', "not valid UTF-8 (byte 35) at /reward"),
    ],
)
def test_bad_values_in_a_run_are_refused_with_their_pointer(
    project: SiloProject, value: bytes, reason: str
) -> None:
    run = project.add_run("TASK-001")
    data = (run / "result.json").read_bytes()
    assert b'"reward": ' in data
    (run / "result.json").write_bytes(data.replace(b'"reward": 1', b'"reward": ' + value, 1))
    offset = (run / "result.json").read_bytes().index(b"\xff") if b"\xff" in value else None
    if offset is not None:
        reason = reason.replace("35", str(offset))
    result = project.cli("record", "--run-id", run.name)
    assert result.exit_code == 3, result.output
    assert result.stderr == (
        f"silo-regress: error: .silo/runs/{run.name}/result.json: {reason}, "
        "so this run has no result to record\n"
    )


def test_log_escapes_control_characters_of_commit_subjects(tmp_path: Path) -> None:
    from support.gitrepo import recorded
    from support.silofixture import git

    project = recorded(tmp_path / "repo")
    (project.baselines / "TASK-001.result.json").write_bytes(
        (project.baselines / "TASK-001.result.json").read_bytes().replace(b"true", b"false", 1)
    )
    git(project.root, "commit", "-qam", "evil \x1b[2J subject")
    result = project.cli("log", "TASK-001")
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout
    assert "evil \\x1b[2J subject" in result.stdout


def test_a_step_summary_that_is_a_fifo_never_hangs(
    project: SiloProject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _recorded(project)
    fifo = tmp_path / "summary"
    os.mkfifo(fifo)
    done = _cli(
        project, "check", "--format", "github", env={**os.environ, "GITHUB_STEP_SUMMARY": str(fifo)}
    )
    assert done.returncode == 0, done.stderr
    assert "cannot append the job summary" in done.stderr


def test_init_keeps_a_symlinked_pyproject_a_link(tmp_path: Path) -> None:
    from support.gitrepo import run
    from support.silofixture import git_init

    root = tmp_path / "repo"
    root.mkdir()
    git_init(root)
    # A link within the repository is followed; one out of it is refused
    # (tests/integration/test_init.py, test_init_never_writes_through_a_link_out_...).
    (root / "config").mkdir()
    real = root / "config" / "shared-pyproject.toml"
    real.write_text('[project]\nname = "agent"\nversion = "0"\n', encoding="utf-8")
    (root / "pyproject.toml").symlink_to(real)
    done = run(
        root, sys.executable, "-m", "silo_regress", "--project", str(root), "init", check=False
    )
    assert done.returncode == 0, done.stderr
    assert (root / "pyproject.toml").is_symlink()
    assert "[tool.silo-regress]" in real.read_text(encoding="utf-8")


def test_a_kill_while_the_work_directory_is_removed_leaves_nothing_to_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever a writer killed between two unlinks leaves behind, git ignores."""
    from support.gitrepo import repo_project

    project = repo_project(tmp_path / "repo")
    baselines = project.root / "baselines"
    baselines.mkdir()
    real_unlink = os.unlink
    calls: list[str] = []

    def unlink_then_die(path: Any, *args: Any, **kwargs: Any) -> None:
        if Path(path).parent.name == WORK_DIR and Path(path).name in {"lock", ".gitignore"}:
            calls.append(Path(path).name)
            real_unlink(path, *args, **kwargs)
            raise SystemExit("killed after the first unlink")  # SIGKILL stands here
        real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink_then_die)
    with pytest.raises(SystemExit), writer_lock(baselines, command="test"):
        pass
    monkeypatch.undo()

    assert len(calls) == 1  # the second unlink never ran
    staged = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "baselines"],
        cwd=project.root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert staged == ""
