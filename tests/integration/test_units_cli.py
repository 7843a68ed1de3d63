"""``check --run --unit I/N`` workers in separate clones, and ``merge`` of their unit
reports, against one machine running the same rollouts with the seeded stand-in."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from support.runnerkit import processes_under
from support.unitkit import SILO_REGRESS, cli, clone, environ, make_suite, seeded

TASKS, REPEAT, WORKERS = 6, 8, 8


@pytest.fixture
def suite(tmp_path: Path) -> tuple[Path, Path]:
    control = tmp_path / "control" / "control.json"
    return make_suite(tmp_path / "origin", control, tasks=TASKS), control


def unit_check(unit: str, out: str, *, jobs: int | None = 1, repeat: int = REPEAT) -> list[str]:
    """The arguments of one worker's ``check --run`` of ``unit`` into ``out``."""
    jobs_args = ["--jobs", str(jobs)] if jobs is not None else []
    return ["check", "--run", "--repeat", str(repeat), *jobs_args, "--unit", unit, "--output", out]


def one_machine(origin: Path, tmp_path: Path, env: dict[str, str]) -> str:
    where = clone(origin, tmp_path / "one", env)
    done = cli(
        where,
        "check",
        "--run",
        "--repeat",
        str(REPEAT),
        "--jobs",
        "2",
        "--format",
        "json",
        env=env,
        check=None,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def provenance_rollouts(clone_dir: Path) -> list[str | None]:
    found = []
    for run in sorted((clone_dir / ".silo" / "runs").iterdir()):
        record = run / "silo-regress.json"
        found.append(json.loads(record.read_text()).get("rollout") if record.exists() else None)
    return found


def stop_everything_under(directory: Path) -> None:
    """SIGKILL every process working in ``directory`` until none is left for a while: a
    stand-in started just before the kill has not written its pid anywhere yet."""
    quiet_since = time.monotonic()
    while time.monotonic() - quiet_since < 0.5:
        for proc in processes_under(directory):
            with contextlib.suppress(psutil.Error):
                proc.kill()
                quiet_since = time.monotonic()
        time.sleep(0.05)


def test_units_in_separate_clones_merge_to_the_one_machine_report(
    suite: tuple[Path, Path], tmp_path: Path
) -> None:
    origin, control = suite
    seeded(control, seed=7, rate=0.75)
    env = environ(control)
    expected = one_machine(origin, tmp_path, env)
    reports = []
    for index in range(1, WORKERS + 1):
        where = clone(origin, tmp_path / f"w{index}", env)
        out = tmp_path / f"unit-{index}.json"
        if index == 3:  # killed mid-way, then started again in the same clone
            slow = environ(control, FAKE_SILO_SLEEP="0.4")
            seeded(control, seed=7, rate=0.75, sleep=0.4)
            worker = subprocess.Popen(
                [
                    str(SILO_REGRESS),
                    *unit_check(f"{index}/{WORKERS}", str(out)),
                ],
                cwd=where,
                env=slow,
                start_new_session=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            runs = where / ".silo" / "runs"
            deadline = time.monotonic() + 60
            while not runs.is_dir() or sum(1 for r in provenance_rollouts(where) if r) < 2:
                assert time.monotonic() < deadline and worker.poll() is None
                time.sleep(0.05)
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
            stop_everything_under(where)  # Silo's own session outlives the worker
            assert not out.exists()
            seeded(control, seed=7, rate=0.75)
            before = provenance_rollouts(where)
            kept = [r for r in before if r]
            assert len(before) - len(kept) <= 1  # at most the rollout it was in
            cli(
                where,
                *unit_check(f"{index}/{WORKERS}", str(out)),
                env=env,
            )
            made = len(provenance_rollouts(where)) - len(before)
            mine = len(json.loads(out.read_text())["rollouts"])
            assert made == mine - len(kept)  # nothing made before is made again
        else:
            cli(
                where,
                *unit_check(f"auto/{WORKERS}", str(out)),
                env={**env, "SILO_REGRESS_UNIT_INDEX": str(index - 1)},
            )
        reports.append(str(out))
    twice = tmp_path / "unit-5-again.json"  # a retried job: its units count once
    again = clone(origin, tmp_path / "w5-again", env)
    cli(
        again,
        *unit_check(f"5/{WORKERS}", str(twice), jobs=None),
        env=env,
    )
    merged = cli(origin, "merge", *reports, str(twice), "--format", "json", env=env, check=None)
    assert merged.returncode in (0, 1), merged.stderr
    assert merged.stdout == expected
    document = json.loads(merged.stdout)
    assert sum(t["candidate"]["rollouts"] for t in document["stats"]["tasks"]) == TASKS * REPEAT


def test_rollouts_that_fail_to_start_are_retried_and_named_and_change_no_verdict(
    suite: tuple[Path, Path], tmp_path: Path
) -> None:
    origin, control = suite
    seeded(control, seed=7, rate=0.75)
    env = environ(control)
    expected = json.loads(one_machine(origin, tmp_path, env))
    seeded(control, seed=7, rate=0.75, start_failure=0.1)
    reports = []
    for index in range(1, 3):
        where = clone(origin, tmp_path / f"w{index}", env)
        out = tmp_path / f"unit-{index}.json"
        cli(
            where,
            *unit_check(f"{index}/2", str(out), jobs=2),
            env=env,
        )
        reports.append(str(out))
    merged = cli(origin, "merge", *reports, "--format", "json", env=env, check=None)
    document = json.loads(merged.stdout)
    retried = document["units"]["retried"]
    assert retried and not document["units"]["infraErrors"] and not document["units"]["missing"]
    assert "started only on a retry" in merged.stderr
    tiers = [(t["task"], t["tier"]) for t in document["stats"]["tasks"]]
    assert tiers == [(t["task"], t["tier"]) for t in expected["stats"]["tasks"]]
    assert document["stats"]["suite"] == expected["stats"]["suite"]


def test_a_unit_that_never_starts_is_named_and_the_merge_is_not_passed(
    suite: tuple[Path, Path], tmp_path: Path
) -> None:
    origin, control = suite
    control.write_text(json.dumps({"default": {"mode": "config-error"}}), encoding="utf-8")
    with (origin / "silo-regress.toml").open("a", encoding="utf-8") as config:
        config.write("retry-infra = 2\n")  # each rollout started three times in all
    env = environ(control)
    out = tmp_path / "unit-1.json"
    done = cli(
        origin,
        *unit_check("1/8", str(out), jobs=None, repeat=2),
        env=env,
        check=3,
    )
    assert "never started after their retries (infra-error" in done.stderr
    written = json.loads(out.read_text())
    assert {r["result"] for r in written["rollouts"]} == {"infra-error"}
    assert all(r["attempts"] == 3 for r in written["rollouts"])
    merged = cli(origin, "merge", str(out), env=env, check=1)
    assert "have no report" in merged.stderr and "never started" in merged.stderr
    assert "passed" not in merged.stdout.lower().replace("stats gate passed", "")


def test_silo_gets_the_rollout_identity_and_the_run_records_it(
    suite: tuple[Path, Path], tmp_path: Path
) -> None:
    origin, control = suite
    seeded(control)
    env = environ(control, SILO_REGRESS_RESOURCE_CLASS="ci-small")
    cli(
        origin,
        *unit_check("1/4", str(tmp_path / "u.json"), jobs=None, repeat=2),
        env=env,
    )
    records = [
        json.loads((run / "silo-regress.json").read_text())
        for run in (origin / ".silo" / "runs").iterdir()
    ]
    assert sorted(r["rollout"] for r in records) == [
        "crm-west/TASK-001#1",
        "crm-west/TASK-003#1",
        "crm-west/TASK-005#1",
    ]
    assert {r["resourceClass"]["name"] for r in records} == {"ci-small"}
    # The seeded stand-in decided each rollout by that identity: run again, same results.
    first = json.loads((tmp_path / "u.json").read_text())["rollouts"]
    again = clone(origin, tmp_path / "again", env)
    cli(
        again,
        *unit_check("1/4", str(tmp_path / "v.json"), jobs=None, repeat=2),
        env=env,
    )
    second = json.loads((tmp_path / "v.json").read_text())["rollouts"]
    assert [(r["rollout"], r["resultSha256"]) for r in first] == [
        (r["rollout"], r["resultSha256"]) for r in second
    ]


def test_merge_refuses_units_of_another_resource_class_unless_told(
    suite: tuple[Path, Path], tmp_path: Path
) -> None:
    origin, control = suite
    seeded(control)
    reports = []
    for index, kind in ((1, "small"), (2, "large")):
        env = environ(control, SILO_REGRESS_RESOURCE_CLASS=kind)
        where = clone(origin, tmp_path / f"w{index}", env)
        out = tmp_path / f"unit-{index}.json"
        cli(
            where,
            *unit_check(f"{index}/2", str(out), jobs=None, repeat=2),
            env=env,
        )
        reports.append(str(out))
    env = environ(control)
    refused = cli(origin, "merge", *reports, env=env, check=3)
    assert "unit-2.json: ran on large" in refused.stderr
    assert "--pool-across-classes" in refused.stderr
    pooled = cli(origin, "merge", *reports, "--pool-across-classes", env=env, check=None)
    assert pooled.returncode in (0, 1), pooled.stderr


def test_merge_refuses_a_unit_report_beside_a_check_report(
    suite: tuple[Path, Path], tmp_path: Path
) -> None:
    origin, control = suite
    seeded(control)
    env = environ(control)
    unit = tmp_path / "unit.json"
    cli(origin, *unit_check("1/2", str(unit), jobs=None, repeat=2), env=env)
    shard = tmp_path / "shard.json"
    cli(
        origin,
        "check",
        "--run",
        "--repeat",
        "2",
        "--shard",
        "1/2",
        "--format",
        "json",
        "--output",
        str(shard),
        env=env,
        check=None,
    )
    refused = cli(origin, "merge", str(unit), str(shard), env=env, check=3)
    assert f"{shard}: a check report, but {unit} is a unit report" in refused.stderr


@pytest.mark.parametrize(
    ("forge", "words"),
    [
        ({"alpha": 0}, "alpha must be a number in (0, 0.5]"),
        ({"alpha": -1}, "alpha must be a number in (0, 0.5]"),
        ({"alpha": "0"}, "alpha must be a number in (0, 0.5]"),
        ({"alpha": 0.01}, "stats policy (alpha 0.01"),
        ({"policy": {"suite_gate": "off"}}, "stats policy"),
        ({"policy": {"suite_gate": "never"}}, "suite_gate must be one of"),
    ],
)
def test_merge_refuses_a_shard_whose_stats_policy_is_forged_or_differs(
    suite: tuple[Path, Path], tmp_path: Path, forge: dict[str, object], words: str
) -> None:
    origin, control = suite
    seeded(control, seed=7, rate=0.2)  # a drop: the honest shards fail
    env = environ(control)
    paths = []
    for k in (1, 2):
        path = tmp_path / f"shard-{k}.json"
        cli(
            origin,
            "check",
            "--run",
            "--repeat",
            "4",
            "--shard",
            f"{k}/2",
            "--format",
            "json",
            "--output",
            str(path),
            env=env,
            check=None,
        )
        paths.append(path)
    honest = cli(origin, "merge", *map(str, paths), env=env, check=1)
    assert "regression" in honest.stdout
    document = json.loads(paths[1].read_text())
    policy = forge.pop("policy", None)
    document["stats"].update(forge)
    if isinstance(policy, dict):
        document["stats"]["policy"].update(policy)
    document["stats"]["tasks"] = []  # the forger keeps no task of its own
    paths[1].write_text(json.dumps(document))
    refused = cli(origin, "merge", *map(str, paths), env=env, check=3)
    assert str(paths[1]) in refused.stderr and words in refused.stderr
    if "differs" in refused.stderr:
        assert str(paths[0]) in refused.stderr  # both files named


def test_merge_of_a_fifo_or_a_huge_report_is_a_named_error_not_a_hang(tmp_path: Path) -> None:
    env = environ(tmp_path / "control.json")
    fifo = tmp_path / "unit-1.json"
    os.mkfifo(fifo)
    began = time.monotonic()
    refused = cli(tmp_path, "merge", str(fifo), env=env, check=3)
    assert str(fifo) in refused.stderr and "Traceback" not in refused.stderr
    huge = tmp_path / "unit-2.json"
    huge.write_text(
        '{"kind": "silo-regress-units", "version": 1, "unit": {"index": 1, '
        '"count": 1}, "plan": {"repeat": ' + "9" * 400 + "}}"
    )
    refused = cli(tmp_path, "merge", str(huge), env=env, check=3)
    assert f"{huge}: /plan/repeat must be a whole number" in refused.stderr
    assert time.monotonic() - began < 30
