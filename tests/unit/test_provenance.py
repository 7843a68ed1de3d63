"""Provenance records and the inputs' fingerprint, on real files and real git indexes."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from support.silofixture import git, git_init

from silo_regress.project import fingerprint
from silo_regress.project.config import load_config
from silo_regress.project.fingerprint import (
    ProvenanceError,
    fingerprint_of,
    index_snapshot,
    working_tree_snapshot,
)
from silo_regress.runs import provenance
from silo_regress.runs.freshness import AgentFile, agent_file, judge_freshness
from silo_regress.runs.provenance import (
    PROVENANCE_FILE,
    inputs_for_agent,
    inspect_provenance,
    read_provenance,
    start_batch,
    write_provenance,
)


def _project(root: Path, config: str = 'agent = "./silo.agent.ts"\n') -> Path:
    root.mkdir(parents=True)
    git_init(root)
    (root / "silo-regress.toml").write_text(config)
    (root / "silo.agent.ts").write_text("export default 1;\n")
    envs = root / "environments" / "crm" / "data"
    envs.mkdir(parents=True)
    (envs / "leads.json").write_text("[]\n")
    (root / "environments" / "crm" / "world.ts").write_text("world\n")
    return root


def test_fingerprint_is_of_sorted_pairs() -> None:
    a = fingerprint_of([("b.ts", "1" * 64), ("a.ts", "2" * 64)])
    assert a == fingerprint_of([("a.ts", "2" * 64), ("b.ts", "1" * 64)])
    assert a != fingerprint_of([("a.ts", "1" * 64), ("b.ts", "2" * 64)])
    assert len(a) == 64


def test_globs_match_like_the_docs_say(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    (root / "src").mkdir()
    (root / "src" / "x.agent.ts").write_text("x")
    snap = working_tree_snapshot(root, ["*.ts", "environments/**"])
    assert [f.path for f in snap.files] == [
        "environments/crm/data/leads.json",
        "environments/crm/world.ts",
        "silo.agent.ts",
    ]
    literal_dir = working_tree_snapshot(root, ["environments/crm/data"])
    assert [f.path for f in literal_dir.files] == ["environments/crm/data/leads.json"]
    deep = working_tree_snapshot(root, ["**/*.agent.ts"])
    assert [f.path for f in deep.files] == ["silo.agent.ts", "src/x.agent.ts"]
    none = working_tree_snapshot(root, ["missing/*.ts"])
    assert none.files == () and none.warnings == (
        "inputs: 'missing/*.ts' matches no file in the working tree",
    )


def test_content_changes_change_the_fingerprint(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    before = working_tree_snapshot(root, ["silo.agent.ts"]).fingerprint
    os.utime(root / "silo.agent.ts", (0, 0))  # time alone changes nothing
    assert working_tree_snapshot(root, ["silo.agent.ts"]).fingerprint == before
    (root / "silo.agent.ts").write_text("export default 2;\n")
    assert working_tree_snapshot(root, ["silo.agent.ts"]).fingerprint != before


def test_index_snapshot_is_what_is_staged(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    git(root, "add", "-A")
    staged = index_snapshot(root, ["silo.agent.ts", "environments/**"])
    assert (
        staged.fingerprint
        == working_tree_snapshot(root, ["silo.agent.ts", "environments/**"]).fingerprint
    )
    (root / "silo.agent.ts").write_text("changed, not staged\n")
    assert (
        index_snapshot(root, ["silo.agent.ts"]).digests()["silo.agent.ts"]
        == staged.digests()["silo.agent.ts"]
    )
    assert (
        working_tree_snapshot(root, ["silo.agent.ts"]).digests()["silo.agent.ts"]
        != staged.digests()["silo.agent.ts"]
    )


def test_index_snapshot_of_a_project_in_a_subdirectory(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git_init(repo)
    root = repo / "agents" / "crm"
    root.parent.mkdir()
    root.mkdir()
    (root / "silo.agent.ts").write_text("a\n")
    (repo / "silo.agent.ts").write_text("not this one\n")
    git(repo, "add", "-A")
    snap = index_snapshot(root, ["silo.agent.ts"])
    assert [f.path for f in snap.files] == ["silo.agent.ts"]
    assert snap.fingerprint == working_tree_snapshot(root, ["silo.agent.ts"]).fingerprint


def test_a_symlink_out_of_the_project_is_hashed_as_git_stores_it(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    outside = tmp_path / "secret.txt"
    outside.write_text("never read\n")
    (root / "link.ts").symlink_to(outside)
    snap = working_tree_snapshot(root, ["*.ts"])
    assert "link.ts" in snap.digests()
    assert any("link.ts is a symlink out of the project" in w for w in snap.warnings)
    git(root, "add", "-A")
    assert index_snapshot(root, ["*.ts"]).digests() == snap.digests()
    outside.write_text("changed\n")  # content out of the project is not an input
    assert working_tree_snapshot(root, ["*.ts"]).fingerprint == snap.fingerprint


def test_a_fifo_input_is_skipped_with_a_warning_not_a_hang(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    os.mkfifo(root / "pipe.ts")
    snap = working_tree_snapshot(root, ["*.ts"])
    assert list(snap.digests()) == ["silo.agent.ts"]
    assert "inputs: pipe.ts is not a regular file (a FIFO or device?); skipped" in snap.warnings


def test_huge_and_changing_inputs_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path / "p")
    monkeypatch.setattr(fingerprint, "MAX_FILE_BYTES", 4)
    with pytest.raises(ProvenanceError, match=r"inputs: silo.agent.ts is 18 bytes; inputs over"):
        working_tree_snapshot(root, ["silo.agent.ts"])
    monkeypatch.setattr(fingerprint, "MAX_FILE_BYTES", 1 << 20)
    monkeypatch.setattr(fingerprint, "_hash_regular", lambda full, path: None)
    with pytest.raises(ProvenanceError, match="kept changing while it was fingerprinted"):
        working_tree_snapshot(root, ["silo.agent.ts"])


def test_too_many_matches_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path / "p")
    monkeypatch.setattr(fingerprint, "MAX_INPUT_FILES", 2)
    with pytest.raises(ProvenanceError, match="match more than 2 files"):
        working_tree_snapshot(root, ["**"])


def _record(root: Path, **changes: object) -> provenance.Provenance:
    config = load_config(root)
    batch = start_batch(config)
    record = batch.record_for(
        environment="crm-west",
        task_id="TASK-002",
        agent=config.agent,
        silo_command=("npx", "silo"),
    )
    return replace(record, **changes)  # type: ignore[arg-type]


def test_record_round_trip_and_what_it_holds(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    run_dir = root / ".silo" / "runs" / "run_1"
    run_dir.mkdir(parents=True)
    record = _record(root)
    write_provenance(run_dir, record)
    assert os.listdir(run_dir) == [PROVENANCE_FILE]  # no temp file left
    back = read_provenance(run_dir)
    assert back is not None
    assert back.agent == "silo.agent.ts"
    assert back.agent_sha256 == record.inputs[0].sha256
    assert back.fingerprint == working_tree_snapshot(root, ["silo.agent.ts"]).fingerprint
    assert back.commit == git(root, "rev-parse", "HEAD").stdout.strip()
    assert back.dirty is False
    assert back.silo_command == ("npx", "silo")
    assert (back.environment, back.task_id) == ("crm-west", "TASK-002")
    document = json.loads((run_dir / PROVENANCE_FILE).read_text())
    assert document["tool"].startswith("silo-regress ") and document["version"] == 1


@pytest.mark.parametrize(
    ("mangle", "problem"),
    [
        (lambda b: b[: len(b) // 2], "is not valid JSON (truncated?)"),
        (lambda b: b.replace(b'"version": 1', b'"version": 7'), "written by a newer silo-regress"),
        (lambda b: b.replace(b"TASK-002", b"TASK-009"), "names task crm-west/TASK-009, not this"),
        (lambda b: b.replace(b'"fingerprint": "', b'"fingerprint": "0'), "must be a SHA-256"),
        (lambda b: b"[]", "is not a JSON object"),
        (lambda b: b"\xff\xfe", "is not valid JSON"),
    ],
    ids=["truncated", "newer", "forged", "bad-digest", "array", "binary"],
)
def test_untrustworthy_records_are_named_problems(
    tmp_path: Path, mangle: object, problem: str
) -> None:
    root = _project(tmp_path / "p")
    run_dir = root / "run"
    run_dir.mkdir()
    write_provenance(run_dir, _record(root))
    path = run_dir / PROVENANCE_FILE
    path.write_bytes(mangle(path.read_bytes()))  # type: ignore[operator]
    reading = inspect_provenance(run_dir, environment="crm-west", task_id="TASK-002")
    assert reading.record is None
    assert reading.problem is not None and problem in reading.problem


def test_a_record_whose_fingerprint_disagrees_with_its_inputs(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    run_dir = root / "run"
    run_dir.mkdir()
    write_provenance(run_dir, _record(root, fingerprint="a" * 64))
    reading = inspect_provenance(run_dir)
    assert reading.problem == (
        f"{PROVENANCE_FILE}: its fingerprint does not match the inputs it lists"
    )
    assert inspect_provenance(root).record is None and inspect_provenance(root).problem is None


def test_a_record_that_is_a_fifo_does_not_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / PROVENANCE_FILE)
    reading = inspect_provenance(tmp_path)
    assert reading.problem is not None and "not a regular file" in reading.problem


def test_freshness_by_record(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    record = _record(root)
    started = datetime.now(UTC)
    current = working_tree_snapshot(root, ["silo.agent.ts"])
    config = load_config(root)

    def agent(snapshot: fingerprint.InputSnapshot) -> AgentFile | None:
        return agent_file(config, environment="crm-west", given=None, current=snapshot)

    fresh = judge_freshness(current, record=record, started=started, agent=agent(current))
    assert fresh is None
    (root / "silo.agent.ts").write_text("export default 3;\n")
    changed = working_tree_snapshot(root, ["silo.agent.ts"])
    stale = judge_freshness(changed, record=record, started=started, agent=agent(changed))
    assert stale is not None
    assert stale.reason == "silo.agent.ts changed since it was made, in the working tree"
    assert stale.changed == ("silo.agent.ts",)
    other = judge_freshness(
        current,
        record=replace(record, agent="flaky.agent.ts", agent_sha256="0" * 64),
        started=started,
        agent=agent(current),
    )
    assert other is not None
    assert other.reason == (
        "it was made by agent flaky.agent.ts, not the configured silo.agent.ts "
        "(their contents differ)"
    )


def test_freshness_by_time_without_a_record(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    now = datetime.now(UTC)
    os.utime(root / "silo.agent.ts", ((now - timedelta(hours=1)).timestamp(),) * 2)
    current = working_tree_snapshot(root, ["silo.agent.ts"])
    assert judge_freshness(current, record=None, started=now, agent=None) is None
    older = judge_freshness(current, record=None, started=now - timedelta(hours=2), agent=None)
    assert older is not None and older.reason.startswith("silo.agent.ts was modified at ")
    assert "after the run started" in older.reason
    future = (now + timedelta(days=2)).timestamp()
    os.utime(root / "silo.agent.ts", (future, future))
    skewed = judge_freshness(
        working_tree_snapshot(root, ["silo.agent.ts"]),
        record=None,
        started=now,
        agent=None,
    )
    assert skewed is not None and "modification time in the future (clock skew?)" in skewed.reason


def test_an_experimental_agent_is_what_the_record_names(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    (root / "flaky.agent.ts").write_text("flaky\n")
    config = load_config(root)
    assert inputs_for_agent(config, environment="crm-west", agent=None) == ("silo.agent.ts",)
    assert inputs_for_agent(config, environment="crm-west", agent="./flaky.agent.ts") == (
        "flaky.agent.ts",
    )
    record = start_batch(config).record_for(
        environment="crm-west", task_id="T", agent="./flaky.agent.ts", silo_command=("silo",)
    )
    assert record.agent == "flaky.agent.ts"
    assert [f.path for f in record.inputs] == ["flaky.agent.ts"]
    current = working_tree_snapshot(root, config.input_globs)
    stale = judge_freshness(
        current,
        record=record,
        started=datetime.now(UTC),
        agent=agent_file(config, environment="crm-west", given=None, current=current),
    )
    assert stale is not None and "made by agent flaky.agent.ts" in stale.reason


def test_outside_git_the_commit_is_unknown(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "silo-regress.toml").write_text('inputs = ["a.ts"]\n')
    (root / "a.ts").write_text("a")
    (root / ".git").mkdir()  # not a repository git accepts
    batch = start_batch(load_config(root))
    assert (batch.commit, batch.dirty) == (None, None)


def test_a_record_names_its_rollout_and_resource_class_and_old_records_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path / "p")
    run_dir = root / "run"
    run_dir.mkdir()
    monkeypatch.setenv(provenance.RESOURCE_CLASS_VARIABLE, "c6i.2xlarge")
    config = load_config(root)
    record = start_batch(config).record_for(
        environment="crm-west",
        task_id="TASK-002",
        agent=config.agent,
        silo_command=("npx", "silo"),
        rollout="crm-west/TASK-002#3",
    )
    write_provenance(run_dir, record)
    back = read_provenance(run_dir)
    assert back is not None and back.rollout == "crm-west/TASK-002#3"
    assert back.resource is not None and back.resource.name == "c6i.2xlarge"
    assert back.resource.cpus >= 1
    # A record of 0.3 has neither key: read as before, with neither known.
    document = json.loads((run_dir / PROVENANCE_FILE).read_text())
    del document["rollout"], document["resourceClass"]
    (run_dir / PROVENANCE_FILE).write_text(json.dumps(document))
    old = read_provenance(run_dir)
    assert old is not None and old.rollout is None and old.resource is None
    assert old.fingerprint == record.fingerprint
    # A forged class is a malformed record, not a trusted one.
    document["resourceClass"] = {"name": "x", "cpus": 0}
    (run_dir / PROVENANCE_FILE).write_text(json.dumps(document))
    reading = inspect_provenance(run_dir)
    assert reading.record is None and reading.problem is not None
    assert "resourceClass.cpus" in reading.problem


def test_a_bad_resource_class_name_is_a_config_error() -> None:
    from silo_regress.errors import ConfigError

    with pytest.raises(ConfigError, match="SILO_REGRESS_RESOURCE_CLASS='a b'"):
        provenance.current_resource_class({provenance.RESOURCE_CLASS_VARIABLE: "a b"})
    assert provenance.current_resource_class({}).name is None
