"""A project in a subdirectory of its repository labels baselines with git's path.

``git show REV:PATH`` reads PATH from the top of the repository wherever it runs, so
for a project in ``agents/crm`` the label ``HEAD~1:baselines/X.json`` names nothing.
Reports say ``HEAD~1:agents/crm/baselines/X.json`` (and ``:agents/crm/baselines/X.json``
for the index), which users copy into ``git show``; so every test here runs the label
through real git, from the project directory and from the top. JSON's ``baseline``
stays the project's path. The CLI runs as users run it: in the project directory,
with no ``--project``.
"""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from support.gitrepo import SILO, commit_all, rerun, run
from support.silofixture import SiloProject, git, git_init, make_project

PREFIX = "agents/crm/"
RESULT = "baselines/TASK-001.result.json"
HOOK_RESULT_LINE = f"  baseline: :{PREFIX}{RESULT}\n"


@dataclass(frozen=True)
class Nested:
    top: Path  # the top of the git repository
    project: SiloProject  # in agents/crm below it
    first: bytes  # TASK-001's baseline as HEAD~1 recorded it
    second: bytes  # and as HEAD did


def _nested(tmp_path: Path) -> Nested:
    """HEAD~1 recorded TASK-001 passing, HEAD failing; the newest run fails as HEAD says."""
    top = tmp_path / "repo"
    project = make_project(top / PREFIX)
    git_init(top)
    (top / ".gitignore").write_text(".silo/\n", encoding="utf-8")  # any level's runs
    for task in ("TASK-001", "TASK-002"):
        project.add_run(task)
    assert project.cli("record", "--all").exit_code == 0
    first = (project.root / RESULT).read_bytes()
    commit_all(top, "Record the tasks")
    rerun(project, passed=False, reward=0.5)
    assert project.cli("record", "TASK-001").exit_code == 0
    second = (project.root / RESULT).read_bytes()
    commit_all(top, "Accept the stricter check")
    assert first != second
    return Nested(top, project, first, second)


def _silo(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run(cwd, SILO, *args, check=False)


def _git_show(nested: Nested, label: str) -> bytes:
    """What ``git show LABEL`` prints, the same from the project directory and the top."""
    shown = []
    for cwd in (nested.project.root, nested.top):
        done = subprocess.run(["git", "show", label], cwd=cwd, capture_output=True, check=False)
        assert done.returncode == 0, f"git show {label} in {cwd}: {done.stderr.decode()}"
        shown.append(done.stdout)
    assert shown[0] == shown[1]
    return shown[0]


def test_check_against_a_commit_labels_git_paths_in_every_format(tmp_path: Path) -> None:
    nested = _nested(tmp_path)
    label = f"HEAD~1:{PREFIX}{RESULT}"
    cwd = nested.project.root
    text = _silo(cwd, "check", "--against", "HEAD~1")
    assert text.returncode == 1, text.stderr
    assert f"  baseline: {label}\n" in text.stdout
    assert f"    --- {label}\n" in text.stdout  # the diff's header too
    assert f"HEAD~1:{RESULT}" not in text.stdout  # which git show cannot read
    assert _git_show(nested, label) == nested.first
    assert text.stdout.rstrip().splitlines()[-1] == (
        "to see how the baselines changed since HEAD~1: silo-regress diff --from HEAD~1"
    )

    document = json.loads(_silo(cwd, "check", "--against", "HEAD~1", "--format", "json").stdout)
    changed = next(r for r in document["results"] if r["status"] == "changed")
    assert changed["baseline"] == RESULT  # the DESIGN.md contract: a project path
    assert changed["baselineSource"] == {
        "kind": "commit",
        "ref": "HEAD~1",
        "commit": git(nested.top, "rev-parse", "HEAD~1").stdout.strip(),
        "label": label,
    }
    for result in document["results"]:
        assert result["baselineSource"]["label"] == f"HEAD~1:{PREFIX}{result['baseline']}"

    markdown = _silo(cwd, "check", "--against", "HEAD~1", "--format", "markdown").stdout
    assert f"- baseline: `{label}`" in markdown
    junit = _silo(cwd, "check", "--against", "HEAD~1", "--format", "junit").stdout
    failure = ET.fromstring(junit).find(".//failure")
    assert failure is not None and failure.text is not None
    assert f"baseline: {label}" in failure.text
    github = _silo(cwd, "check", "--against", "HEAD~1", "--format", "github").stdout
    annotation = next(line for line in github.splitlines() if line.startswith("::error "))
    assert annotation.startswith(f"::error file={RESULT},")  # the checkout's file, from here
    assert f"%0Abaseline: {label}%0A" in annotation
    html = _silo(cwd, "check", "--against", "HEAD~1", "--format", "html").stdout
    assert f"baseline <code>{label}</code>" in html


def test_the_hook_labels_the_index_path_and_its_git_add_stages_it(tmp_path: Path) -> None:
    nested = _nested(tmp_path)
    cwd = nested.project.root
    rerun(nested.project, passed=False, reward=0.25)
    assert nested.project.cli("record", "TASK-001").exit_code == 0  # recorded, not staged
    blocked = _silo(cwd, "check", "--staged")
    assert blocked.returncode == 1, blocked.stderr
    assert HOOK_RESULT_LINE in blocked.stdout
    assert _git_show(nested, f":{PREFIX}{RESULT}") == nested.second  # the staged bytes
    document = json.loads(_silo(cwd, "check", "--staged", "--format", "json").stdout)
    changed = next(r for r in document["results"] if r["status"] == "changed")
    assert (changed["baseline"], changed["baselineSource"]["label"]) == (
        RESULT,
        f":{PREFIX}{RESULT}",
    )
    # The advice's commands are run where check ran: they must stage these baselines.
    advice = blocked.stdout.splitlines()[-2]
    assert advice.endswith(": silo-regress record TASK-001 && git add baselines")
    run(cwd, "git", "add", "baselines")
    assert _silo(cwd, "check", "--staged").returncode == 0


def test_diff_between_commits_labels_both_sides_with_git_paths(tmp_path: Path) -> None:
    nested = _nested(tmp_path)
    cwd = nested.project.root
    text = _silo(cwd, "diff", "--from", "HEAD~1", "--to", "HEAD")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    at = lines.index("TASK-001  result.json  changed")
    before, after = f"HEAD~1:{PREFIX}{RESULT}", f"HEAD:{PREFIX}{RESULT}"
    assert lines[at + 1 : at + 3] == [f"  from: {before}", f"  to:   {after}"]
    assert (_git_show(nested, before), _git_show(nested, after)) == (nested.first, nested.second)
    document = json.loads(
        _silo(cwd, "diff", "--from", "HEAD~1", "--to", "HEAD", "--format", "json").stdout
    )
    artifact = document["tasks"][0]["artifacts"][0]
    assert (artifact["from"], artifact["to"]) == (before, after)


def test_merge_keeps_git_labels_and_rebuilds_diffs_from_the_commit(tmp_path: Path) -> None:
    nested = _nested(tmp_path)
    cwd = nested.project.root
    label = f"HEAD~1:{PREFIX}{RESULT}"
    reports = []
    for shard in ("1/2", "2/2"):
        path = tmp_path / f"shard-{shard[0]}.json"
        done = _silo(cwd, "check", "--against", "HEAD~1", "--shard", shard, "--format", "json")
        assert done.returncode in (0, 1), done.stderr
        path.write_text(done.stdout, encoding="utf-8")
        reports.append(str(path))
    merged = _silo(cwd, "merge", *reports)
    assert merged.returncode == 1, merged.stderr
    assert f"  baseline: {label}\n" in merged.stdout
    # The working tree holds HEAD's baseline: the diff is rebuilt from HEAD~1's bytes,
    # read by the commit's hash and the path from the top of the repository.
    assert f"    --- {label}\n" in merged.stdout
    assert "no line diff" not in merged.stdout
    whole = _silo(cwd, "check", "--against", "HEAD~1", "--format", "json").stdout
    again = _silo(cwd, "merge", *reports, "--format", "json").stdout
    assert json.loads(again)["results"] == json.loads(whole)["results"]


def test_merge_rebuilds_a_hook_report_from_the_index(tmp_path: Path) -> None:
    nested = _nested(tmp_path)
    cwd = nested.project.root
    rerun(nested.project, passed=False, reward=0.25)
    assert nested.project.cli("record", "TASK-001").exit_code == 0  # the index keeps HEAD's
    report = tmp_path / "hook.json"
    report.write_text(_silo(cwd, "check", "--staged", "--format", "json").stdout)
    merged = _silo(cwd, "merge", str(report))
    assert merged.returncode == 1, merged.stderr
    assert HOOK_RESULT_LINE in merged.stdout
    assert f"    --- :{PREFIX}{RESULT}\n" in merged.stdout
    assert "no line diff" not in merged.stdout


def test_a_report_with_the_older_index_label_merges_to_the_git_spelling(tmp_path: Path) -> None:
    nested = _nested(tmp_path)
    cwd = nested.project.root
    document = json.loads(_silo(cwd, "check", "--staged", "--format", "json").stdout)
    for result in document["results"]:  # as the hook wrote them while 0.2 was built
        result["baselineSource"]["label"] = f"index:{PREFIX}{result['baseline']}"
    report = tmp_path / "old.json"
    report.write_text(json.dumps(document), encoding="utf-8")
    merged = json.loads(_silo(cwd, "merge", str(report), "--format", "json").stdout)
    labels = {r["baselineSource"]["label"] for r in merged["results"]}
    assert labels == {f":{PREFIX}{r['baseline']}" for r in document["results"]}


def test_a_refused_name_in_a_commit_is_labelled_with_its_git_path(tmp_path: Path) -> None:
    nested = _nested(tmp_path)
    refused = "baselines/crm~west/TASK-001.result.json"
    (nested.project.root / refused).parent.mkdir()
    (nested.project.root / refused).write_bytes(nested.first)
    commit_all(nested.top, "A baseline under a name that maps to no task")
    text = _silo(nested.project.root, "check", "--against", "HEAD")
    assert text.returncode == 1, text.stderr
    assert f"  HEAD:{PREFIX}{refused}: named like a baseline" in text.stdout
    assert _git_show(nested, f"HEAD:{PREFIX}{refused}") == nested.first


def test_a_project_at_the_top_keeps_its_labels(tmp_path: Path) -> None:
    top = tmp_path / "repo"
    project = make_project(top)
    git_init(top)
    (top / ".gitignore").write_text(".silo/\n", encoding="utf-8")
    project.add_run("TASK-001")
    assert project.cli("record", "--all").exit_code == 0
    commit_all(top, "Record")
    rerun(project, passed=False, reward=0.5)
    text = _silo(top, "check", "--against", "HEAD")
    assert f"  baseline: HEAD:{RESULT}\n" in text.stdout
    staged = _silo(top, "check", "--staged")
    assert f"  baseline: :{RESULT}\n" in staged.stdout
    assert _git_show(Nested(top, project, b"", b""), f":{RESULT}") == (top / RESULT).read_bytes()
