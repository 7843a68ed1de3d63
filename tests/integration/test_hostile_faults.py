"""The fault matrix: signals, kills, concurrent writers and fuzzed files, seeded.

Bounded for CI (about half a minute on a shared two-core machine); bench/soak.py
runs the same trials for as long as asked. Every trial's file state is judged by
tests/faultkit.py: old or new, never a mix, no leftovers, nothing staged by
``git add baselines/`` that is not a baseline.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.faultkit import Trial, build, command, reset, run_trial
from support.silofixture import SiloProject, make_project, make_result

SEED = 13


@pytest.fixture(scope="module")
def faulty(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[SiloProject, dict[str, bytes], dict[str, bytes]]:
    return build(tmp_path_factory.mktemp("faults") / "project")


def _matrix() -> list[Trial]:
    """Every signal at every rename, plus seeded points of the staging and journal steps."""
    rng = random.Random(SEED)
    trials = [
        Trial(sig, "rename", at)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL)
        for at in (1, 8)  # the first rename, and the last before the commit
    ]
    for _ in range(4):
        sig = rng.choice((signal.SIGINT, signal.SIGTERM, signal.SIGKILL))
        phase = rng.choice(("stage", "journal"))
        trials.append(Trial(sig, phase, rng.randint(1, 8) if phase == "stage" else 1))
    return trials


@pytest.mark.parametrize("trial", _matrix(), ids=lambda t: t.describe().replace(" ", "-"))
def test_an_interrupted_record_changes_no_baseline(
    faulty: tuple[SiloProject, dict[str, bytes], dict[str, bytes]], trial: Trial
) -> None:
    project, old, new = faulty
    reset(project, old)
    verdict = run_trial(project, trial, old=old, new=new)
    assert not verdict.lost, verdict
    assert verdict.state == "old", verdict  # every point here is before the commit
    expected = -9 if trial.signal == signal.SIGKILL else 130
    assert verdict.exit_code == expected, verdict
    if trial.signal != signal.SIGKILL:
        assert verdict.message == "silo-regress: error: interrupted", verdict


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_ignored_signal_never_undoes_a_record_reported_as_written(
    faulty: tuple[SiloProject, dict[str, bytes], dict[str, bytes]], sig: int
) -> None:
    """With SIGINT ignored (a job run with `&`), the batch was rolled back and exit 0."""
    project, old, new = faulty
    reset(project, old)
    verdict = run_trial(project, Trial(sig, "rename", 3, ignored=True), old=old, new=new)
    assert verdict.exit_code == 0, verdict
    assert verdict.state == "new", verdict
    assert not verdict.lost, verdict


def test_a_timed_kill_at_random_moments_loses_nothing(
    faulty: tuple[SiloProject, dict[str, bytes], dict[str, bytes]],
) -> None:
    """Real timing, not patched calls: any moment of a record from start-up to exit."""
    project, old, new = faulty
    rng = random.Random(SEED)
    for _ in range(3):
        reset(project, old)
        sig = rng.choice((signal.SIGINT, signal.SIGTERM, signal.SIGKILL))
        verdict = run_trial(project, Trial(sig, "timed", rng.uniform(0.05, 0.6)), old=old, new=new)
        assert not verdict.lost, verdict
        assert verdict.state == ("new" if verdict.exit_code == 0 else verdict.state)


def test_concurrent_writers_serialise(
    faulty: tuple[SiloProject, dict[str, bytes], dict[str, bytes]],
) -> None:
    """Two records and a fmt at once: each waits its turn; the result is the records'."""
    project, old, new = faulty
    reset(project, old)
    base = [sys.executable, "-m", "silo_regress", "--project", str(project.root)]
    procs = [
        subprocess.Popen([*base, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for args in (("record", "--all"), ("fmt",), ("record", "--all"), ("fmt",))
    ]
    results = []
    for proc in procs:
        with proc:  # closes its pipes: a leaked one is a ResourceWarning, an error here
            _, err = proc.communicate(timeout=60)
        results.append((proc.returncode, err))
    assert all(code == 0 for code, _ in results), results
    assert project.baseline_bytes() == new
    assert not (project.baselines / ".silo-regress-tmp").exists()


def test_fmt_racing_record_never_puts_old_values_back(tmp_path: Path) -> None:
    """fmt rewrote non-canonical old baselines over just-recorded ones (16 files, 6 trials)."""
    project, old, new = build(tmp_path / "race")
    ugly = {
        name: data.replace(b"\n", b"\r\n") for name, data in old.items() if name.endswith(".json")
    }
    base = [sys.executable, "-m", "silo_regress", "--project", str(project.root)]
    for _ in range(2):
        reset(project, old)
        for name, data in ugly.items():
            (project.baselines / name).write_bytes(data)
        fmt = subprocess.Popen([*base, "fmt"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        rec = subprocess.Popen(
            [*base, "record", "--all"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        with fmt, rec:
            rec.communicate(timeout=60)
            fmt.communicate(timeout=60)
        assert rec.returncode == 0
        assert fmt.returncode in (0, 1)
        now = project.baseline_bytes()
        assert now == new, sorted(k for k in now if now[k] != new.get(k))


# --- fuzzed runs and baselines, bad config values (in-process: hundreds of cases) ----


def _mutations(data: bytes, rng: random.Random) -> list[bytes]:
    cut = rng.randrange(1, len(data))
    flip = bytearray(data)
    flip[rng.randrange(len(flip))] = rng.randrange(256)
    return [
        data[:cut],
        bytes(flip),
        data.replace(b": 1", b": NaN", 1),
        data.replace(b": 1", b": 1e400", 1),
        data.replace(b'"', b'"\xff', 1),
        b"[" * 5000 + b"]" * 5000,
        data.replace(b"{", b'{"a": 1, "a": 2, ', 1),
        b"\xef\xbb\xbf" + data,
        b"",
        data + b"\x00",
    ]


def test_fuzzed_runs_and_baselines_end_in_a_verdict_or_one_sentence(
    project: SiloProject,
) -> None:
    rng = random.Random(SEED)
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    baseline = project.baselines / "TASK-001.result.json"
    good = baseline.read_bytes()
    cases = 0
    for _ in range(2):
        for bad in _mutations(good, rng):
            for target in ("run", "baseline"):
                if target == "run":
                    baseline.write_bytes(good)
                    run = project.add_run("TASK-001", files={"result.json": bad})
                else:
                    run = project.add_run("TASK-001")
                    baseline.write_bytes(bad)
                for args in (("check",), ("status",), ("fmt", "--check"), ("diff", "TASK-001")):
                    result = project.cli(*args)
                    cases += 1
                    assert result.exit_code in (0, 1, 3), (args, target, bad[:60], result.output)
                    if result.exit_code == 3:
                        lines = result.stderr.strip().splitlines()
                        assert lines[-1].startswith("silo-regress: error: "), result.stderr
                del run
    assert cases >= 150


@pytest.mark.parametrize(
    "line",
    [
        "tool = 3",
        "jobs = inf",
        "jobs = nan",
        "timeout = nan",
        'baselines-dir = "a\\u0000b"',
        'artifacts = ["result.json\\u0000"]',
        "artifacts = " + "[" * 500 + "]" * 500,
        'environment = "../../etc"',
        'ignore = [""]',
    ],
)
def test_bad_config_values_are_one_sentence(tmp_path: Path, line: str) -> None:
    project = make_project(tmp_path / "p", config=line + "\n")
    project.add_run("TASK-001", result=make_result())
    for args in (("check",), ("record", "TASK-001")):
        result = project.cli(*args)
        assert result.exit_code in (0, 1, 3), (line, args, result.output)
        if result.exit_code == 3:
            assert result.stderr.startswith("silo-regress: error: "), result.stderr
    assert command(project, "status").returncode != 4


def test_a_killed_batch_is_rolled_back_only_on_its_own_machine(
    faulty: tuple[SiloProject, dict[str, bytes], dict[str, bytes]],
) -> None:
    """The journal a kill -9 leaves is honoured by this machine's next writer; the same
    journal claiming another host (as a committed one would) is refused and left."""
    import json
    import os

    from support.faultkit import DRIVER

    project, old, _ = faulty
    reset(project, old)

    def baselines() -> dict[str, bytes]:
        return {k: v for k, v in project.baseline_bytes().items() if ".silo-regress" not in k}

    env = {**os.environ, "FAULT_SIGNAL": str(int(signal.SIGKILL)), "FAULT_PHASE": "rename"}
    env["FAULT_AT"] = "4"
    args = [sys.executable, "-c", DRIVER, "--project", str(project.root), "record", "--all"]
    killed = subprocess.run(args, capture_output=True, text=True, timeout=60, env=env, check=False)
    assert killed.returncode == -9, killed.stderr
    torn = baselines()
    assert torn != old, "the kill fell between two renames"
    journal = project.baselines / ".silo-regress-tmp" / "journal.json"
    own = json.loads(journal.read_text())
    journal.write_text(json.dumps({**own, "host": "elsewhere"}))
    refused = command(project, "fmt")
    assert refused.returncode == 3, refused.stderr
    assert "journal.json: refused: it was written on host 'elsewhere'" in refused.stderr
    assert baselines() == torn and journal.exists()
    journal.write_text(json.dumps(own))
    assert command(project, "fmt").returncode == 0
    assert project.baseline_bytes() == old
    assert not (project.baselines / ".silo-regress-tmp").exists()
