"""Wall time of the pre-commit hook command on a git repository with 1,000 baselined tasks.

Times, as separate processes (start-up included, as a hook pays it on every commit):
the hook (`check --staged --allow-no-runs`) next to the plain `check`, `check
--against HEAD`, the fmt hook over every baseline file, and the check hook run by
the pre-commit framework itself. Then, in-process, how the index is read: plain git
(`ls-files` + one `cat-file --batch`, what gitio does) against GitPython's index
reader, and what importing GitPython costs.

    python bench/hook.py [--tasks 1000] [--repeat 10]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import project as generated_project

BIN = Path(sys.executable).parent
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
PRE_COMMIT_CONFIG = """repos:
  - repo: local
    hooks:
      - id: silo-regress-check
        name: silo-regress check
        entry: silo-regress check --staged --allow-no-runs
        language: system
        pass_filenames: false
        require_serial: true
        always_run: true
"""


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)
    return done.stdout.decode()


def repository(tasks: int, into: Path) -> Path:
    """A committed git repository: ``tasks`` baselined tasks, one matching run each."""
    source = generated_project(tasks=tasks, runs=tasks)
    root = into / "repo"
    shutil.copytree(source, root, ignore=shutil.ignore_patterns(".complete"))
    (root / ".gitignore").write_text(".silo/\n", encoding="utf-8")
    (root / ".pre-commit-config.yaml").write_text(PRE_COMMIT_CONFIG, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "baselines")
    return root


def wall(command: Sequence[str], *, cwd: Path, repeat: int, expect: int = 0) -> list[float]:
    env = {**os.environ, **GIT_ENV, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode != expect:
            raise SystemExit(f"{command} exited {done.returncode}:\n{done.stdout.decode()}")
    return times


def in_process(func: Callable[[], object], *, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return times


def report(label: str, times: list[float]) -> None:
    print(
        f"{label:<58} median {statistics.median(times) * 1000:7.1f} ms"
        f"   min {min(times) * 1000:7.1f} ms   (n={len(times)})",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    silo = str(BIN / "silo-regress")
    with tempfile.TemporaryDirectory(prefix="silo-hook-bench-") as tmp:
        root = repository(args.tasks, Path(tmp))
        files = sorted(str(p.relative_to(root)) for p in (root / "baselines").glob("*.json"))
        print(f"{args.tasks} tasks, {len(files)} baseline files, git {git(root, 'version')}")
        rows = [
            ("silo-regress check (working tree)", [silo, "check"]),
            ("silo-regress check --staged --allow-no-runs (the hook)", [
                silo, "check", "--staged", "--allow-no-runs"
            ]),
            ("silo-regress check --against HEAD", [silo, "check", "--against", "HEAD"]),
            ("silo-regress fmt --check <every baseline> (fmt hook)", [
                silo, "fmt", "--check", *files
            ]),
        ]  # fmt: skip
        for label, command in rows:
            report(label, wall(command, cwd=root, repeat=args.repeat))
        # A fresh commit leaves its objects loose (one file each); a clone, or git's
        # automatic gc, packs them. Reading 2,000 loose objects costs about 50 ms more.
        git(root, "gc", "-q")
        command = [silo, "check", "--staged", "--allow-no-runs"]
        report("the hook again, objects packed (as in a clone)", wall(
            command, cwd=root, repeat=args.repeat
        ))  # fmt: skip
        pre_commit = BIN / "pre-commit"
        if pre_commit.is_file():
            command = [str(pre_commit), "run", "silo-regress-check"]
            report("pre-commit run silo-regress-check (framework + hook)", wall(
                command, cwd=root, repeat=args.repeat
            ))  # fmt: skip

        from silo_regress.vcs import gitio

        repo = gitio.find_repository(root)
        report("in-process: gitio.read_index, packed (ls-files + cat-file)", in_process(
            lambda: gitio.read_index(repo, "baselines"), repeat=args.repeat
        ))  # fmt: skip
        report("in-process: GitPython index entries + blob reads (packed)", in_process(
            lambda: _gitpython_index(root), repeat=args.repeat
        ))  # fmt: skip
        report("python -c 'import git' (GitPython's import)", wall(
            [sys.executable, "-c", "import git"], cwd=root, repeat=args.repeat
        ))  # fmt: skip
        report("python -c 'pass' (the interpreter alone)", wall(
            [sys.executable, "-c", "pass"], cwd=root, repeat=args.repeat
        ))  # fmt: skip


def _gitpython_index(root: Path) -> dict[str, bytes]:
    import git

    with git.Repo(root) as handle:
        files = {}
        for (path, stage), entry in handle.index.entries.items():
            if stage == 0 and str(path).startswith("baselines/"):
                files[str(path)] = handle.odb.stream(entry.binsha).read()
        return files


if __name__ == "__main__":
    main()
