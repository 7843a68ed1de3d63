"""`discard` and `restore`: runs taken out of judging by a rename, listed, and put back."""

from __future__ import annotations

import os
from pathlib import Path

from support.silofixture import SiloProject, make_result

from silo_regress.runs.cache import CACHE_FILE, index_runs_cached
from silo_regress.runs.discards import DISCARD_DIR

WORSE = make_result(passed=False, reward=0)


def _experiment(project: SiloProject) -> tuple[Path, Path]:
    """TASK-001 recorded from a good run, then an experiment run that regresses."""
    good = project.add_run("TASK-001", started="2026-03-16T09:00:00.000Z")
    assert project.cli("record", "TASK-001").exit_code == 0
    bad = project.add_run("TASK-001", started="2026-03-16T10:00:00.000Z", result=WORSE)
    return good, bad


def _tree(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def test_discarding_a_run_by_id_moves_it_whole_and_check_judges_the_one_before(
    project: SiloProject,
) -> None:
    good, bad = _experiment(project)
    before = _tree(bad)
    assert project.cli("check").exit_code == 1
    result = project.cli("discard", bad.name)
    assert result.exit_code == 0, result.output
    moved = project.runs_dir / DISCARD_DIR / bad.name
    assert (
        f"discarded {bad.name} (crm-west/TASK-001): now .silo/runs/{DISCARD_DIR}/" in result.stdout
    )
    assert f"undo with: silo-regress restore {bad.name}" in result.stdout
    assert not bad.exists() and _tree(moved) == before  # every byte kept, nothing deleted
    checked = project.cli("check")
    assert checked.exit_code == 0, checked.output
    assert f"judged {good.name}, its newest run that is not discarded" in checked.stderr
    assert f"run {bad.name} is discarded" in checked.stderr
    status = project.cli("status")
    assert "; 1 discarded run\n" in status.stdout
    assert f"  {bad.name}  crm-west/TASK-001" in status.stdout


def test_discarding_a_task_takes_its_newest_run_and_restore_by_task_brings_it_back(
    project: SiloProject,
) -> None:
    _, bad = _experiment(project)
    assert project.cli("discard", "TASK-001").exit_code == 0
    assert (project.runs_dir / DISCARD_DIR / bad.name).is_dir()
    restored = project.cli("restore", "TASK-001")
    assert restored.exit_code == 0, restored.output
    assert f"restored {bad.name} (crm-west/TASK-001): now .silo/runs/{bad.name}" in restored.stdout
    assert bad.is_dir() and not (project.runs_dir / DISCARD_DIR / bad.name).exists()
    assert project.cli("check").exit_code == 1  # judged again
    assert "discarded" not in project.cli("status").stdout


def test_the_only_run_discarded_leaves_missing_run_and_says_why(project: SiloProject) -> None:
    run = project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    assert project.cli("discard", run.name).exit_code == 0
    checked = project.cli("check")
    assert checked.exit_code == 1
    assert "missing-run" in checked.stdout
    assert "no run of it is left to judge" in checked.stderr


def test_unknown_names_move_nothing_and_exit_3(project: SiloProject) -> None:
    _, bad = _experiment(project)
    result = project.cli("discard", bad.name, "run_nope")
    assert result.exit_code == 3
    assert "'run_nope' is neither a run directory there nor a task with runs" in result.stderr
    assert bad.is_dir()  # resolved before the first move: nothing moved
    restore = project.cli("restore", bad.name)
    assert restore.exit_code == 3
    assert "is neither a discarded run nor a task with discarded runs" in restore.stderr


def test_a_name_clash_is_refused_and_overwrites_nothing(project: SiloProject) -> None:
    _, bad = _experiment(project)
    assert project.cli("discard", bad.name).exit_code == 0
    again = project.add_run("TASK-001", name=bad.name, result=WORSE)  # old Silo reuses names
    clash = project.cli("restore", bad.name)
    assert clash.exit_code == 3
    assert "already holds a run of that name" in clash.stderr
    assert again.is_dir() and (project.runs_dir / DISCARD_DIR / bad.name).is_dir()
    second = project.cli("discard", bad.name)
    assert second.exit_code == 3
    assert "already holds a discarded run of that name" in second.stderr


def test_a_crashed_run_without_run_json_can_be_discarded(project: SiloProject) -> None:
    crashed = project.add_run("TASK-001", files={"run.json": None, "result.json": None})
    result = project.cli("discard", crashed.name)
    assert result.exit_code == 0, result.output
    assert "(no task: run.json unreadable)" in project.cli("status").stdout


def test_the_run_cache_sees_a_discard_and_a_restore(project: SiloProject) -> None:
    for n in range(5):
        project.add_run("TASK-001", started=f"2026-03-16T09:00:0{n}.000Z")
    newest = project.add_run("TASK-001", started="2026-03-16T10:00:00.000Z")
    first = index_runs_cached(project.runs_dir, min_runs=2, racy_ns=0)
    assert first.newest("crm-west", "TASK-001").name == newest.name  # type: ignore[union-attr]
    assert (project.runs_dir / CACHE_FILE).is_file()
    os.rename(newest, project.runs_dir / "elsewhere")  # warm the cache's fast path again
    os.rename(project.runs_dir / "elsewhere", newest)
    index_runs_cached(project.runs_dir, min_runs=2, racy_ns=0)
    assert project.cli("discard", newest.name).exit_code == 0
    after = index_runs_cached(project.runs_dir, min_runs=2, racy_ns=0)
    found = after.newest("crm-west", "TASK-001")
    assert found is not None and found.name != newest.name
    assert len(after.runs_of("crm-west", "TASK-001")) == 5
    assert project.cli("restore", newest.name).exit_code == 0
    back = index_runs_cached(project.runs_dir, min_runs=2, racy_ns=0)
    assert back.newest("crm-west", "TASK-001").name == newest.name  # type: ignore[union-attr]


def test_a_path_is_never_a_run_name_baselines_and_outside_stay_put(project: SiloProject) -> None:
    _, bad = _experiment(project)
    outside = project.root.parent / "X"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    before = project.baseline_bytes()
    for arg in ("../../baselines", "../../../X", f"./{bad.name}", f"{bad.name}/", ".", ".."):
        result = project.cli("discard", arg)
        assert result.exit_code == 3, (arg, result.output)
        assert "is not a run name" in result.stderr or "neither" in result.stderr, result.stderr
    assert project.baseline_bytes() == before
    assert (outside / "keep.txt").read_text() == "mine"
    assert bad.is_dir() and not (project.runs_dir / DISCARD_DIR).exists()


def test_restoring_what_is_not_discarded_is_refused_not_an_empty_undo(
    project: SiloProject,
) -> None:
    _, bad = _experiment(project)
    assert project.cli("discard", bad.name).exit_code == 0
    other = project.add_run("TASK-001", started="2026-03-16T11:00:00.000Z")
    for arg in (f"../{other.name}", other.name, "../../baselines"):
        result = project.cli("restore", arg)
        assert result.exit_code == 3, (arg, result.output)
        assert "undo with" not in result.stdout
    assert other.is_dir()


def test_a_discard_folder_replaced_by_a_symlink_is_neither_listed_nor_restored_through(
    project: SiloProject, tmp_path: Path
) -> None:
    _, bad = _experiment(project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    decoy = project.add_run("TASK-001", name="run_decoy")
    os.rename(decoy, elsewhere / "run_decoy")
    (project.runs_dir / DISCARD_DIR).symlink_to(elsewhere, target_is_directory=True)
    status = project.cli("status")
    assert "run_decoy" not in status.stdout
    restored = project.cli("restore", "run_decoy")
    assert restored.exit_code == 3, restored.output
    assert "not a real directory" in restored.stderr
    assert (elsewhere / "run_decoy").is_dir() and not (project.runs_dir / "run_decoy").exists()
    discarded = project.cli("discard", bad.name)
    assert discarded.exit_code == 3 and bad.is_dir()
