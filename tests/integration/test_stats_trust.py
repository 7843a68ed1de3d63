"""The stats gate is not told what to say: forged and symlinked candidates files, and
hostile tallies, each counted or refused in one sentence (issue 31's failure matrix).

Projects are built on disk (tests/support/silofixture.py): runs in Silo's layout, a
tally written by hand, a candidates file written as `check --run --repeat` writes it (or
forged), so each case takes well under a second; one case drives the stand-in Silo.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from support.silofixture import SiloProject, make_project, make_result

from silo_regress.recording.candidates import CANDIDATES_FILE, CANDIDATES_FORMAT

STATS = 'environment = "crm-west"\n[tool.silo-regress.tasks.TASK-001]\ngate = "stats"\n'
RECORDED = {  # the baseline tally: 9 of 10
    "checks": {"Lead qualified": 9, "Note logged": 10},
    "format": 1,
    "passed": 9,
    "reward": {"sum": 9, "sum-of-squares": 9},
    "rollouts": 10,
    "variants": {},
}


def canonical(value: Any) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def stats_project(tmp_path: Path, *, tally: Any = RECORDED) -> SiloProject:
    project = make_project(tmp_path / "project", config=STATS)
    project.baselines.mkdir()
    (project.baselines / "TASK-001.tally.json").write_bytes(canonical(tally))
    return project


def rollouts(project: SiloProject, *passed: bool, task: str = "TASK-001") -> list[Path]:
    return [
        project.add_run(task, result=make_result(passed=ok, reward=1 if ok else 0)) for ok in passed
    ]


def counted(runs: list[Path]) -> dict[str, Any]:
    """The tally check --run counts from ``runs`` (each with a result)."""
    results = [json.loads((run / "result.json").read_bytes()) for run in runs]
    passed = sum(r["passed"] for r in results)
    return {
        "checks": {
            "Lead qualified": sum(c["passed"] for r in results for c in r["checks"][:1]),
            "Note logged": len(results),
        },
        "format": 1,
        "passed": passed,
        "reward": {"sum": passed, "sum-of-squares": passed},
        "rollouts": len(results),
        "variants": {},
    }


def entry(
    project: SiloProject,
    runs: list[Path],
    *,
    tally: Any = None,
    names: list[str] | None = None,
) -> dict[str, Any]:
    """A candidates-file entry as the check writes it (``tally``/``names`` forge it)."""
    base = project.baselines / "TASK-001.tally.json"
    names = names if names is not None else [run.name for run in runs]
    digests = {run.name: sha((run / "result.json").read_bytes()) for run in runs}
    return {
        "baseline": sha(base.read_bytes()),
        "runs": [{"name": n, "result": digests.get(n)} for n in names],
        "tally": counted(runs) if tally is None else tally,
        "tier": "regression",
    }


def keep(project: SiloProject, item: dict[str, Any], *, fmt: int = CANDIDATES_FORMAT) -> Path:
    path = project.runs_dir / CANDIDATES_FILE
    path.write_bytes(canonical({"format": fmt, "tasks": {"TASK-001": item}}))
    return path


def review(project: SiloProject) -> Any:
    return project.cli("review", "--accept-all", "TASK-001")


def tally_bytes(project: SiloProject) -> bytes:
    return (project.baselines / "TASK-001.tally.json").read_bytes()


# --- the candidates file: recounted before it is accepted ---------------------


def test_a_genuine_candidate_is_recounted_and_accepted(tmp_path: Path) -> None:
    project = stats_project(tmp_path)
    runs = rollouts(project, True, False, False, False)
    keep(project, entry(project, runs))
    done = review(project)
    assert done.exit_code == 0, done.output
    assert "accepted baselines/TASK-001.tally.json from 4 rollouts: 9/10 -> 1/4 passed" in (
        done.stdout
    )
    assert json.loads(tally_bytes(project)) == counted(runs)


FORGERIES = {
    # the case: an entry naming no runs, accepted as "0/1000"
    "names no runs": lambda p, runs: entry(
        p, runs, names=[], tally={**RECORDED, "passed": 0, "rollouts": 1000, "checks": {}}
    ),
    "one run": lambda p, runs: entry(p, runs[:1]),
    "tally not what the runs count": lambda p, runs: entry(
        p, runs, tally={**counted(runs), "passed": 3, "checks": {"Note logged": 3}}
    ),
    "more rollouts than runs": lambda p, runs: entry(
        p, runs, tally={**counted(runs), "rollouts": 4}
    ),
    "a run named twice": lambda p, runs: entry(p, runs, names=[runs[0].name] * 3),
    "a run that is not there": lambda p, runs: entry(
        p, runs, names=[r.name for r in runs[:2]] + ["run_20260316100009_999"]
    ),
}


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_a_forged_candidate_is_refused_in_one_sentence(tmp_path: Path, forgery: str) -> None:
    project = stats_project(tmp_path)
    runs = rollouts(project, True, False, False)
    keep(project, FORGERIES[forgery](project, runs))
    before = tally_bytes(project)
    done = review(project)
    assert "silo-regress: error: baselines/TASK-001.tally.json: " in done.stdout, done.output
    assert "check --run --repeat N TASK-001" in done.stdout
    assert "accepted 0, rejected 0, skipped 0, failed 1" in done.stdout  # nor a result.json
    assert "Traceback" not in done.output
    assert tally_bytes(project) == before


def test_a_run_of_another_task_or_environment_is_refused(tmp_path: Path) -> None:
    project = stats_project(tmp_path)
    runs = rollouts(project, False, False)
    other = project.add_run("TASK-002", result=make_result(passed=False, reward=0))
    elsewhere = project.add_run("TASK-001", env="crm-east", result=make_result(passed=False))
    before = tally_bytes(project)
    for stranger, said in ((other, "crm-west/TASK-002"), (elsewhere, "crm-east/TASK-001")):
        keep(project, entry(project, [*runs, stranger]))
        done = review(project)
        assert f"run {stranger.name} is a rollout of {said}, not of TASK-001" in done.stdout
        assert tally_bytes(project) == before


def test_a_result_rewritten_since_the_check_is_refused(tmp_path: Path) -> None:
    project = stats_project(tmp_path)
    runs = rollouts(project, False, False, False)
    keep(project, entry(project, runs))
    # an agent turns a failure into a pass after the check counted it
    result = runs[1] / "result.json"
    result.write_bytes(result.read_bytes().replace(b'"passed": false', b'"passed": true', 1))
    before = tally_bytes(project)
    done = review(project)
    assert f"run {runs[1].name}'s result.json is not the one the check counted" in done.stdout
    assert tally_bytes(project) == before


def test_a_candidates_file_of_an_older_format_is_ignored(tmp_path: Path) -> None:
    project = stats_project(tmp_path)
    runs = rollouts(project, False, False)
    old = entry(project, runs)
    old["runs"] = [r.name for r in runs]  # format 1 named the runs only
    keep(project, old, fmt=1)
    done = review(project)
    assert "tally.json" not in done.stdout and done.exit_code == 0


def test_a_format_of_true_is_not_format_1(tmp_path: Path) -> None:
    project = stats_project(tmp_path)
    runs = rollouts(project, False, False)
    path = project.runs_dir / CANDIDATES_FILE
    path.write_bytes(canonical({"format": True, "tasks": {"TASK-001": entry(project, runs)}}))
    assert "tally.json" not in review(project).stdout


# --- the candidates file: never through a link, a FIFO or a huge file ---------


def test_a_candidates_file_that_is_a_link_is_not_read(tmp_path: Path) -> None:
    project = stats_project(tmp_path)
    runs = rollouts(project, False, False)
    real = tmp_path / "elsewhere.json"
    real.write_bytes(canonical({"format": CANDIDATES_FORMAT, "tasks": {}}))
    elsewhere = keep(project, entry(project, runs)).rename(real)
    (project.runs_dir / CANDIDATES_FILE).symlink_to(elsewhere)
    before = tally_bytes(project)
    done = review(project)
    assert "tally.json" not in done.stdout
    assert tally_bytes(project) == before


def test_a_huge_or_fifo_candidates_file_is_not_read(tmp_path: Path) -> None:
    project = stats_project(tmp_path)
    rollouts(project, False, False)
    path = project.runs_dir / CANDIDATES_FILE
    with path.open("wb") as huge:  # sparse: 100 MB that take no disk
        huge.truncate(100 << 20)
    assert "tally.json" not in review(project).stdout
    path.unlink()
    os.mkfifo(path)
    assert "tally.json" not in review(project).stdout  # a FIFO is never opened to block


def test_check_run_never_writes_through_a_link_planted_at_the_candidates_file(
    tmp_path: Path, control: Path
) -> None:
    """`check --run --repeat` keeps its candidates beside the runs, where an agent can
    plant a link to any file the user can write: the link is refused, never followed."""
    from support.runnerkit import behave, silo_project

    project = silo_project(tmp_path, '\n[tool.silo-regress.tasks.TASK-001]\ngate = "stats"\n')
    project.baselines.mkdir()
    (project.baselines / "crm-west").mkdir()
    (project.baselines / "TASK-001.tally.json").write_bytes(canonical(RECORDED))
    behave(control, **{"TASK-001": {"mode": "fail"}})
    project.runs_dir.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"the user's file\n")
    link = project.runs_dir / CANDIDATES_FILE
    link.symlink_to(victim)
    done = project.cli("check", "--run", "--repeat", "2", "--jobs", "1", "TASK-001")
    assert done.exit_code in (0, 1) and "stats gate" in done.stdout, done.output  # judged
    assert victim.read_bytes() == b"the user's file\n"
    assert link.is_symlink()
    assert f"{link}: is a symbolic link, not a regular file, so it is not replaced" in (done.output)


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory"])
def test_write_atomic_without_follow_refuses_what_is_not_a_regular_file(
    tmp_path: Path, kind: str
) -> None:
    from silo_regress.system.fsio import FileError, write_atomic

    target = tmp_path / "file.json"
    victim = tmp_path / "victim"
    victim.write_bytes(b"old")
    if kind == "symlink":
        target.symlink_to(victim)
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    with pytest.raises(FileError, match="not a regular file, so it is not replaced"):
        write_atomic(target, b"new", follow=False)
    assert victim.read_bytes() == b"old"
    assert target.is_symlink() or not target.is_file()
    write_atomic(tmp_path / "fresh.json", b"new", follow=False)  # a plain write still works
    assert (tmp_path / "fresh.json").read_bytes() == b"new"


# --- review offers what the gate counts ---------------------------------------


def _changed_project(tmp_path: Path, extra: str) -> SiloProject:
    """Baselines recorded from a passing rollout; the newest rollout fails and differs."""
    project = make_project(
        tmp_path / "project",
        config='environment = "crm-west"\n[tool.silo-regress.tasks.TASK-001]\n' + extra,
    )
    project.add_run()
    assert project.cli("record", "TASK-001").exit_code == 0
    (project.baselines / "TASK-001.tally.json").write_bytes(canonical(RECORDED))
    project.add_run(
        result=make_result(passed=False, reward=0), state_diff={"scalars": [], "collections": {}}
    )
    return project


def test_review_of_a_stats_task_offers_no_byte_difference(tmp_path: Path) -> None:
    project = _changed_project(tmp_path, 'gate = "stats"\n')
    before = project.baseline_bytes()
    done = review(project)
    assert done.exit_code == 0, done.output
    assert "accepted baselines/TASK-001.result.json" not in done.stdout
    assert "nothing to review" in done.stdout
    assert project.baseline_bytes() == before  # no result baseline from a failing rollout


def test_review_of_gate_both_offers_only_the_exact_artifacts(tmp_path: Path) -> None:
    project = _changed_project(tmp_path, 'gate = "both"\nexact-artifacts = ["state-diff.json"]\n')
    before = project.baseline_bytes()
    done = review(project)
    assert done.exit_code == 0, done.output
    assert "accepted baselines/TASK-001.state-diff.json" in done.stdout
    assert "TASK-001.result.json" not in done.stdout
    assert "1 to review: accepted 1, rejected 0, skipped 0" in done.stdout  # counter = closing
    after = project.baseline_bytes()
    assert after["TASK-001.result.json"] == before["TASK-001.result.json"]
    assert after["TASK-001.state-diff.json"] != before["TASK-001.state-diff.json"]


# --- hostile tallies: counted or refused, in time, by every command that reads them ---

HOSTILE: dict[str, Any] = {
    # name: (how the tally's bytes are made, whether it is valid)
    "at the bound": {
        **RECORDED,
        "passed": 99_990,
        "rollouts": 100_000,
        "checks": {"Lead qualified": 99_990, "Note logged": 100_000},
        "reward": {"sum": 99_990, "sum-of-squares": 99_990},
    },
    "huge": {**RECORDED, "rollouts": 100_001},
    "negative": {**RECORDED, "passed": -1},
    "float": {**RECORDED, "rollouts": 10.5},
    "boolean": {**RECORDED, "passed": True},
    "400-digit count": {**RECORDED, "rollouts": 10**400},
    "400-digit reward": {**RECORDED, "reward": {"sum": 10**400, "sum-of-squares": 9}},
    "format true": {**RECORDED, "format": True},
}
REFUSED = {
    "huge": "/rollouts is 100001, more than the 100000 rollouts a tally counts",
    "negative": "/passed must not be negative, not -1",
    "float": "/rollouts must be a whole number, not 10.5",
    "boolean": "/passed must be a whole number, not true",
    "400-digit count": "/rollouts is a 401-digit number, more than the 100000 rollouts",
    "400-digit reward": "/reward/sum is a 401-digit number, beyond the",
    "format true": "/format must be 1, not true",
    "100 MB": "is 104857600 bytes, more than the 1048576 a tally may be",
}


def _hostile_bytes(case: str) -> bytes:
    if case == "100 MB":
        return b" " * (100 << 20)
    return canonical(HOSTILE[case])


def _git(root: Path, *args: str) -> None:
    from support.silofixture import git

    git(root, *args)


@pytest.fixture(scope="module")
def committed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stats project in git: a passing and a failing run, the 9/10 tally committed."""
    root = tmp_path_factory.mktemp("hostile")
    project = stats_project(root)
    rollouts(project, True, False)
    assert project.cli("record", "TASK-001").exit_code == 0
    _git(project.root, "init", "-q", "-b", "main")
    (project.root / ".gitignore").write_text(".silo/\n")
    _git(project.root, "add", "-A")
    _git(project.root, "commit", "-qm", "a 9/10 tally")
    return project.root


COMMANDS = {
    "check": ["check"],
    "hook": ["check", "--staged"],
    "against": ["check", "--against", "HEAD"],
    "status": ["status"],
    "fmt --check": ["fmt", "--check"],
    "diff --from": ["diff", "--from", "HEAD~1"],
    "log": ["log", "TASK-001"],
}


@pytest.mark.parametrize("case", [*HOSTILE, "100 MB"])
def test_every_command_counts_or_refuses_a_hostile_tally_in_time(
    committed: Path, tmp_path: Path, case: str
) -> None:
    import shutil
    import subprocess
    import sys
    import time

    root = tmp_path / "project"
    shutil.copytree(committed, root, symlinks=True)
    (root / "baselines" / "TASK-001.tally.json").write_bytes(_hostile_bytes(case))
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", f"a tally, {case}")
    tool = Path(sys.executable).with_name("silo-regress")
    for name, args in COMMANDS.items():
        started = time.monotonic()
        done = subprocess.run(
            [str(tool), "--color", "never", *args],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=30,
            env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"},
        )
        took = time.monotonic() - started
        said = done.stdout + done.stderr
        where = f"{case}, {name}: exit {done.returncode}\n{said[-2000:]}"
        assert took < 5, f"{where} took {took:.1f} s"  # a hang guard: each takes well under 1 s
        assert "Traceback" not in said and done.returncode != 4, where
        assert len(said) < 20_000, f"{where}: {len(said)} characters"
        if case in REFUSED:
            # fmt --check lists it as invalid (exit 1); diff and log show history, in
            # which a bad tally is one named line (exit 0): a refusal, never a count
            allowed = {"fmt --check": (1,), "diff --from": (0,), "log": (0,)}.get(name, (3,))
            assert done.returncode in allowed, where
            assert "TASK-001.tally.json" in said and REFUSED[case] in said, where
        else:
            assert done.returncode in (0, 1), where


# --- record --repeat: a stats task is one line; a varying verdict is the stats gate ---


def test_record_repeat_of_a_stats_task_is_one_line_of_tally_rate_and_interval(
    tmp_path: Path, control: Path
) -> None:
    from support.runnerkit import behave, silo_project

    project = silo_project(tmp_path, '\n[tool.silo-regress.tasks.TASK-001]\ngate = "stats"\n')
    modes = ["ok", "fail", "ok", "ok", "fail", "ok", "ok", "fail", "ok", "fail"]  # newest fails
    behave(control, **{"TASK-001": {"mode": "vary", "modes": modes}})
    done = project.cli("record", "--repeat", "10", "--jobs", "1", "TASK-001")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    (line,) = [x for x in lines if x.startswith("crm-west/TASK-001:")]
    assert line == "crm-west/TASK-001: stats gate, 6/10 passed: 60.0% [31.3%, 83.2%]"
    assert "FLAKY" not in done.stdout
    assert "recorded: FAILS" not in done.stdout  # the newest of ten is not the task's verdict
    assert "TASK-001.tally.json: tally of 10 rollouts, 6/10 passed: 60.0%" in done.stdout
    assert len(lines) < 12, done.stdout


def test_record_repeat_of_an_exact_task_whose_verdict_varies_advises_the_stats_gate_only(
    tmp_path: Path, control: Path
) -> None:
    from support.runnerkit import behave, silo_project

    project = silo_project(tmp_path)
    behave(control, **{"TASK-001": {"mode": "vary", "modes": ["ok", "fail", "ok", "ok"]}})
    done = project.cli("record", "--repeat", "4", "--jobs", "1", "TASK-001")
    assert done.exit_code == 1, done.output
    assert "FLAKY" in done.stdout and "result.json /passed: true x3, false x1" in done.stdout
    assert '[tool.silo-regress.tasks."crm-west/TASK-001"]\n    gate = "stats"\n' in done.stdout
    assert "ignoring the verdict would switch the gate off" in done.stdout
    assert "ignore = [" not in done.stdout and "--variants" not in done.stdout


@pytest.mark.parametrize(
    ("count", "mean", "refused"),
    [
        (100_000, 0.5, None),  # at the bound: judged, in time
        (10**9, 0.5, "rollouts is more than the 100000 rollouts a tally counts"),
        (10**400, 0.5, "rollouts is more than the 100000 rollouts a tally counts"),
        (100_000, 10**400, "reward_mean is beyond the"),
    ],
    ids=["at the bound", "a billion", "400 digits", "a 400-digit reward"],
)
def test_merge_bounds_a_forged_shards_counts(
    committed: Path, tmp_path: Path, count: int, mean: int | float, refused: str | None
) -> None:
    import shutil
    import time

    from support.silofixture import SiloProject

    root = tmp_path / "project"
    shutil.copytree(committed, root, symlinks=True)
    project = SiloProject(root=root, runs_dir=root / ".silo" / "runs")
    report = tmp_path / "shard.json"
    project.cli("check", "--format", "json", "--output", str(report))
    document = json.loads(report.read_bytes())
    for side in ("baseline", "candidate"):
        document["stats"]["tasks"][0][side].update(
            passed=count // 2, rollouts=count, reward_mean=mean
        )
    report.write_text(json.dumps(document), encoding="utf-8")
    started = time.monotonic()
    done = project.cli("merge", str(report))
    assert time.monotonic() - started < 5, done.output  # a hang guard; well under 1 s
    assert "Traceback" not in done.output
    if refused is None:
        assert done.exit_code in (0, 1), done.output
    else:
        assert done.exit_code == 3 and refused in done.output, done.output
