"""Ctrl-C and SIGTERM in the middle of review's accept, undo and reject.

A driver runs the real command in a pseudo-terminal and sends the signal to the
process itself at the very moment chosen: right after a baseline is renamed into
place (inside the batch, where signals are held and the batch rolls back), right
after the undo's rename, right after or before a run directory is moved. Whatever
the moment, every baseline holds whole bytes (the old or the new), nothing of the
batch is left behind, and the run is whole in exactly one place.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from support.reviewkit import PROMPT, changes, finish, spawn
from support.silofixture import SiloProject

from silo_regress.runs.discards import DISCARD_DIR

pexpect = pytest.importorskip("pexpect")

DRIVER = r"""
import os, sys
from silo_regress.store import transaction
sig = int(os.environ["FAULT_SIGNAL"])
op = os.environ["FAULT_OP"]
at = int(os.environ["FAULT_AT"])
calls = 0

def hit():
    global calls
    calls += 1
    if calls == at:
        os.kill(os.getpid(), sig)

if op == "replace":  # a baseline renamed into place: accept, undo
    real_replace = os.replace
    def replace(src, dst, *args, **kwargs):
        real_replace(src, dst, *args, **kwargs)
        if transaction.WORK_DIR not in str(dst):
            hit()
    os.replace = replace
elif op == "unlink":  # a baseline removed: the undo of an accept that created it
    real_unlink = os.unlink
    def unlink(path, *args, **kwargs):
        real_unlink(path, *args, **kwargs)
        if transaction.WORK_DIR not in str(path):
            hit()
    os.unlink = unlink
elif op in ("rename-after", "rename-before"):  # a run directory moved: reject
    real_rename = os.rename
    def rename(src, dst, *args, **kwargs):
        if op == "rename-before":
            hit()
        real_rename(src, dst, *args, **kwargs)
        if op == "rename-after":
            hit()
    os.rename = rename
from silo_regress.cli import main
sys.exit(main(sys.argv[1:]))
"""
SIGNALS = [signal.SIGINT, signal.SIGTERM]


def _env(sig: int, op: str, at: int) -> dict[str, str]:
    return {"FAULT_SIGNAL": str(int(sig)), "FAULT_OP": op, "FAULT_AT": str(at)}


def _no_leftovers(project: SiloProject) -> None:
    assert not (project.baselines / ".silo-regress-tmp").exists()
    assert not [p for p in project.baselines.rglob("*") if p.suffix in (".tmp", ".old")]


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_during_accept_rolls_the_batch_back(project: SiloProject, sig: int) -> None:
    changes(project)
    before = project.baseline_bytes()
    child = spawn(project, "TASK-004", driver=DRIVER, **_env(sig, "replace", 1))
    child.expect(PROMPT)
    child.send("a")
    child.expect("interrupted")
    child.expect("1 to review: accepted 0, rejected 0, skipped 0, not reviewed 1")
    finish(child, 130)
    assert project.baseline_bytes() == before  # the renamed file was put back
    _no_leftovers(project)
    assert project.cli("check", "TASK-004").exit_code == 1  # still to review


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_during_undo_keeps_the_accept_whole(project: SiloProject, sig: int) -> None:
    changes(project)
    before = project.baseline_bytes()
    child = spawn(project, driver=DRIVER, **_env(sig, "replace", 2))
    child.expect(PROMPT)
    child.send("a")  # the first rename: the accept, uninterrupted
    child.expect("accepted baselines/TASK-003.result.json")
    child.expect(PROMPT)
    accepted = project.baseline_bytes()
    assert accepted != before
    child.send("u")  # the second rename: the undo, interrupted and rolled back
    child.expect("interrupted")
    finish(child, 130)
    assert project.baseline_bytes() == accepted
    _no_leftovers(project)


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("op", ["rename-before", "rename-after"])
def test_a_signal_during_reject_never_loses_the_run(
    project: SiloProject, sig: int, op: str
) -> None:
    runs = changes(project)
    run = runs["TASK-004"]
    files = {p.name: p.read_bytes() for p in run.iterdir()}
    before = project.baseline_bytes()
    child = spawn(project, "TASK-004", driver=DRIVER, **_env(sig, op, 1))
    child.expect(PROMPT)
    child.send("r")
    child.expect("interrupted")
    # The closing line counts what happened: moved (rejected) or not (not reviewed).
    counts = (
        "rejected 1, skipped 0\r\n"
        if op == "rename-after"
        else "rejected 0, skipped 0, not reviewed 1"
    )
    child.expect(f"1 to review: accepted 0, {counts}")
    finish(child, 130)
    moved = project.runs_dir / DISCARD_DIR / run.name
    places = [p for p in (run, moved) if p.is_dir()]
    assert len(places) == 1  # whole in exactly one place
    assert {p.name: p.read_bytes() for p in places[0].iterdir()} == files
    assert places[0] == (moved if op == "rename-after" else run)
    assert project.baseline_bytes() == before


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_during_the_undo_of_new_baselines_puts_them_back(
    project: SiloProject, sig: int
) -> None:
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    project.add_run("TASK-011")
    project.add_run("TASK-012")
    child = spawn(project, "TASK-011", "TASK-012", driver=DRIVER, **_env(sig, "unlink", 1))
    child.expect(PROMPT)
    child.send("a")
    child.expect("accepted baselines/TASK-011.state-diff.json")
    child.expect(PROMPT)  # TASK-012's
    accepted = project.baseline_bytes()
    assert "TASK-011.result.json" in accepted
    child.send("u")  # removes both new files: interrupted after the first removal
    child.expect("interrupted")
    finish(child, 130)
    # The first removal happened, then the batch rolled back: both files are back.
    assert project.baseline_bytes() == accepted
    _no_leftovers(project)


def test_the_journal_puts_back_a_removed_file_after_a_kill(project: SiloProject) -> None:
    """A writer killed between removing a file and forgetting its journal: the next
    writer restores it from the backup (the transaction's recovery, for removals)."""
    import json

    from silo_regress.store.transaction import (
        JOURNAL_FILE,
        WORK_DIR,
        ForeignJournalError,
        machine_identity,
        recover,
    )

    root = project.baselines
    work = root / WORK_DIR
    work.mkdir(parents=True)
    target = root / "TASK-001.result.json"
    token = "b0" * 16  # every staging file of a batch carries its token in its name
    backup = work / f".TASK-001.result.json.silo-regress-{token}-0000.old"
    backup.write_bytes(b"old bytes\n")
    host, boot = machine_identity()  # a journal is followed only on the machine that wrote it
    identity = [backup.stat().st_dev, backup.stat().st_ino]  # as the writer saw it, staging
    entry: dict[str, object] = {"target": target.name, "backup": backup.name, "sha256": None}
    journal = {"host": host, "boot": boot, "batch": token, "entries": [entry]}
    (work / JOURNAL_FILE).write_text(json.dumps(journal))
    with pytest.raises(ForeignJournalError, match="none of the staging files"):
        recover(root)  # without the backup's identity nothing proves the batch made it
    assert not target.exists()
    entry["backupStaged"] = identity
    (work / JOURNAL_FILE).write_text(json.dumps(journal))
    assert recover(root) == 1
    assert target.read_bytes() == b"old bytes\n"
    assert not (work / JOURNAL_FILE).exists()
    Path(target).unlink()
