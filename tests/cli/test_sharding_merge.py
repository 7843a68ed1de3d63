"""check --shard K/N and merge: every task in exactly one shard, merged reports exact."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.reportfixture import failing_project
from support.silofixture import SiloProject, make_project

from silo_regress.judging.sharding import Shard, parse_shard, select_shard, shard_of
from silo_regress.judging.targets import Target
from silo_regress.project.taskref import TaskRef


def _targets(count: int) -> list[Target]:
    refs = [TaskRef(f"TASK-{n:03d}", "crm-west" if n % 3 else None) for n in range(count)]
    return [Target(ref=ref, key=None, baselines=()) for ref in refs]


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_shards_partition_the_tasks(count: int) -> None:
    targets = _targets(200)
    shards = [select_shard(targets, Shard(k, count)) for k in range(1, count + 1)]
    seen = [t.ref for shard in shards for t in shard]
    assert sorted(seen) == sorted(t.ref for t in targets)  # union is all, no overlap
    assert len(seen) == len(set(seen))
    if count > 1:
        assert all(shard for shard in shards), "200 tasks leave no shard empty"
    for shard in shards:  # order kept
        assert shard == [t for t in targets if t in shard]


def test_shard_does_not_depend_on_which_tasks_exist() -> None:
    everything = _targets(100)
    some = everything[::3]
    for k in range(1, 5):
        picked = {t.ref for t in select_shard(everything, Shard(k, 4))}
        assert {t.ref for t in select_shard(some, Shard(k, 4))} == picked & {t.ref for t in some}


def test_shard_is_stable_across_processes_and_hash_seeds() -> None:
    code = (
        "from silo_regress.judging.sharding import shard_of\n"
        "from silo_regress.project.taskref import TaskRef\n"
        "print([shard_of(TaskRef(f'TASK-{n}', 'env'), 5) for n in range(50)])\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("0", "1", "12345")
    }
    assert len(outputs) == 1
    assert outputs.pop().strip() == str(
        [shard_of(TaskRef(f"TASK-{n}", "env"), 5) for n in range(50)]
    )


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "a/b", "3", "1/2/3", "-1/3", "1/1001"])
def test_bad_shards_are_usage_errors(project: SiloProject, text: str) -> None:
    with pytest.raises(Exception) as caught:
        parse_shard(text)
    assert "--shard" in str(caught.value)
    result = project.cli("check", "--shard", text)
    assert result.exit_code == 2
    assert "silo-regress: error: --shard" in result.stderr


def test_good_shard_forms() -> None:
    assert parse_shard("2/4") == Shard(2, 4)
    assert parse_shard(" 1 / 1 ") == Shard(1, 1)


def _many_tasks(root: Path, count: int) -> SiloProject:
    project = make_project(root)
    for n in range(count):
        project.add_run(f"TASK-{n:03d}", env="crm-west" if n % 2 else "crm-east")
    assert project.cli("record", "--all").exit_code == 0
    return project


def test_check_shards_check_both_artifacts_of_each_task_once(tmp_path: Path) -> None:
    project = _many_tasks(tmp_path / "p", 12)
    tasks: list[str] = []
    for k in (1, 2, 3):
        report = tmp_path / f"shard-{k}.json"
        result = project.cli("check", "--shard", f"{k}/3", "--format", "json", "-o", str(report))
        assert result.exit_code == 0, result.output
        document = json.loads(report.read_text(encoding="utf-8"))
        assert document["shard"] == {"index": k, "count": 3}
        names = [(r["task"], r["artifact"]) for r in document["results"]]
        shard_tasks = {task for task, _ in names}
        assert sorted(names) == sorted(
            (t, a) for t in shard_tasks for a in ("result.json", "state-diff.json")
        )
        tasks.extend(shard_tasks)
    assert sorted(tasks) == [f"TASK-{n:03d}" for n in range(12)]


def _shard_reports(project: SiloProject, out: Path, count: int) -> list[str]:
    paths = []
    for k in range(1, count + 1):
        path = out / f"report-{k}.json"
        result = project.cli(
            "check", "--shard", f"{k}/{count}", "--format", "json", "-o", str(path)
        )
        assert result.exit_code in (0, 1), result.output
        paths.append(str(path))
    return paths


def test_merge_gives_the_unsharded_report_in_every_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = failing_project(tmp_path / "project")
    monkeypatch.chdir(project.root)  # a merged report knows no -C DIR: neither needs one here
    reports = _shard_reports(project, tmp_path, 3)
    for fmt in ("json", "text", "markdown", "junit"):
        whole = project.cli("check", "--format", fmt)
        merged = project.cli("merge", *reports, "--format", fmt)
        assert merged.exit_code == whole.exit_code == 1
        assert merged.stdout == whole.stdout, fmt
        assert "line diff" not in merged.stderr  # the diffs were rebuilt: nothing left out
    html = project.cli("merge", *reports, "--format", "html")
    assert html.stdout == project.cli("check", "--format", "html").stdout


def test_merge_of_passing_shards_exits_zero(tmp_path: Path) -> None:
    project = _many_tasks(tmp_path / "p", 5)
    reports = _shard_reports(project, tmp_path, 2)
    result = project.cli("merge", *reports)
    assert result.exit_code == 0
    assert result.stdout == "10 match (10 artifacts of 5 tasks)\n"


def test_merge_without_the_baselines_shows_the_changes(tmp_path: Path) -> None:
    project = failing_project(tmp_path / "project")
    reports = _shard_reports(project, tmp_path, 2)
    elsewhere = make_project(tmp_path / "elsewhere")  # no baselines here
    result = elsewhere.cli("merge", *reports)
    assert result.exit_code == 1
    assert "now FAILS (passed: true -> false)" in result.stdout
    # what is left out is said once on stderr and beside each artifact in the report
    assert result.stderr.count("\n") == 1, result.stderr
    assert "2 changed artifacts without a line diff (TASK-001 result.json, " in result.stderr
    assert "TASK-002 state-diff.json)" in result.stderr
    assert "run merge in a checkout of the commit the shards checked" in result.stderr
    assert result.stdout.count("no line diff: baselines/") == 2
    html = elsewhere.cli("merge", *reports, "--format", "html").stdout
    assert "no line diff: baselines/TASK-001.result.json under " in html
    markdown = elsewhere.cli("merge", *reports, "--format", "markdown").stdout
    assert "@ /passed\n- true\n+ false" in markdown


def test_merge_refuses_a_missing_shard(tmp_path: Path) -> None:
    project = _many_tasks(tmp_path / "p", 6)
    reports = _shard_reports(project, tmp_path, 3)
    result = project.cli("merge", reports[0], reports[2])
    assert result.exit_code == 3
    assert "shard 2/3 missing" in result.stderr


def test_merge_refuses_a_task_checked_twice(tmp_path: Path) -> None:
    project = _many_tasks(tmp_path / "p", 4)
    whole = tmp_path / "whole.json"
    project.cli("check", "--format", "json", "-o", str(whole))
    copy = tmp_path / "copy.json"
    copy.write_bytes(whole.read_bytes())
    result = project.cli("merge", str(whole), str(copy))
    assert result.exit_code == 3
    assert f"{copy}: TASK-000 result.json is also in {whole}" in result.stderr
    reports = _shard_reports(project, tmp_path, 2)
    result = project.cli("merge", reports[0], reports[0], reports[1])
    assert result.exit_code == 3
    assert "shard 1/2 is also" in result.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{not json", "not a silo-regress JSON report (invalid JSON"),
        (b'{"version": 2, "summary": {}, "results": []}', "report version 2 is not 1"),
        (b'{"version": 1, "summary": {}}', "no 'results'"),
        (
            b'{"version": 1, "results": [{"task": "T", "artifact": "a", "status": "odd"}]}',
            "results[0].status 'odd' is not a verdict",
        ),
        (
            b'{"version": 1, "results": [{"task": "../x", "artifact": "a", "status": "match"}]}',
            "results[0].task",
        ),
        (b"\xff\xfe", "not valid UTF-8"),
    ],
)
def test_merge_names_the_bad_report(
    project: SiloProject, tmp_path: Path, content: bytes, message: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    result = project.cli("merge", str(bad))
    assert result.exit_code == 3
    assert result.stderr.startswith(f"silo-regress: error: {bad}")
    assert message in result.stderr


def test_merge_of_a_missing_file_is_bad_input(project: SiloProject, tmp_path: Path) -> None:
    result = project.cli("merge", str(tmp_path / "nope.json"))
    assert result.exit_code == 3
    assert "nope.json: no such report file" in result.stderr
