"""A stand-in for Silo's command line, for the runner's tests and benchmarks.

    python fake_silo.py run --env ENV --task TASK [--agent PATH] [--runs N]
                            [--max-tool-calls N] [--timeout-ms N]

Like Silo it parses only the space-separated ``--flag value`` form, checks the
environment and the agent file before creating anything (configuration errors
exit 1 with a message on stderr and no run directory), and writes each rollout
to ``./.silo/runs/run_<UTC YYYYMMDDHHMMSS>_<pid in base 36>/`` as
``JSON.stringify(value, null, 2) + "\\n"``: run.json, result.json,
state-diff.json and trace.jsonl. It exits 0 when every rollout passed, else 1.

What it does is chosen per task by a JSON control file named by the environment
variable ``FAKE_SILO_CONTROL``::

    {"environments": ["crm-west", "crm-east"],
     "default": {"mode": "ok"},
     "tasks": {"TASK-001": {"mode": "vary", "sleep": 0.2},
               "crm-east/TASK-001": {"mode": "hang"}}}

or, without a file, by ``FAKE_SILO_MODE`` and ``FAKE_SILO_SLEEP``. Keys of a
behaviour: ``mode``, ``sleep`` (seconds before the JSON files are written),
``ignore_term`` (ignore SIGTERM, as a stuck process may), ``outputs`` and
``passed`` (lists the ``vary`` mode walks through), ``message`` (for
``config-error``). Modes:

- ``ok``: a complete, passing run; exit 0.
- ``fail``: a complete run whose required check failed; exit 1.
- ``crash``: run.json is written, then a stack trace and exit 1 (no result.json).
- ``hang``: the run directory and trace, then it sleeps for ever, with a child
  process that sleeps too (both must die with the process group).
- ``enospc``: run.json and a truncated result.json, then ENOSPC on stderr; exit 1.
- ``truncate``: run.json and a truncated result.json, as a process killed mid-write
  leaves them; exit 1 with nothing on stderr.
- ``config-error``: an error on stderr and exit 1 before any directory exists.
- ``vary``: like ``ok``, but rollout *k* of the task (counted across processes)
  reports ``outputs[k % len]`` as agentOutput and ``passed[k % len]`` for its
  third check, and with ``modes`` (a list of the modes above, e.g. ``["ok",
  "crash"]``) behaves as ``modes[k % len]``.

- ``seeded``: like ``ok``/``fail``, decided by the rollout's identity that silo-regress
  passes in ``SILO_REGRESS_ROLLOUT`` (``ENV/TASK#k``): it passes when a SHA-256 of
  ``seed`` and that identity, read as a fraction, is below ``rate`` (default 0.8), so
  the same rollout passes or fails the same way on every machine and in every order.
  With ``start_failure`` (a fraction), that share of rollouts fails to start on its
  first attempt in this directory (exit 1, no run directory, as an unreachable model
  gateway would), and starts on the next.

With ``FAKE_SILO_PIDS`` set, every process it starts appends its pid to that file.

A hostile agent: with ``rewrite_earlier`` set in a behaviour, each rollout first rewrites
the ``result.json`` of every finished run of its task to ``"passed": true`` (an agent
that edits finished run directories while later rollouts run).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FLAGS = {"--env", "--task", "--agent", "--runs", "--max-tool-calls", "--timeout-ms"}
DEFAULT_ENVIRONMENTS = ["crm-west", "crm-east"]


def silo_json(value: Any) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if number == 0:
            return out


def fail(message: str) -> None:
    sys.stderr.write(f"Error: {message}\n")
    sys.exit(1)


def parse(argv: list[str]) -> dict[str, str]:
    if not argv or argv[0] != "run":
        fail("usage: silo run --env <env> --task <TASK-ID> [--agent <path>] [--runs N]")
    args: dict[str, str] = {}
    rest = argv[1:]
    while rest:
        flag = rest.pop(0)
        if flag not in FLAGS:
            fail(f"unknown option {flag!r}")
        if not rest:
            fail(f"option {flag} needs a value")
        args[flag] = rest.pop(0)
    for required in ("--env", "--task"):
        if required not in args:
            fail(f"missing required option {required}")
    return args


def behaviour(env: str, task: str) -> tuple[dict[str, Any], list[str]]:
    control: dict[str, Any] = {}
    path = os.environ.get("FAKE_SILO_CONTROL")
    if path:
        control = json.loads(Path(path).read_text(encoding="utf-8"))
    chosen: dict[str, Any] = {"mode": os.environ.get("FAKE_SILO_MODE", "ok")}
    if "FAKE_SILO_SLEEP" in os.environ:
        chosen["sleep"] = float(os.environ["FAKE_SILO_SLEEP"])
    chosen.update(control.get("default", {}))
    tasks = control.get("tasks", {})
    chosen.update(tasks.get(task, {}))
    chosen.update(tasks.get(f"{env}/{task}", {}))
    return chosen, control.get("environments", DEFAULT_ENVIRONMENTS)


def note_pid() -> None:
    target = os.environ.get("FAKE_SILO_PIDS")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()}\n")


def next_count(env: str, task: str) -> int:
    """How many rollouts of this task came before, across processes."""
    import fcntl

    base = Path(os.environ.get("FAKE_SILO_CONTROL") or ".silo/fake-counter").parent
    counter = base / f".count-{env}-{task}"
    with open(counter, "a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        count = int(handle.read() or 0)
        handle.seek(0)
        handle.truncate()
        handle.write(str(count + 1))
    return count


def result_for(passed_third: bool, output: Any, *, required_ok: bool) -> dict[str, Any]:
    checks = [
        {"label": "Lead qualified", "passed": required_ok, "detail": "", "required": True},
        {"label": "Note logged", "passed": True, "detail": "AUD-0001", "required": False},
        {"label": "Polite reply", "passed": passed_third, "detail": "", "required": False},
    ]
    required = [c for c in checks if c["required"]]
    return {
        "passed": all(c["passed"] for c in required),
        "reward": 1 if required_ok else 0.33,
        "requiredPassed": sum(1 for c in required if c["passed"]),
        "requiredTotal": len(required),
        "failedRequired": [c["label"] for c in required if not c["passed"]],
        "checksPassed": sum(1 for c in checks if c["passed"]),
        "checksFailed": sum(1 for c in checks if not c["passed"]),
        "toolCalls": 3,
        "toolErrors": 0,
        "terminationReason": "completed",
        "agentOutput": output,
        "error": None,
        "checks": checks,
    }


STATE_DIFF = {
    "scalars": [{"field": "pipeline.stage", "from": "lead", "to": "qualified"}],
    "collections": {
        "opportunities": {"added": [], "removed": [], "changed": ["OPP-005"]},
        "auditLog": {"added": ["AUD-0001"], "removed": [], "changed": []},
    },
}


def fraction(*parts: Any) -> float:
    """A number in [0, 1) fixed by ``parts``: the same on every machine."""
    import hashlib

    digest = hashlib.sha256(":".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def seeded_mode(how: dict[str, Any]) -> str:
    """``ok`` or ``fail`` for this rollout, from its identity; exits as an unstarted
    rollout on the first attempt of the chosen share of rollouts."""
    identity = os.environ.get("SILO_REGRESS_ROLLOUT", "")
    if not identity:
        fail("seeded mode needs SILO_REGRESS_ROLLOUT (set by silo-regress for each rollout)")
    seed = how.get("seed", 0)
    if fraction(seed, "start", identity) < float(how.get("start_failure", 0)):
        marker = Path(".silo") / ".fake-attempts" / identity.replace("/", "__")
        marker.parent.mkdir(parents=True, exist_ok=True)
        try:
            with open(marker, "x", encoding="utf-8"):
                pass
        except FileExistsError:
            return _passes(how, identity)
        fail("could not reach the model gateway (ECONNRESET)")
    return _passes(how, identity)


def _passes(how: dict[str, Any], identity: str) -> str:
    return "ok" if fraction(how.get("seed", 0), identity) < float(how.get("rate", 0.8)) else "fail"


def rollout(env: str, task: str, how: dict[str, Any]) -> bool:
    """One rollout; True when it passed."""
    mode = how.get("mode", "ok")
    if mode == "seeded":
        mode = seeded_mode(how)
    varying = mode == "vary"
    count = next_count(env, task) if varying else 0
    if varying:
        modes = how.get("modes", ["ok"])
        mode = modes[count % len(modes)]
    start = datetime.now(UTC)
    run_id = f"run_{start.strftime('%Y%m%d%H%M%S')}_{base36(os.getpid())}"
    run_dir = Path(".silo") / "runs" / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    stamp = start.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    (run_dir / "trace.jsonl").write_bytes(
        json.dumps({"at": stamp, "event": "start", "argv": sys.argv[1:]}).encode() + b"\n"
    )
    if mode == "hang":
        sleeper = (
            "import os, sys, time\n"
            "if sys.argv[1]:\n"
            "    open(sys.argv[1], 'a').write(f'{os.getpid()}\\n')\n"
            "time.sleep(600)\n"
        )
        child = subprocess.Popen(
            [sys.executable, "-c", sleeper, os.environ.get("FAKE_SILO_PIDS", "")]
        )
        del child  # left running on purpose: the runner must kill the whole group
        while True:
            time.sleep(60)
    time.sleep(float(how.get("sleep", 0)))
    end = datetime.now(UTC)
    meta = {
        "runId": run_id,
        "environment": env,
        "taskId": task,
        "startedAt": stamp,
        "finishedAt": end.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "durationMs": int((end - start).total_seconds() * 1000),
        "terminationReason": "completed",
        "toolCallCount": 3,
    }
    (run_dir / "run.json").write_bytes(silo_json(meta))
    if mode == "crash":
        sys.stderr.write("TypeError: Cannot read properties of undefined (reading 'id')\n")
        sys.stderr.write("    at runRollout (silo/dist/runner.js:88:17)\n")
        sys.exit(1)
    output: Any = how.get("output", f"Qualified the lead for {task}.")
    third = True
    if varying:
        outputs = how.get("outputs", [output])
        passed = how.get("passed", [True])
        output, third = outputs[count % len(outputs)], passed[count % len(passed)]
    result = result_for(third, output, required_ok=mode != "fail")
    if how.get("rewrite_earlier"):
        forge_earlier(run_dir, env, task)
    if mode == "truncate":
        (run_dir / "result.json").write_bytes(silo_json(result)[:40])
        sys.exit(1)
    if mode == "enospc":
        (run_dir / "result.json").write_bytes(silo_json(result)[:40])
        sys.stderr.write("Error: ENOSPC: no space left on device, write\n")
        sys.exit(1)
    (run_dir / "result.json").write_bytes(silo_json(result))
    (run_dir / "state-diff.json").write_bytes(silo_json(STATE_DIFF))
    return bool(result["passed"])


def forge_earlier(own: Path, env: str, task: str) -> None:
    """Rewrite every other finished run of this task to say it passed."""
    for other in own.parent.iterdir():
        result = other / "result.json"
        if other == own or not result.is_file():
            continue
        try:
            meta = json.loads((other / "run.json").read_bytes())
            value = json.loads(result.read_bytes())
        except (OSError, ValueError):
            continue
        if (meta.get("environment"), meta.get("taskId")) == (env, task) and not value["passed"]:
            value["passed"] = True
            result.write_bytes(silo_json(value))


def main() -> None:
    note_pid()
    args = parse(sys.argv[1:])
    env, task = args["--env"], args["--task"]
    how, environments = behaviour(env, task)
    if how.get("ignore_term"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if env not in environments:
        fail(f'Unknown environment "{env}". Available environments: {", ".join(environments)}')
    if how.get("mode") == "config-error":
        fail(how.get("message", f'Unknown task "{task}" in environment "{env}"'))
    agent = args.get("--agent")
    if agent is not None and not Path(agent).is_file():
        fail(f"Agent file not found: {agent}")
    results = [rollout(env, task, how) for _ in range(int(args.get("--runs", "1")))]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
