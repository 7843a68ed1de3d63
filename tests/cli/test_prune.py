"""`prune`: baselines of tasks nothing names are removed in one batch; others are kept."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from support.gitrepo import commit_all
from support.silofixture import SiloProject, git, git_init, make_project

from silo_regress.runs.discards import DISCARD_DIR


def _recorded(project: SiloProject, *tasks: str) -> dict[str, Path]:
    runs = {task: project.add_run(task) for task in tasks}
    assert project.cli("record", *tasks).exit_code == 0
    return runs


def test_prune_removes_only_baselines_nothing_names(project: SiloProject) -> None:
    runs = _recorded(project, "TASK-001", "TASK-002", "TASK-003")
    shutil.rmtree(runs["TASK-002"])  # the task is gone
    assert project.cli("discard", runs["TASK-003"].name).exit_code == 0  # discarded, not gone
    dry = project.cli("prune", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert (
        "would remove baselines/TASK-002.result.json (no run and no task definition" in dry.stdout
    )
    assert "would remove baselines/TASK-002.state-diff.json" in dry.stdout
    assert "kept TASK-003: it has discarded runs" in dry.stdout
    assert "dry run: 2 files would be removed; nothing was" in dry.stdout
    assert "TASK-002.result.json" in project.baseline_bytes()
    done = project.cli("prune")
    assert done.exit_code == 0, done.output
    assert "removed baselines/TASK-002.result.json" in done.stdout
    names = set(project.baseline_bytes())
    assert not {n for n in names if n.startswith("TASK-002")}
    assert {"TASK-001.result.json", "TASK-003.result.json"} <= names
    assert not (project.baselines / ".silo-regress-tmp").exists()  # the batch left nothing
    assert (
        project.cli("prune").stdout.strip()
        == "kept TASK-003: it has discarded runs\nnothing to prune"
    )


def test_a_config_table_or_an_input_file_keeps_a_task(tmp_path: Path) -> None:
    project = make_project(
        tmp_path / "p",
        config='inputs = ["environments/**"]\n\n[tool.silo-regress.tasks.TASK-005]\n'
        'ignore = ["/agentOutput"]\n',
    )
    (project.root / "environments").mkdir()
    (project.root / "environments" / "crm.ts").write_text('tasks: ["TASK-006"]\n')
    runs = _recorded(project, "TASK-005", "TASK-006", "TASK-007")
    for run in runs.values():
        shutil.rmtree(run)
    result = project.cli("prune")
    assert result.exit_code == 0, result.output
    assert "kept TASK-005: the config has a table for it" in result.stdout
    assert "kept TASK-006: an input file names it (environments/crm.ts)" in result.stdout
    assert "removed baselines/TASK-007.result.json" in result.stdout
    assert sorted(project.baseline_bytes()) == [
        ".silo-regress-format",
        "TASK-005.result.json",
        "TASK-005.state-diff.json",
        "TASK-006.result.json",
        "TASK-006.state-diff.json",
    ]


def test_a_chosen_list_is_removed_even_with_runs_and_unknown_refs_remove_nothing(
    project: SiloProject,
) -> None:
    _recorded(project, "TASK-001", "TASK-002")
    before = project.baseline_bytes()
    refused = project.cli("prune", "TASK-001", "TASK-404")
    assert refused.exit_code == 3
    assert "no baseline of TASK-404 to prune" in refused.stderr
    assert project.baseline_bytes() == before
    chosen = project.cli("prune", "TASK-001")
    assert chosen.exit_code == 0
    assert "removed baselines/TASK-001.result.json (named)" in chosen.stdout
    assert not any(n.startswith("TASK-001") for n in project.baseline_bytes())
    assert project.cli("check", "TASK-001").exit_code == 1  # missing-baseline now


def test_prune_removes_variants_and_empty_environment_directories(project: SiloProject) -> None:
    run = project.add_run("TASK-001", env="crm-east")
    assert project.cli("record", "crm-east/TASK-001").exit_code == 0
    (project.baselines / "crm-east" / "TASK-001~2.result.json").write_bytes(
        (project.baselines / "crm-east" / "TASK-001.result.json").read_bytes()
    )
    shutil.rmtree(run)
    result = project.cli("prune")
    assert result.exit_code == 0, result.output
    assert "removed baselines/crm-east/TASK-001~2.result.json" in result.stdout
    assert not (project.baselines / "crm-east").exists()


def test_prune_waits_for_the_writer_lock(project: SiloProject) -> None:
    from silo_regress.store.transaction import LOCK_WAIT

    runs = _recorded(project, "TASK-001")
    shutil.rmtree(runs["TASK-001"])
    assert LOCK_WAIT >= 1
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from silo_regress.store.transaction import writer_lock\n"
        "with writer_lock(Path(sys.argv[1]), command='record', wait=5):\n"
        "    print('held', flush=True)\n"
        "    time.sleep(1.5)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(project.baselines)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    started = time.monotonic()
    result = project.cli("prune")  # waits for the holder, then removes
    assert time.monotonic() - started > 0.5  # it waited for the lock
    assert holder.wait(10) == 0
    holder.stdout.close()
    assert result.exit_code == 0, result.output
    assert "TASK-001.result.json" not in project.baseline_bytes()


def test_prune_in_a_monorepo_touches_only_its_own_project(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git_init(repo)
    crm = make_project(repo / "agents" / "crm")
    erp = make_project(repo / "agents" / "erp")
    for project in (crm, erp):
        runs = _recorded(project, "TASK-001", "TASK-002")
        shutil.rmtree(runs["TASK-002"])
    (repo / ".gitignore").write_text(".silo/\n")
    commit_all(repo, "baselines")
    erp_before = erp.baseline_bytes()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    result = subprocess.run(
        [sys.executable, "-m", "silo_regress", "prune"],
        cwd=crm.root / "baselines",  # found by walking up from inside the project
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "removed baselines/TASK-002.result.json" in result.stdout
    assert erp.baseline_bytes() == erp_before  # the other project is untouched
    status = git(repo, "status", "--porcelain").stdout.splitlines()
    assert sorted(status) == [
        " D agents/crm/baselines/TASK-002.result.json",
        " D agents/crm/baselines/TASK-002.state-diff.json",
    ]


def test_check_never_prunes(project: SiloProject) -> None:
    runs = _recorded(project, "TASK-001")
    shutil.rmtree(runs["TASK-001"])
    before = project.baseline_bytes()
    assert project.cli("check").exit_code == 1  # missing-run, reported
    assert project.baseline_bytes() == before
    assert not (project.runs_dir / DISCARD_DIR).exists()


def test_the_dry_run_says_what_the_real_prune_does_with_a_symlinked_baseline(
    project: SiloProject, tmp_path: Path
) -> None:
    runs = _recorded(project, "TASK-001", "TASK-002", "TASK-003")
    for task in ("TASK-002", "TASK-003"):
        shutil.rmtree(runs[task])  # both tasks are gone
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(b"not a baseline of this project\n")
    link = project.baselines / "TASK-003.result.json"
    link.unlink()
    link.symlink_to(elsewhere)
    dry = project.cli("prune", "--dry-run")
    real = project.cli("prune")
    assert dry.exit_code == real.exit_code == 0, (dry.output, real.output)
    shown = (
        "refused TASK-003: baselines/TASK-003.result.json is a symbolic link (writes never "
        "follow one); none of its baselines is removed"
    )
    assert shown in dry.stdout and shown in real.stdout
    assert "would remove baselines/TASK-003" not in dry.stdout  # a task goes whole or not
    assert "dry run: 2 files would be removed; nothing was" in dry.stdout
    assert "2 files removed" in real.stdout
    # the same plan: every line but the verb and the closing one is the same
    strip = [line.replace("would remove", "removed") for line in dry.stdout.splitlines()[:-1]]
    assert strip == real.stdout.splitlines()[:-1]
    assert link.is_symlink() and elsewhere.read_bytes() == b"not a baseline of this project\n"
    assert not {n for n in project.baseline_bytes() if n.startswith("TASK-002")}
    assert (project.baselines / "TASK-003.state-diff.json").is_file()
