"""Every baseline is named with the source its bytes came from, and the advice fits it.

``check --against REF`` reads REF's baselines, ``check --staged`` (the hook) the git
index, ``diff --from A --to B`` two commits: each report names those bytes the way
git does (``HEAD~1:baselines/X.json``, ``:baselines/X.json`` (the index)), and says what to
do in terms of where they came from.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support.gitrepo import commit_all, recorded, rerun
from support.silofixture import SiloProject, git

RESULT = "baselines/TASK-001.result.json"


def _history(tmp_path: Path) -> SiloProject:
    """HEAD~1 recorded TASK-001 passing; HEAD records it failing, and that run is newest."""
    project = recorded(tmp_path / "repo")
    rerun(project, passed=False, reward=0.5)
    assert project.cli("record", "TASK-001").exit_code == 0
    commit_all(project, "Accept the stricter check")
    return project


def test_check_against_a_commit_names_its_baselines_in_every_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _history(tmp_path)
    monkeypatch.chdir(project.root)  # advice names paths from here: no -C needed
    assert project.cli("check").exit_code == 0  # the working tree has the new behaviour
    text = project.cli("check", "--against", "HEAD~1")
    assert text.exit_code == 1
    assert f"  baseline: HEAD~1:{RESULT}\n" in text.stdout
    assert f"    --- HEAD~1:{RESULT}\n" in text.stdout  # the diff's header too
    assert f"  baseline: {RESULT}\n" not in text.stdout
    # Recorded already: no advice to record what HEAD already holds.
    assert "silo-regress record" not in text.stdout
    assert text.stdout.rstrip().splitlines()[-2:] == [
        "The baselines above are the ones recorded at HEAD~1, not the working tree's; "
        "to compare the run with the working tree's (and learn what to record): "
        "silo-regress check",
        "to see how the baselines changed since HEAD~1: silo-regress diff --from HEAD~1",
    ]

    document = json.loads(project.cli("check", "--against", "HEAD~1", "--format", "json").stdout)
    changed = [r for r in document["results"] if r["status"] == "changed"]
    assert [r["artifact"] for r in changed] == ["result.json"]
    assert changed[0]["baseline"] == RESULT  # the DESIGN.md contract: a project path
    assert changed[0]["baselineSource"] == {
        "kind": "commit",
        "ref": "HEAD~1",
        "commit": git(project.root, "rev-parse", "HEAD~1").stdout.strip(),  # what it meant
        "label": f"HEAD~1:{RESULT}",
    }
    assert {r["baselineSource"]["kind"] for r in document["results"]} == {"commit"}

    markdown = project.cli("check", "--against", "HEAD~1", "--format", "markdown").stdout
    assert f"- baseline: `HEAD~1:{RESULT}`" in markdown
    assert "silo-regress record" not in markdown
    assert "```sh\nsilo-regress diff --from HEAD~1\n```" in markdown

    junit = project.cli("check", "--against", "HEAD~1", "--format", "junit").stdout
    failure = ET.fromstring(junit).find(".//failure")
    assert failure is not None and failure.text is not None
    assert f"baseline: HEAD~1:{RESULT}" in failure.text

    github = project.cli("check", "--against", "HEAD~1", "--format", "github").stdout
    annotation = next(line for line in github.splitlines() if line.startswith("::error "))
    # The annotation sits on the checkout's file; its message says whose bytes were judged.
    assert annotation.startswith(f"::error file={RESULT},")
    assert f"%0Abaseline: HEAD~1:{RESULT}%0A" in annotation

    html = project.cli("check", "--against", "HEAD~1", "--format", "html").stdout
    assert f"baseline <code>HEAD~1:{RESULT}</code>" in html


def test_a_working_tree_check_keeps_plain_paths_and_record_advice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = recorded(tmp_path / "repo")
    monkeypatch.chdir(project.root)  # advice names paths from here: no -C needed
    rerun(project, passed=False, reward=0.5)
    result = project.cli("check")
    assert result.exit_code == 1
    assert f"  baseline: {RESULT}\n" in result.stdout
    assert ":baselines/" not in result.stdout
    assert result.stdout.rstrip().splitlines()[-2:] == [
        "If the new behaviour is intended, accept it with: silo-regress record TASK-001",
        "or one result at a time, on a terminal: silo-regress review",
    ]
    document = json.loads(project.cli("check", "--format", "json").stdout)
    first = document["results"][0]
    assert first["baselineSource"] == {
        "kind": "working-tree",
        "ref": None,
        "commit": None,
        "label": first["baseline"],
    }


def test_the_hook_names_staged_baselines_and_says_to_stage_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = recorded(tmp_path / "repo")
    monkeypatch.chdir(project.root)  # advice names paths from here: no -C needed
    rerun(project, passed=False, reward=0.5)
    assert project.cli("record", "TASK-001").exit_code == 0  # recorded, not staged
    blocked = project.cli("check", "--staged")
    assert blocked.exit_code == 1
    assert f"  baseline: :{RESULT}\n" in blocked.stdout
    assert "git add baselines" in blocked.stdout
    document = json.loads(project.cli("check", "--staged", "--format", "json").stdout)
    changed = next(r for r in document["results"] if r["status"] == "changed")
    assert changed["baselineSource"] == {
        "kind": "index",
        "ref": None,
        "commit": None,
        "label": f":{RESULT}",
    }
    git(project.root, "add", "baselines")
    assert project.cli("check", "--staged").exit_code == 0


def test_diff_between_two_commits_names_both_sides_and_gives_no_advice(tmp_path: Path) -> None:
    project = _history(tmp_path)
    text = project.cli("diff", "--from", "HEAD~1", "--to", "HEAD")
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    at = lines.index("TASK-001  result.json  changed")
    assert lines[at + 1 : at + 3] == [
        f"  from: HEAD~1:{RESULT}",
        f"  to:   HEAD:{RESULT}",
    ]
    assert "record" not in text.stdout and "review" not in text.stdout
    document = json.loads(
        project.cli("diff", "--from", "HEAD~1", "--to", "HEAD", "--format", "json").stdout
    )
    artifact = document["tasks"][0]["artifacts"][0]
    assert (artifact["from"], artifact["to"]) == (f"HEAD~1:{RESULT}", f"HEAD:{RESULT}")
    markdown = project.cli("diff", "--from", "HEAD~1", "--to", "HEAD", "--format", "markdown")
    assert f"from: `HEAD~1:{RESULT}`<br>to: `HEAD:{RESULT}`" in markdown.stdout
    assert "record" not in markdown.stdout


def test_merged_shards_keep_the_source_of_their_baselines(tmp_path: Path) -> None:
    project = _history(tmp_path)
    reports = []
    for shard in ("1/2", "2/2"):
        path = tmp_path / f"shard-{shard[0]}.json"
        done = project.cli(
            "check",
            "--against",
            "HEAD~1",
            "--shard",
            shard,
            "--format",
            "json",
            "--output",
            str(path),
        )
        assert done.exit_code in (0, 1), done.output
        reports.append(str(path))
    merged = project.cli("merge", *reports)
    assert merged.exit_code == 1
    assert f"  baseline: HEAD~1:{RESULT}\n" in merged.stdout
    assert "(baselines from HEAD~1)" in merged.stdout
    assert "silo-regress record" not in merged.stdout
    whole = project.cli("check", "--against", "HEAD~1", "--format", "json").stdout
    again = project.cli("merge", *reports, "--format", "json").stdout
    assert json.loads(again)["results"] == json.loads(whole)["results"]


def test_a_report_with_a_bad_baseline_source_is_refused(tmp_path: Path) -> None:
    project = _history(tmp_path)
    document = json.loads(project.cli("check", "--against", "HEAD~1", "--format", "json").stdout)
    document["results"][0]["baselineSource"] = {"kind": "commit", "ref": None}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    result = project.cli("merge", str(bad))
    assert result.exit_code == 3
    assert result.stderr == (
        f"silo-regress: error: {bad}: results[0].baselineSource must be null or an object "
        "with a kind (working-tree, index, commit); a commit's also has its ref and hash "
        "(or null)\n"
    )
