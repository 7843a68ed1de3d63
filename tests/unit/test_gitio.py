"""gitio against real repositories: discovery, index and tree reads, states, history."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support.gitrepo import commit_all, head, recorded, repo_project, run
from support.silofixture import git

from silo_regress.errors import GitError
from silo_regress.vcs import gitio


def test_find_repository_from_a_subdirectory(tmp_path: Path) -> None:
    project = repo_project(tmp_path / "repo")
    sub = project.root / "agents" / "crm"
    sub.mkdir(parents=True)
    repo = gitio.find_repository(sub)
    assert repo.root == project.root.resolve()
    assert repo.git_dir == (project.root / ".git").resolve()
    assert not repo.shallow
    assert repo.path_of(sub / "baselines") == "agents/crm/baselines"
    assert repo.path_of(project.root) == ""


def test_not_a_repository_names_the_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    plain = tmp_path / "plain dir"
    plain.mkdir()
    with pytest.raises(GitError) as caught:
        gitio.find_repository(plain)
    assert caught.value.message.startswith(f"{plain}: not a git repository")


def test_bare_repository_and_git_dir_are_refused(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "--bare", "origin.git")
    with pytest.raises(GitError, match="is a bare git repository"):
        gitio.find_repository(tmp_path / "origin.git")
    project = repo_project(tmp_path / "work")
    with pytest.raises(GitError, match=r"inside a \.git directory"):
        gitio.find_repository(project.root / ".git")


def test_path_outside_the_repository_is_refused(tmp_path: Path) -> None:
    repo = gitio.find_repository(repo_project(tmp_path / "repo").root)
    with pytest.raises(GitError, match="lies outside the git repository"):
        repo.path_of(tmp_path / "elsewhere")


def test_index_and_tree_reads_with_awkward_names(tmp_path: Path) -> None:
    project = repo_project(tmp_path / "repo")
    names = {
        "base lines [v1]/TASK 1.result.json": b'{"a": 1}\n',
        "base lines [v1]/crm-øst/TÄSK-ü.result.json": b'{"b": "\xc3\xa9"}\n',
        "base lines [v1]/*.json": b"star\n",
        "base lines [v2]/other.json": b"not under the directory\n",
    }
    for name, data in names.items():
        path = project.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    first = commit_all(project, "awkward names")
    repo = gitio.find_repository(project.root)
    expected = {
        "TASK 1.result.json": b'{"a": 1}\n',
        "crm-øst/TÄSK-ü.result.json": b'{"b": "\xc3\xa9"}\n',
        "*.json": b"star\n",
    }
    assert gitio.read_tree(repo, first, "base lines [v1]") == expected
    assert gitio.read_index(repo, "base lines [v1]").files == expected
    (project.root / "base lines [v1]" / "TASK 1.result.json").write_bytes(b'{"a": 2}\n')
    git(project.root, "add", "-A")
    assert gitio.read_index(repo, "base lines [v1]").files["TASK 1.result.json"] == b'{"a": 2}\n'
    assert gitio.read_tree(repo, first, "base lines [v1]")["TASK 1.result.json"] == b'{"a": 1}\n'


def test_read_blobs_handles_missing_and_repeated_names(tmp_path: Path) -> None:
    project = recorded(tmp_path / "repo")
    repo = gitio.find_repository(project.root)
    sha = head(project.root)
    path = "baselines/TASK-001.result.json"
    blobs = gitio.read_blobs(repo, [f"{sha}:{path}", f"{sha}:nope.json", f"{sha}:{path}"])
    assert blobs[0] == (project.baselines / "TASK-001.result.json").read_bytes()
    assert blobs[1] is None
    assert blobs[2] == blobs[0]


def test_git_index_file_relative_to_the_hook_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git exports GIT_INDEX_FILE=.git/index (relative) to hooks; it must still work."""
    project = recorded(tmp_path / "repo")
    target = project.baselines / "TASK-001.result.json"
    original = target.read_bytes()
    shutil.copy(project.root / ".git" / "index", project.root / ".git" / "other-index")
    target.write_bytes(b'{"other": true}\n')
    run(project.root, "git", "add", "baselines", env={"GIT_INDEX_FILE": ".git/other-index"})
    monkeypatch.chdir(project.root)
    monkeypatch.setenv("GIT_DIR", ".git")
    monkeypatch.setenv("GIT_INDEX_FILE", ".git/other-index")
    repo = gitio.find_repository(project.root / "baselines")
    assert repo.root == project.root.resolve()
    staged = gitio.read_index(repo, "baselines").files
    assert staged["TASK-001.result.json"] == b'{"other": true}\n'
    monkeypatch.delenv("GIT_INDEX_FILE")
    monkeypatch.delenv("GIT_DIR")
    plain = gitio.find_repository(project.root)
    assert gitio.read_index(plain, "baselines").files["TASK-001.result.json"] == original


def test_unknown_ref_and_no_commits(tmp_path: Path) -> None:
    project = repo_project(tmp_path / "repo")
    repo = gitio.find_repository(project.root)
    with pytest.raises(GitError, match="no commits yet"):
        gitio.resolve_commit(repo, "HEAD")
    commit_all(project, "first")
    assert gitio.resolve_commit(repo, "HEAD") == head(project.root)
    with pytest.raises(GitError, match=r"unknown git ref 'origin/main'.*fetched"):
        gitio.resolve_commit(repo, "origin/main")
    with pytest.raises(GitError, match="is not a git ref"):
        gitio.resolve_commit(repo, "--output=/tmp/x")


def test_path_states(tmp_path: Path) -> None:
    project = recorded(tmp_path / "repo", tasks=("TASK-001", "TASK-002", "TASK-003"))
    (project.baselines / "TASK-001.result.json").write_bytes(b"{}\n")
    (project.baselines / "TASK-002.result.json").write_bytes(b"{}\n")
    git(project.root, "add", "baselines/TASK-002.result.json")
    (project.baselines / "TASK-004.result.json").write_bytes(b"{}\n")
    repo = gitio.find_repository(project.root)
    states = gitio.path_states(repo, "baselines")
    assert states["TASK-001.result.json"] is gitio.PathState.MODIFIED
    assert states["TASK-002.result.json"] is gitio.PathState.STAGED
    assert states["TASK-003.result.json"] is gitio.PathState.COMMITTED
    assert states["TASK-004.result.json"] is gitio.PathState.UNTRACKED


def test_history_newest_first_with_abbreviated_hashes(tmp_path: Path) -> None:
    project = recorded(tmp_path / "repo")
    (project.root / "README").write_text("unrelated\n")
    commit_all(project, "Unrelated")
    (project.baselines / "TASK-001.result.json").write_bytes(b"{}\n")
    commit_all(project, "Change TASK-001", date="2026-03-18T12:00:00Z")
    repo = gitio.find_repository(project.root)
    found = gitio.history(repo, ["baselines/TASK-001.result.json"])
    assert [c.subject for c in found] == ["Change TASK-001", "Record the tasks"]
    assert found[0].day.isoformat() == "2026-03-18"
    assert found[0].author == "Test Author"
    assert found[0].parent is not None and found[1].parent is None
    assert found[0].sha.startswith(found[0].short) and len(found[0].short) >= 7
    assert not any(c.boundary for c in found)


def _staged(root: Path, path: str) -> bytes:
    """What git itself says is staged at ``path``."""
    done = subprocess.run(
        ["git", "cat-file", "blob", f":{path}"], cwd=root, capture_output=True, check=True
    )
    return done.stdout


@pytest.mark.parametrize(
    "worktree",
    ["same", "edited", "crlf", "deleted", "fifo", "symlink-to-same", "directory"],
)
def test_staged_and_committed_files_are_git_s_whatever_the_working_tree_holds(
    tmp_path: Path, worktree: str
) -> None:
    """Files equal to their staged blob are read from the working tree (git's blob hash
    proves it); anything else, a FIFO or link included, comes from git, never blocking."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "core.autocrlf", "true")  # a filter may call CRLF unchanged
    (root / "baselines").mkdir()
    target = root / "baselines" / "T.result.json"
    target.write_bytes(b'{\n  "passed": true\n}\n')
    (root / "baselines" / "other.json").write_bytes(b"[]\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "baselines")
    expected = _staged(root, "baselines/T.result.json")
    outside = tmp_path / "same.json"
    outside.write_bytes(expected)
    if worktree == "edited":
        target.write_bytes(b'{\n  "passed": false\n}\n')
    elif worktree == "crlf":
        target.write_bytes(expected.replace(b"\n", b"\r\n"))
    elif worktree == "deleted":
        target.unlink()
    elif worktree == "fifo":
        target.unlink()
        os.mkfifo(target)
    elif worktree == "symlink-to-same":
        target.unlink()
        target.symlink_to(outside)
    elif worktree == "directory":
        target.unlink()
        target.mkdir()
    repo = gitio.find_repository(root)

    index = gitio.read_index(repo, "baselines")
    staged = gitio.read_staged(repo, ["baselines"])
    committed = gitio.read_tree(repo, gitio.resolve_commit(repo, "HEAD"), "baselines")

    assert index.files["T.result.json"] == expected
    assert committed["T.result.json"] == expected
    assert index.files["other.json"] == b"[]\n"
    assert staged["baselines/T.result.json"] == expected


def test_unchanged_staged_files_are_not_asked_of_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right after a commit every object is loose: git reads none of the unchanged ones."""
    project = recorded(tmp_path / "repo")
    marker = project.root / "baselines" / ".silo-regress-format"  # the one blob with its bytes
    staged = marker.read_bytes()
    marker.write_bytes(b"edited\n")
    asked: list[str] = []
    real = gitio.read_blobs

    def recording(repo: gitio.Repository, names: list[str]) -> list[bytes | None]:
        asked.extend(names)
        return real(repo, names)

    monkeypatch.setattr(gitio, "read_blobs", recording)
    index = gitio.read_index(gitio.find_repository(project.root), "baselines")

    edited = git(project.root, "rev-parse", ":baselines/.silo-regress-format").stdout.strip()
    assert asked == [edited]  # only the file that differs from its staged blob
    assert index.files[".silo-regress-format"] == staged
    assert len(index.files) == 5
