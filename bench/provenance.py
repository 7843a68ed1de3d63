"""The pre-commit hook with stale-run detection, side by side with the hook without it.

Two committed git repositories with the same 1,000 baselined tasks and one matching
run each. In the second, config sets `agent` and `inputs` (the agent file and an
`environments/**` tree of 200 files), every run carries the provenance record the
runner writes, and the hook fingerprints the inputs from the git index. The hook
(`check --staged --allow-no-runs`) is timed as a separate process, start-up
included, in pairs A B A B, so the ratio holds on a shared machine.

    python bench/provenance.py [--tasks 1000] [--pairs 10] [--one-cpu]
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hook import BIN, GIT_ENV, git, repository

INPUT_FILES = 200


def with_inputs(plain: Path, into: Path) -> Path:
    """A copy of ``plain`` whose config has inputs, and whose runs have provenance."""
    from silo_regress.project.config import load_config
    from silo_regress.runs.index import Run, read_run
    from silo_regress.runs.provenance import start_batch, write_provenance

    root = into / "with-inputs"
    shutil.copytree(plain, root, symlinks=True)
    with (root / "pyproject.toml").open("a", encoding="utf-8") as config:
        config.write('agent = "silo.agent.ts"\ninputs = ["silo.agent.ts", "environments/**"]\n')
    (root / "silo.agent.ts").write_text("export default async function agent() {}\n")
    for n in range(INPUT_FILES):
        world = root / "environments" / f"env-{n % 10}"
        world.mkdir(parents=True, exist_ok=True)
        (world / f"record-{n}.json").write_text(f'{{"id": "REC-{n:04d}"}}\n' * 20)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "inputs")
    batch = start_batch(load_config(root))
    for run_dir in sorted((root / ".silo" / "runs").iterdir()):
        run = read_run(run_dir)
        if isinstance(run, Run):
            record = batch.record_for(
                environment=run.environment,
                task_id=run.task_id,
                agent="silo.agent.ts",
                silo_command=("npx", "silo", "run"),
            )
            write_provenance(run_dir, record)
    return root


def hook_once(root: Path, env: dict[str, str], prefix: list[str]) -> float:
    command = [*prefix, str(BIN / "silo-regress"), "check", "--staged", "--allow-no-runs"]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{root.name}: exited {done.returncode}:\n{done.stdout.decode()}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--one-cpu", action="store_true", help="Run under `taskset -c 0`.")
    args = parser.parse_args()
    env = {**os.environ, **GIT_ENV, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory(prefix="bench-provenance-") as tmp:
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        plain = repository(args.tasks, Path(tmp))
        fingerprinted = with_inputs(plain, Path(tmp))
        prefix = ["taskset", "-c", "0"] if args.one_cpu else []
        for root in (plain, fingerprinted):  # warm the bytecode cache and page cache
            hook_once(root, env, prefix)
        without, with_ = [], []
        for _ in range(args.pairs):
            without.append(hook_once(plain, env, prefix))
            with_.append(hook_once(fingerprinted, env, prefix))
        where = " (taskset -c 0)" if args.one_cpu else ""
        print(f"{args.tasks} baselined tasks, {args.pairs} pairs A B A B{where}, shared machine")
        for label, times in (
            ("hook without inputs", without),
            (f"hook, inputs from the index ({INPUT_FILES + 1} files) + records", with_),
        ):
            print(
                f"{label:<58} median {statistics.median(times) * 1000:7.1f} ms"
                f"   min {min(times) * 1000:7.1f} ms"
            )
        ratios = [b / a for a, b in zip(without, with_, strict=True)]
        print(f"{'ratio with / without (paired)':<58} median {statistics.median(ratios):7.2f}x")


if __name__ == "__main__":
    main()
