"""Baselines merged by real ``git merge`` through the merge driver, and by ``fmt --resolve``
from the conflict markers a merge without the driver leaves (issue 36)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.gitrepo import SILO, commit_all, repo_project
from support.silofixture import SiloProject, git, make_result

from silo_regress.canon.canonical import serialize
from silo_regress.recording.scaffold import DRIVER_COMMAND

NAME = "TASK-001.result.json"


def check(label: str, passed: bool) -> dict[str, Any]:
    return {"detail": "", "label": label, "passed": passed, "required": True}


NOTE, POLITE = check("Note logged", False), check("Polite reply", True)
BASE = {**make_result(), "checks": [check("Lead qualified", True), check("Reply sent", True)]}


def branches(
    tmp_path: Path,
    ours: Any,
    theirs: Any,
    *,
    base: Any = BASE,
    name: str = NAME,
    driver: bool = True,
    style: str | None = None,
) -> SiloProject:
    """A repository whose main changed ``name`` to ``ours`` and branch ``other`` to ``theirs``."""
    project = repo_project(tmp_path / "repo")
    project.baselines.mkdir()
    (project.baselines / ".gitattributes").write_text("* -text diff\n*.json merge=silo-regress\n")
    if driver:
        git(
            project.root,
            "config",
            "merge.silo-regress.driver",
            DRIVER_COMMAND.replace("silo-regress", str(SILO), 1),
        )
    if style:
        git(project.root, "config", "merge.conflictStyle", style)
    path = project.baselines / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(as_bytes(base))
    commit_all(project, "base")
    git(project.root, "checkout", "-q", "-b", "other")
    path.write_bytes(as_bytes(theirs))
    commit_all(project, "theirs")
    git(project.root, "checkout", "-q", "main")
    path.write_bytes(as_bytes(ours))
    commit_all(project, "ours")
    return project


def as_bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else serialize(value)


def merge(project: SiloProject) -> Any:
    return git(project.root, "merge", "-q", "--no-edit", "other", check=False)


def test_disjoint_changes_to_one_baseline_merge_cleanly_and_canonically(tmp_path: Path) -> None:
    ours = {
        **BASE,
        "reward": 0.5,
        "checks": [check("Lead qualified", False), check("Reply sent", True)],
    }
    theirs = {**BASE, "agentOutput": "Bye", "checks": [*BASE["checks"], check("Note logged", True)]}
    project = branches(tmp_path, ours, theirs)
    done = merge(project)
    assert done.returncode == 0, done.stderr
    expected = {
        **BASE,
        "reward": 0.5,
        "agentOutput": "Bye",
        "checks": [
            check("Lead qualified", False),
            check("Reply sent", True),
            check("Note logged", True),
        ],
    }
    assert (project.baselines / NAME).read_bytes() == serialize(expected)


def test_without_the_driver_the_same_merge_conflicts_line_by_line(tmp_path: Path) -> None:
    """The case the driver is for: git alone cannot merge two checks appended."""
    ours = {**BASE, "checks": [*BASE["checks"], check("Polite reply", True)]}
    theirs = {**BASE, "checks": [*BASE["checks"], check("Note logged", False)]}
    project = branches(tmp_path, ours, theirs, driver=False)
    assert merge(project).returncode != 0
    resolved = project.cli("fmt", "--resolve")
    assert resolved.exit_code == 0, resolved.output
    assert "base from git's index (stage 1)" in resolved.stdout
    # both appended a check: the two are kept, in the order of their labels
    expected = {**BASE, "checks": [*BASE["checks"], NOTE, POLITE]}
    assert (project.baselines / NAME).read_bytes() == serialize(expected)


def test_the_same_value_changed_twice_stays_a_conflict_named_by_pointer(tmp_path: Path) -> None:
    project = branches(
        tmp_path, {**BASE, "reward": 0.5}, {**BASE, "reward": 0.25, "agentOutput": "x"}
    )
    done = merge(project)
    assert done.returncode != 0
    assert f"baselines/{NAME}: both sides changed /reward differently" in done.stderr
    text = (project.baselines / NAME).read_text()
    assert '<<<<<<< ours\n  "reward": 0.5,\n=======\n  "reward": 0.25,\n>>>>>>> theirs\n' in text
    assert '"agentOutput": "x"' in text  # the clean part is merged
    assert text.count("<<<<<<<") == 1
    # fmt --resolve during the merge: the same conflict, still named
    again = project.cli("fmt", "--resolve", str(project.baselines / NAME))
    assert again.exit_code == 1
    assert "conflicted      baselines/TASK-001.result.json: /reward" in again.stdout


@pytest.mark.parametrize("style", ["diff3", "merge"])
def test_markers_resolve_after_the_merge_state_is_gone(tmp_path: Path, style: str) -> None:
    """diff3 markers carry their base; plain ones, with no merge in progress, leave a
    conflict wherever the sides differ rather than guess."""
    ours = {**BASE, "checks": [*BASE["checks"], check("Polite reply", True)]}
    theirs = {**BASE, "checks": [*BASE["checks"], check("Note logged", False)]}
    project = branches(tmp_path, ours, theirs, driver=False, style=style)
    assert merge(project).returncode != 0
    path = project.baselines / NAME
    marked = path.read_bytes()
    git(project.root, "merge", "--abort")
    path.write_bytes(marked)
    done = project.cli("fmt", "--resolve", str(path))
    if style == "diff3":
        assert done.exit_code == 0, done.output
        assert "base from the diff3 markers" in done.stdout
        expected = {**BASE, "checks": [*BASE["checks"], NOTE, POLITE]}
        assert path.read_bytes() == serialize(expected)
    else:
        assert done.exit_code == 1, done.output
        assert "conflicted      baselines/TASK-001.result.json: /checks" in done.stdout
        assert path.read_text().count("<<<<<<<") == 1


def test_a_tally_is_never_merged(tmp_path: Path) -> None:
    def tally(rollouts: int, passed: int, lead: int) -> dict[str, Any]:
        return {
            "checks": {"Lead qualified": lead, "Reply sent": rollouts},
            "format": 1,
            "passed": passed,
            "reward": {"sum": passed, "sum-of-squares": passed},
            "rollouts": rollouts,
            "variants": {},
        }

    # disjoint lines: git's text merge alone would sum nothing and invent a count
    project = branches(
        tmp_path,
        tally(10, 8, 9),
        tally(10, 9, 10),
        base=tally(10, 9, 9),
        name="TASK-001.tally.json",
    )
    path = project.baselines / "TASK-001.tally.json"
    done = merge(project)
    assert done.returncode != 0
    assert "never merged" in done.stderr
    assert "`silo-regress record --repeat 10 TASK-001`" in done.stderr
    marked = path.read_bytes()
    assert marked.count(b"<<<<<<<") == 1
    refused = project.cli("fmt", "--resolve", str(path))
    assert refused.exit_code == 3
    assert "baselines/TASK-001.tally.json: has git merge-conflict markers" in refused.stderr
    assert "record --repeat 10 TASK-001" in refused.stderr
    assert path.read_bytes() == marked


def test_check_refuses_a_tally_with_markers_naming_it(tmp_path: Path) -> None:
    project = repo_project(
        tmp_path / "repo", config='\n[tool.silo-regress.tasks.TASK-001]\ngate = "stats"\n'
    )
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    tally = project.baselines / "TASK-001.tally.json"
    tally.write_bytes(
        b'{\n<<<<<<< ours\n  "rollouts": 10\n=======\n  "rollouts": 12\n>>>>>>> theirs\n}\n'
    )
    done = project.cli("check")
    assert done.exit_code == 3, done.output
    assert "baselines/TASK-001.tally.json: has git merge-conflict markers" in done.stderr
    assert "record --repeat 10 TASK-001" in done.stderr


def marked_file(project: SiloProject, name: str, theirs: bytes) -> Path:
    path = project.baselines / name
    ours = serialize({**BASE, "reward": 0.5}).decode()
    path.write_text(f"<<<<<<< ours\n{ours}=======\n{theirs.decode()}>>>>>>> theirs\n")
    return path


def test_a_side_that_is_not_json_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    project = repo_project(tmp_path / "repo")
    project.baselines.mkdir()
    good = marked_file(project, "TASK-002.result.json", serialize({**BASE, "reward": 1}))
    bad = marked_file(project, NAME, b'{"reward": \n')
    before = {p: p.read_bytes() for p in (good, bad)}
    done = project.cli("fmt", "--resolve")
    assert done.exit_code == 3
    assert f"baselines/{NAME} (theirs): ends early" in done.stderr
    assert {p: p.read_bytes() for p in (good, bad)} == before  # all or nothing


def test_a_link_or_a_fifo_is_refused_by_name(tmp_path: Path) -> None:
    project = repo_project(tmp_path / "repo")
    project.baselines.mkdir()
    outside = tmp_path / "elsewhere.json"
    outside.write_bytes(b"<<<<<<< ours\n{}\n=======\n[]\n>>>>>>> theirs\n")
    link = project.baselines / NAME
    link.symlink_to(outside)
    fifo = project.baselines / "TASK-002.result.json"
    os.mkfifo(fifo)
    for path in (link, fifo):
        done = project.cli("fmt", "--resolve", str(path))
        assert done.exit_code == 3, done.output
        assert f"baselines/{path.name}" in done.stderr
    assert outside.read_bytes() == b"<<<<<<< ours\n{}\n=======\n[]\n>>>>>>> theirs\n"
    assert link.is_symlink() and fifo.exists()


def test_merge_driver_protocol_writes_the_result_into_ours(tmp_path: Path) -> None:
    """The command as git calls it, without git: %O %A %B %P."""
    files = {}
    for side, value in (
        ("O", BASE),
        ("A", {**BASE, "reward": 0.5}),
        ("B", {**BASE, "passed": False}),
    ):
        files[side] = tmp_path / side
        files[side].write_bytes(serialize(value))
    project = repo_project(tmp_path / "repo")
    done = project.cli("merge-driver", str(files["O"]), str(files["A"]), str(files["B"]), NAME)
    assert done.exit_code == 0, done.output
    assert files["A"].read_bytes() == serialize({**BASE, "reward": 0.5, "passed": False})


# Theirs removes "Check 01" and appends a check, ours appends one: git's line merge
# takes theirs' removal outside the markers and aligns ours' new check with the old
# "Check 02", which ours then holds twice read back from the markers (so /checks is a
# conflict from markers alone); the three documents in git's index merge cleanly.
def optional(label: str) -> dict[str, Any]:
    return {"detail": "", "label": label, "passed": True, "required": False}


C00, C01, C02 = check("Check 00", True), check("Check 01", True), check("Check 02", False)
SPLIT_BASE = {**BASE, "checks": [C00, C01, C02]}
SPLIT_OURS = {**SPLIT_BASE, "checks": [C00, C01, C02, optional("New A")]}
SPLIT_THEIRS = {**SPLIT_BASE, "checks": [C00, C02, optional("New B")]}
SPLIT_MERGED = {**SPLIT_BASE, "checks": [C00, C02, optional("New A"), optional("New B")]}


@pytest.mark.parametrize("style", ["diff3", "merge"])
def test_while_merging_an_unedited_file_resolves_from_the_index(tmp_path: Path, style: str) -> None:
    project = branches(
        tmp_path, SPLIT_OURS, SPLIT_THEIRS, base=SPLIT_BASE, driver=False, style=style
    )
    assert merge(project).returncode != 0
    path = project.baselines / NAME
    marked = path.read_bytes()
    done = project.cli("fmt", "--resolve")
    assert done.exit_code == 0, done.output
    assert "sides from git's index (stages 2 and 3): the file is as git wrote it" in done.stdout
    assert path.read_bytes() == serialize(SPLIT_MERGED)
    # the same markers without the index: a conflict, never a guess
    path.write_bytes(marked)
    git(project.root, "merge", "--abort")
    path.write_bytes(marked)
    alone = project.cli("fmt", "--resolve")
    assert alone.exit_code == 1, alone.output
    assert "conflicted      baselines/TASK-001.result.json: /checks" in alone.stdout
    assert "sides from the markers: no merge of it is in progress" in alone.stdout


def test_while_merging_an_edited_file_resolves_from_its_markers(tmp_path: Path) -> None:
    """A person's edit inside the markers is kept: the index would drop it."""
    ours = {**BASE, "checks": [*BASE["checks"], POLITE]}
    theirs = {**BASE, "checks": [*BASE["checks"], NOTE]}
    project = branches(tmp_path, ours, theirs, driver=False, style="diff3")
    assert merge(project).returncode != 0
    path = project.baselines / NAME
    marked = path.read_bytes()
    assert marked.count(b'"label": "Polite reply"') == 1
    path.write_bytes(marked.replace(b'"label": "Polite reply"', b'"label": "Polite reply!"'))
    done = project.cli("fmt", "--resolve", str(path))
    assert done.exit_code == 0, done.output
    assert "sides from the markers: the file is not what git's line merge wrote" in done.stdout
    polite = {**POLITE, "label": "Polite reply!"}
    assert path.read_bytes() == serialize({**BASE, "checks": [*BASE["checks"], NOTE, polite]})


def test_an_edited_file_whose_markers_hold_no_json_is_refused_naming_it(tmp_path: Path) -> None:
    """While merging, git's index would merge; but the person edited the file, so its
    markers decide, and a side that is not JSON is refused, nothing written."""
    ours = {**BASE, "checks": [*BASE["checks"], POLITE]}
    theirs = {**BASE, "checks": [*BASE["checks"], NOTE]}
    project = branches(tmp_path, ours, theirs, driver=False)
    assert merge(project).returncode != 0
    path = project.baselines / NAME
    edited = b'{\n  "a": 1,\n<<<<<<< ours\n  "b": \n=======\n  "b": 2\n>>>>>>> theirs\n}\n'
    path.write_bytes(edited)
    done = project.cli("fmt", "--resolve", str(path))
    assert done.exit_code == 3, done.output
    assert f"baselines/{NAME} (ours): " in done.stderr
    assert "not what git's line merge wrote (edited since?)" in done.stderr
    assert f"git checkout --merge -- baselines/{NAME}" in done.stderr
    assert path.read_bytes() == edited


def audit(added: list[str], changed: list[str]) -> dict[str, Any]:
    return {"collections": {"auditLog": {"added": added, "changed": changed, "removed": []}}}


@pytest.mark.parametrize("style", ["diff3", "merge"])
def test_markers_alone_take_a_member_git_left_twice_from_the_block(
    tmp_path: Path, style: str
) -> None:
    """Theirs removed an id and changed one, ours changed another: git takes theirs'
    "changed" outside the markers and ours' inside, so each side read back holds the key
    twice. With a diff3 base the merge is made; with none, the member is a conflict."""
    state = "TASK-001.state-diff.json"
    project = branches(
        tmp_path,
        audit(["AUD-0001", "AUD-0002"], ["AUD-0003"]),
        audit(["AUD-0001"], ["AUD-0004"]),
        base=audit(["AUD-0001", "AUD-0002"], []),
        name=state,
        driver=False,
        style=style,
    )
    assert merge(project).returncode != 0
    path = project.baselines / state
    marked = path.read_bytes()
    assert marked.count(b'"changed": [\n') == 2  # the key twice: once in, once out
    git(project.root, "merge", "--abort")
    path.write_bytes(marked)
    done = project.cli("fmt", "--resolve")
    assert "sides from the markers: no merge of it is in progress" in done.stdout
    if style == "diff3":
        assert done.exit_code == 0, done.output
        expected = audit(["AUD-0001"], ["AUD-0003", "AUD-0004"])
        assert path.read_bytes() == serialize(expected)
    else:
        assert done.exit_code == 1, done.output
        assert f"conflicted      baselines/{state}: /collections/auditLog/changed" in done.stdout


@pytest.mark.parametrize("command", [("cherry-pick", "other"), ("rebase", "other")])
def test_a_stopped_cherry_pick_or_rebase_resolves_from_the_index(
    tmp_path: Path, command: tuple[str, str]
) -> None:
    """The index holds the three stages there too; the markers' labels are commits."""
    project = branches(tmp_path, SPLIT_OURS, SPLIT_THEIRS, base=SPLIT_BASE, driver=False)
    stopped = git(project.root, *command, check=False)
    assert stopped.returncode != 0, stopped.stdout
    path = project.baselines / NAME
    assert path.read_bytes().count(b"<<<<<<<") >= 1
    done = project.cli("fmt", "--resolve")
    assert done.exit_code == 0, done.output
    assert "sides from git's index (stages 2 and 3): the file is as git wrote it" in done.stdout
    assert path.read_bytes() == serialize(SPLIT_MERGED)


def test_the_driver_as_git_starts_it_imports_no_typer_and_no_other_command(
    tmp_path: Path,
) -> None:
    """Git starts one driver process per conflicted baseline: its start-up is per file."""
    files = {}
    for side, value in (("O", BASE), ("A", {**BASE, "reward": 0.5}), ("B", {**BASE, "x": 1})):
        files[side] = tmp_path / side
        files[side].write_bytes(serialize(value))
    args = [str(files[s]) for s in "OAB"]
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "silo_regress", "merge-driver", *args, NAME],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert files["A"].read_bytes() == serialize({**BASE, "reward": 0.5, "x": 1})
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "silo_regress.commands.mergedriver" in modules  # the probe sees imports at all
    loaded = {m for m in modules if m.split(".")[0] in ("typer", "click", "rich")}
    loaded |= modules & {"silo_regress.cli.app", "silo_regress.cli.core", "silo_regress.cli.quick"}
    assert not loaded, sorted(loaded)
    # the same words as the typer command for a conflict
    files["A"].write_bytes(serialize({**BASE, "reward": 0.5}))
    files["B"].write_bytes(serialize({**BASE, "reward": 0.25}))
    conflict = subprocess.run(
        [str(SILO), "merge-driver", *args, NAME], capture_output=True, text=True, check=False
    )
    assert conflict.returncode == 1
    assert f"{NAME}: both sides changed /reward differently" in conflict.stderr
