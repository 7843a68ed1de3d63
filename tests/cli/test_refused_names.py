"""Files named like a baseline whose name maps to no task are named, never skipped.

``baselines/crm~west/TASK-002.result.json``, a task id with ``..``, a name with an
escape character or one two directories down ends in an artifact's name, yet no
task is compared with it. check (working tree, the hook's index, ``--against``) fails
on each with ``not-canonical`` and the reason, in every format; status lists it;
fmt names it and renames nothing. Other files (a README, ``.gitattributes``, dotted
directories) are not silo-regress's and stay out of every report.
"""

from __future__ import annotations

import html
import json
import os
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from support.gitrepo import commit_all, recorded
from support.silofixture import SiloProject, git

from silo_regress.project.config import load_config
from silo_regress.runner.plan import plan_tasks
from silo_regress.runs.cache import index_runs
from silo_regress.store.baselines import BaselineStore, Refused, parse_relpath, refusal
from silo_regress.store.gitsource import MappingSource

ARTIFACTS = ("result.json", "state-diff.json")
TILDE = "crm~west/TASK-002.result.json"
REFUSED = {  # name under baselines/ -> the reason check gives
    TILDE: "its environment name 'crm~west' is refused: it contains '~', which names "
    "accepted variants (TASK~2)",
    "TA..SK.state-diff.json": "its task id 'TA..SK' is refused: it contains '..'",
    "a/b/TASK-009.result.json": "it lies 2 directories down (a baseline is TASK.ARTIFACT "
    "or ENV/TASK.ARTIFACT)",
    "esc\x1b[31m.result.json": "its task id 'esc\\x1b[31m' is refused: it contains a path "
    "separator or a control character",
}
SHOWN = {name: name.replace("\x1b", "\\x1b") for name in REFUSED}
# Under baselines/ and not silo-regress's: no report names them, none fails for them.
FOREIGN = (
    "README.md",
    ".gitattributes",
    "notes/guide.md",
    "crm~west/README.md",
    ".cache/TASK-001.result.json",  # dotted: the writers' .silo-regress-tmp/ is one
    "crm-west/.old/TASK-001.result.json",
    "result.json",  # the artifact's name alone names no task
)


def detail(name: str, prefix: str = "") -> str:
    return (
        f"{prefix}baselines/{SHOWN[name]}: named like a baseline, but {REFUSED[name]}; no task "
        "is compared with it: rename or remove it (fmt cannot tell which task was meant)"
    )


def place(project: SiloProject, names: Iterable[str]) -> None:
    """A copy of TASK-001's result.json baseline at each of ``names``."""
    data = (project.baselines / "TASK-001.result.json").read_bytes()
    for name in names:
        path = project.baselines / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def report(project: SiloProject, *args: str) -> tuple[int, dict[str, Any]]:
    done = project.cli("check", "--format", "json", *args)
    return done.exit_code, json.loads(done.stdout)


def not_canonical(document: dict[str, Any]) -> dict[str, str]:
    return {
        r["baseline"]: r["detail"] for r in document["results"] if r["status"] == "not-canonical"
    }


@pytest.fixture
def repo(tmp_path: Path) -> SiloProject:
    """TASK-001 and TASK-002 recorded, committed and matching their runs."""
    return recorded(tmp_path / "repo")


# --- which names ----------------------------------------------------------------------


def test_the_rule_refuses_only_names_that_look_like_a_baseline() -> None:
    for name, reason in REFUSED.items():
        assert parse_relpath(name, ARTIFACTS) is None
        found = refusal(name, ARTIFACTS)
        assert found is not None and (found.reason, found.shown) == (reason, SHOWN[name])
    for name in (*FOREIGN, "TASK-001.result.json", "crm-west/TASK-001~2.result.json"):
        assert refusal(name, ARTIFACTS) is None, name
    undecodable = refusal("caf\udce9.result.json", ARTIFACTS)  # b"caf\xe9": not UTF-8
    assert undecodable is not None
    assert (undecodable.shown, str(undecodable.ref)) == ("caf\\xe9.result.json", "caf\\xe9")
    assert undecodable.reason == "its task id 'caf\\xe9' is refused: it is not valid UTF-8"
    # A configured artifact is a baseline's name too.
    assert refusal("TA..SK.tool-events.json", ("tool-events.json",)) is not None


def test_a_mapping_source_lists_refused_names_apart_from_its_baselines() -> None:
    files = {name: b"{}\n" for name in (*REFUSED, *FOREIGN, "TASK-001.result.json")}
    listing = MappingSource(files, ARTIFACTS, "HEAD").listing()
    assert [b.relpath for b in listing.baselines] == ["TASK-001.result.json"]
    assert [r.relpath for r in listing.refused] == sorted(REFUSED)
    assert all(isinstance(r, Refused) for r in listing.refused)


def test_the_working_tree_lists_refused_names_at_any_depth(tmp_path: Path) -> None:
    root = tmp_path / "baselines"
    names = (
        *REFUSED,
        *FOREIGN,
        "TASK-001.result.json",
        "crm-west/TASK-001.state-diff.json",
        "crm-west/deep/er/TASK-003.result.json",
        "crm-west/.hidden/deep/TASK-004.result.json",
    )
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(b"{}\n")
    (root / "crm-west/x/TASK-005.result.json").mkdir(parents=True)  # a directory, refused too
    listing = BaselineStore(root, ARTIFACTS).listing()
    assert [b.relpath for b in listing.baselines] == [
        "TASK-001.result.json",
        "crm-west/TASK-001.state-diff.json",
    ]
    assert [r.relpath for r in listing.refused] == sorted(
        [*REFUSED, "crm-west/deep/er/TASK-003.result.json", "crm-west/x/TASK-005.result.json"]
    )
    assert listing.refused[2].reason == (
        "it lies 3 directories down (a baseline is TASK.ARTIFACT or ENV/TASK.ARTIFACT)"
    )


# --- check ----------------------------------------------------------------------------


def test_check_fails_naming_every_refused_file_and_judges_the_rest(repo: SiloProject) -> None:
    assert repo.cli("check").exit_code == 0
    place(repo, (*REFUSED, *FOREIGN))
    code, document = report(repo)
    assert code == 1
    assert not_canonical(document) == {f"baselines/{SHOWN[n]}": detail(n) for n in REFUSED}
    assert document["summary"] == {"match": 4, "not-canonical": 4}
    rows = {r["baseline"]: r for r in document["results"]}
    row = rows[f"baselines/{TILDE}"]
    assert (row["task"], row["environment"], row["artifact"], row["run"]) == (
        "crm~west/TASK-002",
        "crm~west",
        "result.json",
        None,
    )
    assert rows["baselines/a/b/TASK-009.result.json"]["task"] == "a/b/TASK-009"

    text = repo.cli("check")
    assert text.exit_code == 1
    assert "\x1b" not in text.output  # the name's escape is printed, never obeyed
    for name in REFUSED:
        assert f"  {detail(name)}\n" in text.stdout
    assert "README" not in text.output and ".cache" not in text.output


def test_foreign_files_alone_change_nothing(repo: SiloProject) -> None:
    place(repo, FOREIGN)
    assert repo.cli("check").exit_code == 0
    assert repo.cli("fmt", "--check").exit_code == 0
    status = repo.cli("status")
    assert "refused" not in status.output


def test_only_refused_files_fail_with_a_report_not_no_baselines(repo: SiloProject) -> None:
    shutil.rmtree(repo.baselines)
    repo.baselines.mkdir()
    (repo.baselines / ".silo-regress-format").write_text("1\n")
    (repo.baselines / "crm~west").mkdir()
    (repo.baselines / TILDE).write_text("{}\n")
    code, document = report(repo)
    assert code == 1  # a verdict naming the file, not exit 3 "no baselines to check"
    assert not_canonical(document) == {f"baselines/{TILDE}": detail(TILDE)}


def test_every_format_names_the_refused_file(repo: SiloProject) -> None:
    place(repo, (TILDE,))
    path = f"baselines/{TILDE}"
    outputs = {}
    for fmt in ("text", "json", "markdown", "junit", "github", "html"):
        done = repo.cli("check", "--format", fmt)
        assert done.exit_code == 1, fmt
        said = html.escape(detail(TILDE)) if fmt == "html" else detail(TILDE)
        assert said in done.stdout, fmt
        outputs[fmt] = done.stdout
    failures = ET.fromstring(outputs["junit"]).findall(".//failure")
    assert [f.get("type") for f in failures] == ["not-canonical"]
    assert f"::error file={path}," in outputs["github"]
    assert "| `crm~west/TASK-002` |" in outputs["markdown"]


def test_a_ref_selects_the_refused_file_its_task_id_names(repo: SiloProject) -> None:
    place(repo, (TILDE,))
    code, document = report(repo, "TASK-002")
    assert code == 1
    assert {(r["task"], r["status"]) for r in document["results"]} == {
        ("TASK-002", "match"),
        ("crm~west/TASK-002", "not-canonical"),
    }
    assert report(repo, "TASK-001")[0] == 0
    _, document = report(repo, "crm-west/TASK-002")  # a qualified ref: that name only
    assert "crm~west/TASK-002" not in {r["task"] for r in document["results"]}
    shutil.rmtree(repo.runs_dir)
    for name in ("TASK-002.result.json", "TASK-002.state-diff.json"):
        (repo.baselines / name).unlink()
    code, document = report(repo, "TASK-002")  # no baseline, no run: its look-alike stands
    assert code == 1 and len(not_canonical(document)) == 1


def test_shards_check_each_refused_file_once_and_merge_keeps_it(
    repo: SiloProject, tmp_path: Path
) -> None:
    place(repo, tuple(REFUSED))
    reports = []
    for k in (1, 2, 3):
        out = tmp_path / f"shard-{k}.json"
        done = repo.cli("check", "--shard", f"{k}/3", "--format", "json", "--output", str(out))
        assert done.exit_code in (0, 1)
        reports.append(str(out))
    merged = repo.cli("merge", "--format", "json", *reports)
    assert merged.exit_code == 1, merged.output
    document = json.loads(merged.stdout)
    assert not_canonical(document) == {f"baselines/{SHOWN[n]}": detail(n) for n in REFUSED}
    assert document["summary"] == {"match": 4, "not-canonical": 4}


# --- the hook's index and a commit ----------------------------------------------------


def test_the_hook_fails_on_a_refused_name_staged_only(repo: SiloProject) -> None:
    place(repo, tuple(REFUSED))
    git(repo.root, "add", "baselines")
    for name in REFUSED:  # gone from the working tree: only the index has them
        (repo.baselines / name).unlink()
    assert repo.cli("check").exit_code == 0
    hook = repo.cli("check", "--staged", "--allow-no-runs")
    assert hook.exit_code == 1
    for name in REFUSED:
        assert f"  {detail(name, ':')}\n" in hook.stdout
    # A fresh clone has no runs, and the hook passes it; not with a refused name.
    shutil.rmtree(repo.root / ".silo")
    fresh = repo.cli("check", "--staged", "--allow-no-runs")
    assert fresh.exit_code == 1
    assert f"  {detail(TILDE, ':')}\n" in fresh.stdout
    git(repo.root, "rm", "-q", "--cached", "-r", "baselines/crm~west", "baselines/a")
    git(repo.root, "rm", "-q", "--cached", "baselines/TA..SK.state-diff.json")
    git(repo.root, "rm", "-q", "--cached", "baselines/esc\x1b[31m.result.json")
    clean = repo.cli("check", "--staged", "--allow-no-runs")
    assert clean.exit_code == 0, clean.output
    assert "nothing to compare" in clean.stdout


def test_check_against_a_commit_names_its_refused_files(repo: SiloProject) -> None:
    place(repo, (TILDE, "a/b/TASK-009.result.json"))
    commit_all(repo, "Hand-made baselines")
    shutil.rmtree(repo.baselines / "crm~west")
    shutil.rmtree(repo.baselines / "a")
    commit_all(repo, "Remove them")
    assert repo.cli("check", "--against", "HEAD").exit_code == 0
    code, document = report(repo, "--against", "HEAD~1")
    assert code == 1
    found = {r["baselineSource"]["label"]: r["detail"] for r in document["results"] if r["detail"]}
    assert found == {
        f"HEAD~1:baselines/{n}": detail(n, "HEAD~1:") for n in (TILDE, "a/b/TASK-009.result.json")
    }


# --- status and fmt -------------------------------------------------------------------


def test_status_lists_each_refused_name_and_says_why(repo: SiloProject) -> None:
    place(repo, (TILDE, "a/b/TASK-009.result.json"))
    done = repo.cli("status")
    assert done.exit_code == 0
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines() if line}
    for task, environment in (("crm~west/TASK-002", "crm~west"), ("a/b/TASK-009", "a/b")):
        # TASK, ENVIRONMENT, BASELINES, NEWEST RUN, AGE, VERDICT, GIT (untracked: not added)
        assert rows[task] == [
            task,
            environment,
            "result.json",
            "-",
            "-",
            "not-canonical",
            "(refused)",
            "untracked",
        ]
    # Every count in tasks: the refused names' rows count by their verdict.
    assert done.stdout.rstrip().endswith("4 tasks: 2 match, 2 not-canonical")
    assert f"silo-regress: warning: {detail(TILDE)}\n" in done.stderr


@pytest.mark.parametrize("check_only", [True, False])
def test_fmt_names_refused_files_and_renames_nothing(repo: SiloProject, check_only: bool) -> None:
    place(repo, (*REFUSED, *FOREIGN))
    before = repo.baseline_bytes()
    done = repo.cli("fmt", *(["--check"] if check_only else []))
    assert done.exit_code == 1
    assert done.stdout.splitlines() == [
        *(f"refused         {detail(name)}" for name in sorted(REFUSED)),
        "4 of 8 baseline files need attention",  # no "run fmt": it cannot fix them
    ]
    assert repo.baseline_bytes() == before


def test_the_fmt_hook_given_a_refused_file_names_it(
    repo: SiloProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pre-commit fmt hook passes the staged files by name."""
    place(repo, (TILDE,))
    monkeypatch.chdir(repo.root)
    done = repo.cli("fmt", "--check", f"baselines/{TILDE}", "baselines/TASK-001.result.json")
    assert done.exit_code == 1
    assert done.stdout.splitlines() == [
        f"refused         {detail(TILDE)}",
        "1 of 2 baseline files need attention",
    ]


# --- what was handled already stays handled ------------------------------------------


def test_a_fifo_or_link_with_a_refused_name_is_named_never_read(repo: SiloProject) -> None:
    (repo.baselines / "crm~west").mkdir()
    os.mkfifo(repo.baselines / TILDE)  # read, it would block check forever
    (repo.baselines / "TA..SK.state-diff.json").symlink_to("/etc/hostname")
    code, document = report(repo)
    assert code == 1
    assert set(not_canonical(document)) == {
        f"baselines/{TILDE}",
        "baselines/TA..SK.state-diff.json",
    }


def test_a_directory_named_like_a_baseline_one_level_down_gets_a_verdict(
    repo: SiloProject,
) -> None:
    (repo.baselines / "crm-west" / "TASK-001.result.json").mkdir(parents=True)
    code, document = report(repo)
    assert code == 1
    (row,) = [r for r in document["results"] if r["task"] == "crm-west/TASK-001"]
    assert row["status"] == "not-canonical"
    assert "baselines/crm-west/TASK-001.result.json" in row["detail"]


def test_a_symlinked_environment_directory_is_still_an_error(
    repo: SiloProject, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo.baselines / "crm~west").symlink_to(outside)
    done = repo.cli("check")
    assert done.exit_code == 3
    assert "baselines/crm~west: is a symbolic link to a directory" in done.stderr


def test_run_plans_no_task_for_a_refused_name(repo: SiloProject) -> None:
    place(repo, tuple(REFUSED))
    config = load_config(repo.root)
    index = index_runs(config.runs_dir)
    planned = plan_tasks(config, index, BaselineStore.of(config))
    assert sorted(str(t.ref) for t in planned) == ["TASK-001", "TASK-002"]
