"""Process supervision: one command in its own process group, with a deadline.

Each command starts in a new session (``start_new_session``), so its process
group holds it and everything it starts (npx, node, tools). When the leader
exits, whatever is left of its group is killed; on timeout the group gets
SIGTERM, then SIGKILL after a grace period; :meth:`ProcessGroups.stop_all` does
the same to every live group (Ctrl-C, or SIGTERM to silo-regress, see
:func:`sigterm_as_interrupt`).

The leader is awaited with ``waitid(WNOWAIT)``, which leaves it a zombie until
its group has been signalled: the zombie keeps its pid, which is the group id,
reserved, so a signal can never reach an unrelated process that reused the
number. Deadlines are timers that signal only while the leader is unreaped
(both sides hold the same lock). A process that starts its own session escapes
its group; nothing short of a cgroup catches it.

Nothing here knows about Silo, runs or tasks.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO

DEFAULT_KILL_GRACE = 2.0
_OUTPUT_TAIL = 8192
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass(frozen=True)
class GroupExit:
    """How a supervised command ended."""

    code: int | None  # None: it could not be started; negative: killed by that signal
    seconds: float
    timed_out: bool
    stdout: str = ""  # the last few KiB, ANSI escapes removed
    stderr: str = ""
    error: str | None = None  # why it could not be started

    @classmethod
    def unstarted(cls, error: OSError) -> GroupExit:
        return cls(code=None, seconds=0.0, timed_out=False, error=error.strerror or str(error))


class Group:
    """One started command and its process group; :meth:`wait` once, from one thread."""

    def __init__(
        self,
        owner: ProcessGroups,
        proc: subprocess.Popen[bytes],
        *,
        out: IO[bytes],
        err: IO[bytes],
        timeout: float | None,
    ) -> None:
        self._owner = owner
        self._proc = proc
        self._out, self._err = out, err
        self._started = time.monotonic()
        self._timeout = timeout
        self._timers: list[threading.Timer] = []
        self._reaped = False
        self.timed_out = False
        if timeout is not None:
            self._after(timeout, self._expire)

    @property
    def pid(self) -> int:
        return self._proc.pid

    def wait(self) -> GroupExit:
        """Block until the leader exits; kill what is left of its group; reap it."""
        _await_exit(self._proc)
        with self._owner.lock:
            # The leader is a zombie still, so its pid (the group id) cannot have been reused.
            _signal_group(self.pid, signal.SIGKILL)
            self._reaped = True
            for timer in self._timers:
                timer.cancel()
            self._owner.forget(self)
        code = self._proc.wait()
        seconds = time.monotonic() - self._started
        try:
            return GroupExit(code, seconds, self.timed_out, _tail(self._out), _tail(self._err))
        finally:
            self._out.close()
            self._err.close()

    def terminate(self) -> None:
        """SIGTERM to the group now, SIGKILL after the grace period. Caller holds the lock."""
        if self._reaped:
            return
        _signal_group(self.pid, signal.SIGTERM)
        self._after(self._owner.kill_grace, self._kill)

    def kill(self) -> None:
        """SIGKILL to the group. Caller holds the lock."""
        if not self._reaped:
            _signal_group(self.pid, signal.SIGKILL)

    def _after(self, seconds: float, action: Callable[[], None]) -> None:
        timer = threading.Timer(seconds, self._locked, args=(action,))
        timer.daemon = True
        self._timers.append(timer)
        timer.start()

    def _locked(self, action: Callable[[], None]) -> None:
        with self._owner.lock:
            if not self._reaped:
                action()

    def _expire(self) -> None:
        self.timed_out = True
        self.terminate()

    def _kill(self) -> None:
        self.kill()


class ProcessGroups:
    """The live process groups of a batch; :meth:`stop_all` ends every one of them."""

    def __init__(self, *, kill_grace: float = DEFAULT_KILL_GRACE) -> None:
        self.kill_grace = kill_grace
        self.lock = threading.RLock()
        self._gone = threading.Condition(self.lock)
        self._live: dict[int, Group] = {}
        self.stopping = False

    def __len__(self) -> int:
        with self.lock:
            return len(self._live)

    def start(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Group | GroupExit:
        """Start ``argv`` in a new session; its exit when it could not be started.

        ``env`` adds to (never replaces) this process's environment.

        Raises :class:`StoppedError` once :meth:`stop_all` has begun.
        """
        with contextlib.ExitStack() as files, self.lock:
            if self.stopping:
                raise StoppedError
            out = files.enter_context(tempfile.TemporaryFile())
            err = files.enter_context(tempfile.TemporaryFile())
            try:
                proc = subprocess.Popen(
                    list(argv),
                    cwd=cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,
                    env={**os.environ, **env} if env else None,
                )
            except OSError as exc:
                return GroupExit.unstarted(exc)
            group = Group(self, proc, out=out, err=err, timeout=timeout)
            files.pop_all()  # the group closes them once it has read their tails
            self._live[group.pid] = group
            return group

    def run_group(
        self, argv: Sequence[str], *, cwd: Path, timeout: float | None = None
    ) -> GroupExit:
        """Start ``argv`` in its own process group and wait for it."""
        started = self.start(argv, cwd=cwd, timeout=timeout)
        return started if isinstance(started, GroupExit) else started.wait()

    def forget(self, group: Group) -> None:
        with self.lock:
            self._live.pop(group.pid, None)
            self._gone.notify_all()

    def stop_all(self, *, patience: float = 10.0) -> None:
        """Refuse new starts; SIGTERM every group, SIGKILL after the grace period.

        Returns once every group's leader has been reaped by its waiter (or
        ``patience`` seconds after the SIGKILL).
        """
        with self.lock:
            self.stopping = True
            for group in list(self._live.values()):
                _signal_group(group.pid, signal.SIGTERM)
            self._gone.wait_for(lambda: not self._live, timeout=self.kill_grace)
            for group in list(self._live.values()):
                group.kill()
            self._gone.wait_for(lambda: not self._live, timeout=patience)


class StoppedError(Exception):
    """:meth:`ProcessGroups.start` after :meth:`ProcessGroups.stop_all` began."""


def run_group(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout: float | None = None,
    kill_grace: float = DEFAULT_KILL_GRACE,
) -> GroupExit:
    """Run one command in its own process group (see the module docstring)."""
    return ProcessGroups(kill_grace=kill_grace).run_group(argv, cwd=cwd, timeout=timeout)


def _tail(handle: IO[bytes]) -> str:
    try:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - _OUTPUT_TAIL))
        data = handle.read()
    except OSError:
        return ""
    return _ANSI_ESCAPE.sub("", data.decode("utf-8", "replace"))


def _await_exit(proc: subprocess.Popen[bytes]) -> None:
    """Block until the process exits, without reaping it (see the module docstring)."""
    waitid = getattr(os, "waitid", None)
    if waitid is None:  # no waitid: reaping here is the best that can be done
        proc.wait()
        return
    with contextlib.suppress(ChildProcessError):
        waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM (a cancelled CI job) like Ctrl-C, so groups are stopped, not orphaned."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def ignoring_interrupts() -> Iterator[None]:
    """A second Ctrl-C must not cut the clean-up of the first one short."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
