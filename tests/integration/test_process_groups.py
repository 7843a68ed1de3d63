"""Process supervision: run_group and ProcessGroups against real (tiny) processes."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from silo_regress.runner.process import ProcessGroups, StoppedError, run_group

# A leader that starts a child in its own group, writes both pids, then sleeps.
FAMILY = (
    "import os, subprocess, sys, time\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
    "open(sys.argv[1], 'w').write(f'{os.getpid()} {child.pid}')\n"
    "{ignore}\n"
    "time.sleep(600)\n"
)


def family(tmp_path: Path, *, ignore_term: bool = False) -> tuple[list[str], Path]:
    pids = tmp_path / "pids"
    ignore = "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN)" if ignore_term else ""
    return [sys.executable, "-c", FAMILY.replace("{ignore}", ignore), str(pids)], pids


def gone(pids: list[int], *, grace: float = 5.0) -> bool:
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        living = []
        for pid in pids:
            try:
                if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                    living.append(pid)
            except psutil.NoSuchProcess:
                pass
        if not living:
            return True
        time.sleep(0.02)
    return False


def wait_for(path: Path) -> list[int]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return [int(x) for x in path.read_text().split()]
        time.sleep(0.02)
    raise AssertionError(f"{path} never written")


def test_exit_code_and_output_tails(tmp_path: Path) -> None:
    argv = [
        sys.executable,
        "-c",
        "import sys; print('out'); sys.stderr.write('\\x1b[31merr'); sys.exit(3)",
    ]
    exit_ = run_group(argv, cwd=tmp_path)
    assert (exit_.code, exit_.timed_out, exit_.error) == (3, False, None)
    assert exit_.stdout == "out\n"
    assert exit_.stderr == "err"  # ANSI escapes removed


def test_a_missing_program_is_an_exit_without_a_code(tmp_path: Path) -> None:
    exit_ = run_group([str(tmp_path / "no-such-program")], cwd=tmp_path)
    assert exit_.code is None
    assert exit_.error is not None and "No such file" in exit_.error


def test_leftover_children_die_with_their_leader(tmp_path: Path) -> None:
    script = (
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "open(sys.argv[1], 'w').write(str(child.pid))\n"
    )
    pids = tmp_path / "pids"
    exit_ = run_group([sys.executable, "-c", script, str(pids)], cwd=tmp_path)
    assert exit_.code == 0
    assert gone(wait_for(pids))


def test_timeout_terms_then_kills_the_whole_group(tmp_path: Path) -> None:
    argv, pids = family(tmp_path, ignore_term=True)
    started = time.monotonic()
    exit_ = run_group(argv, cwd=tmp_path, timeout=0.5, kill_grace=0.3)
    took = time.monotonic() - started
    assert exit_.timed_out
    assert exit_.code == -9  # it ignored SIGTERM
    assert 0.7 < took < 5
    assert gone(wait_for(pids))


def test_stop_all_ends_every_group_and_refuses_new_ones(tmp_path: Path) -> None:
    groups = ProcessGroups(kill_grace=0.5)
    exits = []
    files = []
    threads = []
    for n in range(2):
        argv, pids = family(tmp_path / str(n))
        (tmp_path / str(n)).mkdir()
        files.append(pids)
        threads.append(
            threading.Thread(target=lambda a=argv: exits.append(groups.run_group(a, cwd=tmp_path)))
        )
    for thread in threads:
        thread.start()
    every = [pid for path in files for pid in wait_for(path)]
    groups.stop_all()
    for thread in threads:
        thread.join(10)
    assert [e.code for e in exits] == [-15, -15]
    assert gone(every)
    assert len(groups) == 0
    with pytest.raises(StoppedError):
        groups.start([sys.executable, "-c", "pass"], cwd=tmp_path)


def test_a_group_that_exits_in_time_cancels_its_deadline(tmp_path: Path) -> None:
    # A timer left running would fire after the pid was reaped, and could signal
    # whatever process reuses the number.
    exit_ = run_group([sys.executable, "-c", "pass"], cwd=tmp_path, timeout=30)
    assert (exit_.code, exit_.timed_out) == (0, False)
    timers = [t for t in threading.enumerate() if isinstance(t, threading.Timer)]
    time.sleep(0.05)
    assert not [t for t in timers if t.is_alive()]
