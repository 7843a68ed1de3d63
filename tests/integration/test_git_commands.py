"""The git-aware commands through the real CLI, in real repositories, with bad input."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from support.gitrepo import commit_all, head, readme_snippet, recorded, repo_project, rerun, run
from support.silofixture import SiloProject, git, make_project

# --- without git, and with the wrong kind of repository ---------------------------


def test_git_only_commands_need_a_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    project = make_project(tmp_path / "no git")
    project.add_run("TASK-001")
    for args in (
        ("check", "--staged"),
        ("check", "--against", "HEAD"),
        ("diff", "--from", "HEAD"),
        ("log", "TASK-001"),
        ("install-hook",),
    ):
        result = project.cli(*args)
        assert result.exit_code == 3, (args, result.output)
        assert result.stderr == (
            f"silo-regress: error: {project.root}: not a git repository (nor any of its "
            "parents); run `git init` there, or run this command inside a clone\n"
        ), args
    for args in (("record", "--all"), ("check",), ("fmt", "--check"), ("status",)):
        result = project.cli(*args)
        assert result.exit_code == 0, (args, result.output)
    assert "GIT" not in project.cli("status").stdout.splitlines()[0]


def test_bare_repository_exits_3(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "--bare", "origin.git")
    project = SiloProject(root=tmp_path / "origin.git", runs_dir=tmp_path / "origin.git" / "r")
    for args in (("check", "--staged"), ("log", "TASK-001"), ("diff", "--from", "HEAD")):
        result = project.cli(*args)
        assert result.exit_code == 3, args
        assert "is a bare git repository, which has no working tree" in result.stderr


def test_unknown_ref_and_a_repository_without_commits(tmp_path: Path) -> None:
    project = repo_project(tmp_path / "repo")
    project.add_run("TASK-001")
    assert project.cli("record", "TASK-001").exit_code == 0
    empty = project.cli("check", "--against", "HEAD")
    assert empty.exit_code == 3
    assert "the repository has no commits yet, so git ref 'HEAD' names nothing" in empty.stderr
    commit_all(project, "record")
    for args in (("check", "--against", "origin/main"), ("diff", "--from", "v9")):
        result = project.cli(*args)
        assert result.exit_code == 3, args
        assert re.search(r"unknown git ref '(origin/main|v9)'; is it a branch", result.stderr)


# --- check --staged and --against ---------------------------------------------------


def test_check_staged_reads_the_index_not_the_working_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PRE_COMMIT", raising=False)  # run by hand: either hook's advice
    project = recorded(tmp_path / "repo")
    monkeypatch.chdir(project.root)  # advice names paths from here: no -C needed
    rerun(project, reward=0.5, passed=False)
    blocked = project.cli("check", "--staged")
    assert blocked.exit_code == 1
    assert "now FAILS (passed: true -> false)" in blocked.stdout
    assert "(baselines from git index)" in blocked.stdout
    assert "  baseline: :baselines/TASK-001.result.json" in blocked.stdout
    assert blocked.stdout.rstrip().splitlines()[-2:] == [
        "If the new behaviour is intended, record it and stage the baselines: "
        "silo-regress record TASK-001 && git add baselines",
        "or skip this hook once (a hook from install-hook: git commit --no-verify): "
        "SKIP=silo-regress-check git commit",
    ]
    assert project.cli("record", "TASK-001").exit_code == 0
    assert project.cli("check").exit_code == 0  # the working tree has the new baseline
    assert project.cli("check", "--staged").exit_code == 1  # the index does not yet
    git(project.root, "add", "baselines")
    assert project.cli("check", "--staged").exit_code == 0


def test_hook_mode_without_runs_passes_with_one_line(tmp_path: Path) -> None:
    project = recorded(tmp_path / "repo")
    shutil.rmtree(project.root / ".silo")
    hook = project.cli("check", "--staged", "--allow-no-runs")
    assert hook.exit_code == 0
    assert hook.stdout == (
        "silo-regress: no runs under .silo/runs/, nothing to compare "
        "(run Silo, or use `silo-regress check` in CI)\n"
    )
    strict = project.cli("check", "--staged")
    assert strict.exit_code == 1
    assert "MISSING RUN" in strict.stdout


def test_hook_mode_skips_tasks_without_a_local_run(tmp_path: Path) -> None:
    project = recorded(tmp_path / "repo", tasks=("TASK-001", "TASK-002", "TASK-003"))
    for run_dir in project.runs_dir.iterdir():
        if '"TASK-001"' not in (run_dir / "run.json").read_text():
            shutil.rmtree(run_dir)
    hook = project.cli("check", "--staged", "--allow-no-runs")
    assert hook.exit_code == 0, hook.output
    assert hook.stdout.splitlines()[0] == (
        "silo-regress: 2 baselined tasks have no run under .silo/runs/ and were not compared "
        "(--allow-no-runs)"
    )
    assert "2 match (2 artifacts of 1 task)" in hook.stdout
    rerun(project, reward=0.5)
    assert project.cli("check", "--staged", "--allow-no-runs").exit_code == 1


def test_check_against_a_commit_leaves_the_working_tree_alone(tmp_path: Path) -> None:
    project = recorded(tmp_path / "repo")
    first = head(project.root)
    rerun(project, reward=0.5)
    assert project.cli("record", "TASK-001").exit_code == 0
    commit_all(project, "Accept reward 0.5")
    before = project.baseline_bytes()
    old = project.cli("check", "--against", first[:10])
    assert old.exit_code == 1
    assert "reward 1 -> 0.5" in old.stdout
    assert f"(baselines from {first[:10]})" in old.stdout
    assert project.cli("check", "--against", "HEAD").exit_code == 0
    assert project.baseline_bytes() == before
    assert git(project.root, "status", "--porcelain").stdout == ""


def test_detached_head(tmp_path: Path) -> None:
    project = recorded(tmp_path / "repo")
    rerun(project, reward=0.5)
    assert project.cli("record", "TASK-001").exit_code == 0
    commit_all(project, "Lower reward")
    git(project.root, "checkout", "-q", "--detach", "HEAD~1")
    assert project.cli("check", "--staged").exit_code == 1  # index: the old baseline
    assert project.cli("check", "--against", "main").exit_code == 0
    diff = project.cli("diff", "--from", "HEAD", "--to", "main")
    assert diff.exit_code == 0 and "reward 1 -> 0.5" in diff.stdout
    log = project.cli("log", "TASK-001")
    assert log.exit_code == 0
    assert "Record the tasks" in log.stdout and "Lower reward" not in log.stdout


# --- diff --from ----------------------------------------------------------------------


def _pr(tmp_path: Path) -> SiloProject:
    """main has TASK-001..3; the working tree changes 001, removes 002, adds 004."""
    project = recorded(tmp_path / "repo", tasks=("TASK-001", "TASK-002", "TASK-003"))
    checks = [
        {"label": "Lead | qualified", "passed": False, "detail": "<b>no</b>", "required": True},
        {"label": "Note logged", "passed": True, "detail": "AUD-0001", "required": False},
    ]
    rerun(project, "TASK-001", passed=False, reward=0.5, checks=checks)
    project.add_run("TASK-004")
    assert project.cli("record", "TASK-001", "TASK-004").exit_code == 0
    for path in project.baselines.glob("TASK-002.*"):
        path.unlink()
    return project


def test_diff_from_a_commit_to_the_working_tree(tmp_path: Path) -> None:
    project = _pr(tmp_path)
    result = project.cli("diff", "--from", "main")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:6] == [
        "TASK-001  result.json  changed",
        "  from: main:baselines/TASK-001.result.json",
        "  to:   baselines/TASK-001.result.json",  # the working tree: a plain path
        "  - now FAILS (passed: true -> false)",
        "  - reward 1 -> 0.5",
        '  - check "Lead qualified" removed',
    ]
    assert "TASK-002  result.json  removed" in lines
    removed = lines.index("TASK-002  result.json  removed")
    assert lines[removed + 1 : removed + 3] == [
        "  from: main:baselines/TASK-002.result.json",  # no "to": it is gone
        "  - baseline removed",
    ]
    assert "TASK-004  result.json  added" in lines
    assert "  - recorded: passes, reward 1" in lines
    assert lines[-1] == "3 tasks changed from main to working tree; 1 unchanged"
    only = project.cli("diff", "TASK-004", "--from", "main")
    assert only.stdout.splitlines()[-1] == "1 task changed from main to working tree; 0 unchanged"


@pytest.mark.parametrize("fmt", ["junit", "github", "html"])
def test_diff_from_refuses_a_task_format_naming_it_and_the_mode(tmp_path: Path, fmt: str) -> None:
    project = _pr(tmp_path)
    result = project.cli("diff", "--from", "main", "--format", fmt)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"silo-regress: error: --format {fmt} is for a task's diff (diff TASK); "
        "diff --from prints text, markdown or json\n"
    )
    # the same format is fine for one task's diff against its newest run
    task = project.cli("diff", "TASK-003", "--format", fmt)
    assert task.exit_code == 0, task.output
    assert task.stdout.strip()
    helped = project.cli("diff", "-h").stdout
    assert "text, markdown or json with --from" in " ".join(helped.split())


def test_diff_from_as_markdown_and_json(tmp_path: Path) -> None:
    project = _pr(tmp_path)
    markdown = project.cli("diff", "--from", "main", "--format", "markdown").stdout
    assert markdown.startswith("### Behaviour changes: `main` → `working tree`\n\n")
    assert "| Task | Artifact | Change | Files | Behaviour |" in markdown
    assert (
        "| `TASK-001` | `result.json` | changed "
        "| from: `main:baselines/TASK-001.result.json`<br>to: `baselines/TASK-001.result.json` "
        "| now FAILS (passed: true -> false)<br>"
        'reward 1 -> 0.5<br>check "Lead qualified" removed<br>'
        'check "Lead \\| qualified" added (failed)'
    ) in markdown
    assert "<b>" not in markdown  # a check detail cannot inject HTML into a PR comment
    assert markdown.endswith("3 tasks changed from main to working tree; 1 unchanged.\n")
    document = json.loads(project.cli("diff", "--from", "main", "--format", "json").stdout)
    assert document["from"] == "main" and document["unchanged"] == 1
    first = document["tasks"][0]
    assert first["task"] == "TASK-001"
    assert first["artifacts"][0]["change"] == "changed"
    assert first["artifacts"][0]["from"] == "main:baselines/TASK-001.result.json"
    assert first["artifacts"][0]["to"] == "baselines/TASK-001.result.json"
    assert {"path": "/reward", "baseline": 1, "run": 0.5} in first["artifacts"][0]["changes"]


def test_diff_between_two_commits(tmp_path: Path) -> None:
    project = _pr(tmp_path)
    commit_all(project, "The pull request")
    git(project.root, "tag", "v2")
    (project.baselines / "TASK-003.result.json").write_bytes(b"{}\n")  # not in either commit
    result = project.cli("diff", "--from", "main~1", "--to", "v2")
    assert result.stdout.splitlines()[-1] == "3 tasks changed from main~1 to v2; 1 unchanged"
    assert project.cli("diff", "--from", "v2", "--to", "v2").stdout == (
        "no behaviour changes from v2 to v2; 3 unchanged\n"
    )


def test_diff_usage_errors(tmp_path: Path) -> None:
    project = recorded(tmp_path / "repo")
    assert project.cli("diff").exit_code == 2
    assert project.cli("diff", "TASK-001", "--to", "HEAD").exit_code == 2
    junit = project.cli("diff", "--from", "HEAD", "--format", "junit")
    assert junit.exit_code == 2
    assert "text, markdown or json" in junit.stderr
    missing = project.cli("diff", "TASK-404", "--from", "HEAD")
    assert missing.exit_code == 3
    assert "task TASK-404: no baseline under baselines/" in missing.stderr


# --- log -----------------------------------------------------------------------------


def test_log_summarises_each_commit_newest_first(tmp_path: Path) -> None:
    project = recorded(tmp_path / "repo")
    rerun(project, passed=False, reward=0.75)
    assert project.cli("record", "TASK-001").exit_code == 0
    commit_all(project, "Stricter check", date="2026-03-18T09:00:00Z")
    audit = {"added": ["AUD-0001", "AUD-0003"], "removed": [], "changed": []}
    project.add_run("TASK-001", state_diff={"scalars": [], "collections": {"auditLog": audit}})
    assert project.cli("record", "TASK-001").exit_code == 0
    (project.root / "notes.txt").write_text("unrelated\n")
    commit_all(project, "Log the call | twice", date="2026-03-19T09:00:00Z")
    result = project.cli("log", "TASK-001")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "TASK-001: baselines/TASK-001.result.json, baselines/TASK-001.state-diff.json"
    )
    assert len(lines) == 4
    assert re.fullmatch(
        r"[0-9a-f]{7,}  2026-03-19  Test Author  Log the call \| twice  "
        r"now passes \(passed: false -> true\); reward 0\.75 -> 1; .*",
        lines[1],
    )
    assert lines[1].endswith(
        'check "Lead qualified" failed -> passed; auditLog: now also adds AUD-0003; '
        "opportunities: no longer changes OPP-005; +4 more"
    )
    assert re.search(r"2026-03-18  Test Author  Stricter check *  now FAILS", lines[2])
    assert re.search(r"Record the tasks *  recorded: passes, reward 1; auditLog", lines[3])
    markdown = project.cli("log", "TASK-001", "--format", "markdown").stdout
    assert "| Commit | Date | Author | Subject | Behaviour |" in markdown
    assert "Log the call \\| twice" in markdown
    document = json.loads(project.cli("log", "TASK-001", "--format", "json").stdout)
    assert [c["subject"] for c in document["commits"]] == [
        "Log the call | twice",
        "Stricter check",
        "Record the tasks",
    ]
    state = document["commits"][0]["artifacts"][1]
    assert state["artifact"] == "state-diff.json"
    assert state["behaviour"][0].startswith("auditLog: now also adds AUD-0003")
    assert state["notes"][0]["kind"] == "ids-changed"  # the same behaviour, as data


def test_log_refs(tmp_path: Path) -> None:
    project = repo_project(tmp_path / "repo")
    for env in ("crm-west", "crm-east"):
        project.add_run("TASK-001", env=env)
    project.add_run("TASK-002", env="crm-east")
    assert project.cli("record", "--all").exit_code == 0
    commit_all(project, "Record")
    ambiguous = project.cli("log", "TASK-001")
    assert ambiguous.exit_code == 3
    assert "name one, e.g. silo-regress log crm-east/TASK-001" in ambiguous.stderr
    assert project.cli("log", "crm-east/TASK-001").stdout.startswith(
        "crm-east/TASK-001: baselines/crm-east/TASK-001.result.json"
    )
    assert "Record" in project.cli("log", "TASK-002").stdout
    unknown = project.cli("log", "TASK-404")
    assert unknown.exit_code == 0
    assert unknown.stdout.splitlines()[1] == "no commit has changed these baselines yet"
    assert project.cli("log", "../x").exit_code == 3


def test_log_in_a_shallow_clone_says_where_history_stops(tmp_path: Path) -> None:
    origin = recorded(tmp_path / "origin")
    for reward in (0.5, 0.75):
        rerun(origin, reward=reward)
        assert origin.cli("record", "TASK-001").exit_code == 0
        commit_all(origin, f"Reward {reward}")
    clone = tmp_path / "clone"
    run(tmp_path, "git", "clone", "-q", "--depth", "2", f"file://{origin.root}", clone)
    shallow = SiloProject(root=clone, runs_dir=clone / ".silo" / "runs")
    result = shallow.cli("log", "TASK-001")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 4
    assert "Reward 0.75" in lines[1] and "reward 0.5 -> 0.75" in lines[1]
    edge = git(clone, "rev-parse", "--short", "HEAD~1").stdout.strip()
    assert lines[2].startswith(edge)
    assert "history stops here (shallow clone); as of here: passes, reward 0.5" in lines[2]
    assert lines[3] == (
        f"shallow clone: history stops at {edge}; `git fetch --unshallow` fetches the rest"
    )
    too_old = shallow.cli("check", "--against", "HEAD~2")
    assert too_old.exit_code == 3
    assert "this is a shallow clone, so fetch more history" in too_old.stderr
    assert shallow.cli("diff", "--from", "HEAD~1").exit_code == 0


# --- merge conflicts ---------------------------------------------------------------


def test_conflict_markers_are_reported_as_such(tmp_path: Path) -> None:
    project = recorded(tmp_path / "repo")
    git(project.root, "checkout", "-q", "-b", "other")
    rerun(project, passed=False, reward=0.5)
    assert project.cli("record", "TASK-001").exit_code == 0
    commit_all(project, "Other side")
    git(project.root, "checkout", "-q", "main")
    rerun(project, reward=0.75)
    assert project.cli("record", "TASK-001").exit_code == 0
    commit_all(project, "Our side")
    assert git(project.root, "merge", "-q", "other", check=False).returncode == 1

    check = project.cli("check")
    assert check.exit_code == 1
    assert re.search(
        r"NOT CANONICAL  TASK-001 \(crm-west\)  result\.json.*\n.*\n.*\n"
        r"  baselines/TASK-001\.result\.json: has git merge-conflict markers \(line \d+\); "
        r"resolve the conflict, then re-record the task",
        check.stdout,
    ), check.stdout
    fmt = project.cli("fmt", "--check")
    assert fmt.exit_code == 1
    assert "invalid         baselines/TASK-001.result.json: has git merge-conflict markers" in (
        fmt.stdout
    )
    staged = project.cli("check", "--staged")
    assert staged.exit_code == 3
    assert staged.stderr == (
        "silo-regress: error: baselines/TASK-001.result.json: unmerged in the git index "
        "(a merge conflict); resolve it, re-record the task if needed, then `git add` it\n"
    )
    git(project.root, "add", "baselines")  # markers and all, as happens by mistake
    committed = project.cli("check", "--staged")
    assert committed.exit_code == 1
    assert ":baselines/TASK-001.result.json: has git merge-conflict markers" in committed.stdout
    run(project.root, "git", "commit", "-q", "--no-verify", "-m", "Merge with markers")
    log = project.cli("log", "TASK-001").stdout.splitlines()
    assert "Merge with markers" in log[1]
    assert "has git merge-conflict markers" in log[1]


# --- awkward paths, autocrlf, status ------------------------------------------------


def test_spaces_glob_characters_and_non_ascii_names(tmp_path: Path) -> None:
    root = tmp_path / "my projects" / "Ünïcode [agent]"
    project = make_project(root, config='baselines-dir = "base lines [v1]"\n')
    git(root.parent, "init", "-q", "-b", "main")  # the project is a subdirectory
    (root / ".gitignore").write_text(".silo/\n")
    project.add_run("TÄSK 1", env="crm-øst")
    assert project.cli("record", "--all").exit_code == 0
    assert (root / "base lines [v1]" / "TÄSK 1.result.json").is_file()
    commit_all(root.parent, "Record")
    assert project.cli("check", "--staged").exit_code == 0
    project.add_run("TÄSK 1", env="crm-øst", result={"passed": False, "reward": 0})
    blocked = project.cli("check", "--staged")
    assert blocked.exit_code == 1
    assert "CHANGED  TÄSK 1 (crm-øst)  result.json" in blocked.stdout
    assert project.cli("record", "TÄSK 1").exit_code == 0
    git(root.parent, "add", "-A")
    assert project.cli("check", "--staged").exit_code == 0
    assert project.cli("check", "--against", "HEAD").exit_code == 1
    diff = project.cli("diff", "--from", "HEAD")
    assert diff.stdout.startswith("TÄSK 1  result.json  changed\n")
    assert project.cli("status").stdout.splitlines()[1].endswith("staged")
    commit_all(root.parent, "Accept")
    log = project.cli("log", "TÄSK 1").stdout
    assert log.startswith(
        "TÄSK 1: Ünïcode [agent]/base lines [v1]/TÄSK 1.result.json, "
        "Ünïcode [agent]/base lines [v1]/TÄSK 1.state-diff.json\n"
    )
    assert len(log.splitlines()) == 3


def _clone_with_autocrlf(origin: SiloProject, clone: Path) -> SiloProject:
    run(origin.root.parent, "git", "-c", "core.autocrlf=true", "clone", "-q", origin.root, clone)
    git(clone, "config", "core.autocrlf", "true")
    shutil.copytree(origin.runs_dir, clone / ".silo" / "runs")
    return SiloProject(root=clone, runs_dir=clone / ".silo" / "runs")


def test_autocrlf_cannot_touch_baselines_after_init(tmp_path: Path) -> None:
    plain = recorded(tmp_path / "plain")
    converted = _clone_with_autocrlf(plain, tmp_path / "plain-clone")
    assert b"\r\n" in (converted.baselines / "TASK-001.result.json").read_bytes()
    assert converted.cli("check").exit_code == 1  # the working tree copy was rewritten
    assert converted.cli("check", "--staged").exit_code == 0  # the index holds the real bytes

    guarded = repo_project(tmp_path / "guarded")
    guarded.add_run("TASK-001")
    assert guarded.cli("init").exit_code == 0
    assert guarded.cli("record", "--all").exit_code == 0
    commit_all(guarded, "Record")
    clone = _clone_with_autocrlf(guarded, tmp_path / "guarded-clone")
    assert b"\r" not in (clone.baselines / "TASK-001.result.json").read_bytes()
    assert clone.cli("check").exit_code == 0
    assert clone.cli("check", "--staged").exit_code == 0
    assert git(clone.root, "status", "--porcelain").stdout == ""


def test_status_marks_git_states(tmp_path: Path) -> None:
    project = recorded(tmp_path / "repo", tasks=("TASK-001", "TASK-002", "TASK-003"))
    rerun(project, "TASK-001", reward=0.5)
    rerun(project, "TASK-002", reward=0.5)
    project.add_run("TASK-004")
    project.add_run("TASK-005")
    assert project.cli("record", "TASK-001", "TASK-002", "TASK-004").exit_code == 0
    git(project.root, "add", "baselines/TASK-002.result.json")
    (project.baselines / "TASK-002.state-diff.json").write_bytes(b"{}\n")
    (project.baselines / "TASK-003.state-diff.json").write_bytes(b"{}\n")
    git(project.root, "add", "baselines/TASK-003.state-diff.json")
    rerun(project, "TASK-003")
    assert project.cli("record", "TASK-003").exit_code == 0  # back to HEAD's bytes, unstaged
    table = project.cli("status").stdout.splitlines()
    assert table[0].split()[-1] == "GIT"
    states = {line.split()[0]: line.split()[-1] for line in table[1:6]}
    assert states == {
        "TASK-001": "modified",
        "TASK-002": "modified+staged",  # one artifact each
        "TASK-003": "modified",  # staged, then changed again
        "TASK-004": "untracked",
        "TASK-005": "-",  # runs but no baseline: the verdict column says so
    }
    # One meaning per word: "untracked" is git's, the verdict column says "no baseline".
    assert table[5].split()[-3:] == ["no", "baseline", "-"]


def test_readme_log_example(tmp_path: Path) -> None:
    """docs/git.md's `log` output, reproduced on the bundled example's TASK-002."""
    root = tmp_path / "crm-demo"
    shutil.copytree(Path(__file__).parents[2] / "examples" / "crm-demo" / ".silo", root / ".silo")
    (root / "pyproject.toml").write_text("[tool.silo-regress]\n")
    (root / ".gitignore").write_text(".silo/\n")
    git(root, "init", "-q", "-b", "main")
    project = SiloProject(root=root, runs_dir=root / ".silo" / "runs")
    ada = {"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.invalid"}
    assert project.cli("record", "TASK-002").exit_code == 0
    git(root, "add", "-A")
    stamp = {
        "GIT_AUTHOR_DATE": "2026-03-16T12:00:00Z",
        "GIT_COMMITTER_DATE": "2026-03-16T12:00:00Z",
    }
    run(root, "git", "commit", "-q", "-m", "Record the CRM tasks", env={**ada, **stamp})
    path = project.baselines / "TASK-002.result.json"
    value = json.loads(path.read_text())
    value.update(passed=False, reward=0.75)
    for check in value["checks"]:
        if check["label"] == "OPP-005 stage is Negotiation/Review":
            check["passed"] = False
    path.write_text(json.dumps(value))
    assert project.cli("fmt").exit_code == 0
    git(root, "add", "-A")
    stamp = {
        "GIT_AUTHOR_DATE": "2026-03-18T12:00:00Z",
        "GIT_COMMITTER_DATE": "2026-03-18T12:00:00Z",
    }
    run(root, "git", "commit", "-q", "-m", "Stricter stage check", env={**ada, **stamp})
    output = project.cli("log", "TASK-002").stdout
    hashes = re.compile(r"^[0-9a-f]{7}(?=  )", re.MULTILINE)
    assert hashes.sub("HASH", output) == hashes.sub("HASH", readme_snippet("log-example"))


def test_the_hook_a_staged_check_runs_in_is_read_from_the_environment() -> None:
    from silo_regress.commands.checking import running_hook
    from silo_regress.judging.outcome import HOOK_VARIABLE, Hook

    assert running_hook({"PRE_COMMIT": "1"}) is Hook.FRAMEWORK
    assert running_hook({HOOK_VARIABLE: "git-hook"}) is Hook.GIT
    # pre-commit runs the hook even when git's own hook script is ours too.
    assert running_hook({"PRE_COMMIT": "1", HOOK_VARIABLE: "git-hook"}) is Hook.FRAMEWORK
    assert running_hook({HOOK_VARIABLE: "something else"}) is None
    assert running_hook({}) is None
