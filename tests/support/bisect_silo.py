"""A stand-in Silo whose agent quality is a file in the commit: for bisect's tests.

    python bisect_silo.py run --env ENV --task TASK [...]

It reads ``quality.json`` in the directory it was started in (the commit's worktree):
``{"rate": 0.9}`` passes each rollout with that chance (drawn from a seeded generator
and a counter beside ``FAKE_SILO_CONTROL``, so a test is repeatable), ``{"output": X}``
changes the agent's output (an exact task's verdict), ``{"mode": "crash"}`` leaves a run
without result.json (any fake_silo mode may be named), ``{"broken": true}`` fails to
load the agent (no run directory, as Silo does on a configuration error). It then
behaves as tests/support/fake_silo.py in mode ``ok`` or ``fail``.
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import fake_silo  # type: ignore[import-not-found]  # beside this file, run as a script


def main() -> None:
    quality = json.loads(Path("quality.json").read_text(encoding="utf-8"))
    if quality.get("broken"):
        fake_silo.fail("Cannot load agent: SyntaxError in silo.agent.ts")
    control = os.environ.get("FAKE_SILO_CONTROL")
    base = Path(control).parent if control else Path(".silo")
    counter = base / ".bisect-draws"
    import fcntl

    with open(counter, "a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        count = int(handle.read() or 0)
        handle.seek(0)
        handle.truncate()
        handle.write(str(count + 1))
    seed = os.environ.get("BISECT_SILO_SEED", "bisect")
    draw = random.Random(f"{seed}-{count}").random()
    rate = float(quality.get("rate", 1.0))
    os.environ["FAKE_SILO_MODE"] = quality.get("mode") or ("ok" if draw < rate else "fail")
    if "output" in quality:
        # fake_silo reads its output from a control file; write one of our own.
        own = base / f".bisect-control-{os.getpid()}.json"
        mode = os.environ["FAKE_SILO_MODE"]
        own.write_text(json.dumps({"default": {"mode": mode, "output": quality["output"]}}))
        os.environ["FAKE_SILO_CONTROL"] = str(own)
    fake_silo.main()


if __name__ == "__main__":
    main()
