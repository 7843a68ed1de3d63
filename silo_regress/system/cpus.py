"""How many CPUs this process may really use, and work done in a forked child.

``os.cpu_count()`` counts the machine's CPUs, not this process's: under
``taskset -c 0`` or in a container limited by a cgroup v2 quota (``cpu.max``), a
second process would only take turns with the first. A split pays only when the
CPUs are really there and idle, so :func:`split_workers` asks
:func:`available_cpus` and the load average.

One switch for every fork and thread, as pre-commit's ``PRE_COMMIT_NO_CONCURRENCY``:
``SILO_REGRESS_JOBS=1`` makes every command run in one process, serially. No forked
child scans runs or judges tasks (:func:`split_workers` says 1, and :class:`Forked`
does its work in the caller), and ``run`` starts one rollout at a time whatever its
``--jobs``. The results are the same; only the time differs. For debugging, profiling
and coverage, which do not follow a forked child. ``SILO_REGRESS_JOBS=N`` caps
processes and rollout threads at N.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from silo_regress.errors import InputError

T = TypeVar("T")
R = TypeVar("R")

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")
JOBS_VARIABLE = "SILO_REGRESS_JOBS"


def jobs_limit() -> int | None:
    """The most processes or threads a command may use at once, from ``SILO_REGRESS_JOBS``;
    None when it is not set. 1 means no fork and no thread pool (see the module's doc)."""
    text = os.environ.get(JOBS_VARIABLE, "").strip()
    if not text:
        return None
    limit = int(text) if text.isdigit() else 0
    if limit < 1:
        raise InputError(
            f"{JOBS_VARIABLE}={text!r} is not a whole number of 1 or more; "
            "set it to 1 to run without forks or threads, or unset it"
        )
    return limit


def capped_jobs(jobs: int) -> int:
    """``jobs`` threads or processes, at most ``SILO_REGRESS_JOBS`` of them; at least 1."""
    limit = jobs_limit()
    return max(1, jobs if limit is None else min(jobs, limit))


def parse_cpu_max(text: str) -> float | None:
    """The CPUs a cgroup v2 ``cpu.max`` (``"QUOTA PERIOD"``) allows; None for no limit.

    ``max 100000`` is no limit; so is anything unreadable: a quota that cannot
    be read limits nothing this process can know of.
    """
    parts = text.split()
    if len(parts) not in (1, 2) or parts[0] == "max":
        return None
    try:
        quota = int(parts[0])
        period = int(parts[1]) if len(parts) == 2 else 100_000
    except ValueError:
        return None
    if quota <= 0 or period <= 0:
        return None
    return quota / period


def cgroup_cpu_limit(
    *, cgroup_root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP
) -> float | None:
    """The tightest ``cpu.max`` quota from this process's cgroup up to the root (v2 only)."""
    try:
        lines = proc_cgroup.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    relative = next((line[3:] for line in lines if line.startswith("0::")), None)
    if relative is None:
        return None  # cgroup v1, or no cgroup at all
    limits = []
    directory = (cgroup_root / relative.lstrip("/")).resolve()
    root = cgroup_root.resolve()
    while True:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            limit = parse_cpu_max((directory / "cpu.max").read_text(encoding="utf-8"))
            if limit is not None:
                limits.append(limit)
        if directory == root or root not in directory.parents:
            break
        directory = directory.parent
    return min(limits) if limits else None


def available_cpus(*, cgroup_root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> int:
    """CPUs this process may run on (affinity), capped by its cgroup quota; at least 1."""
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity on this platform: one CPU is safe
        count = 1
    limit = cgroup_cpu_limit(cgroup_root=cgroup_root, proc_cgroup=proc_cgroup)
    if limit is not None:
        count = min(count, math.floor(limit))
    return max(count, 1)


def split_workers(
    count: int, *, minimum: int, cpus: int | None = None, load: float | None = None
) -> int:
    """1 or 2 processes for ``count`` items: two when a second CPU is really there.

    There means allowed (affinity, cgroup quota: ``cpus``) and idle: with the
    1-minute load average (``load``) above ``cpus - 0.5`` the other CPU is busy
    with other work, and a child only adds its own cost (measured on a shared
    2-CPU machine: a split check took 1.06-1.15x as long as an unsplit one).
    Below ``minimum`` items a child costs more than it saves. ``SILO_REGRESS_JOBS=1``
    says 1 always.
    """
    limit = jobs_limit()
    if count < minimum or limit == 1:
        return 1
    import threading  # a fork copies only the calling thread: split only when it is alone

    if threading.active_count() > 1:
        return 1
    cpus = available_cpus() if cpus is None else cpus
    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:  # no load average here: the CPUs may be busy, stay in one process
            return 1
    return 2 if cpus >= 2 and load <= cpus - 0.5 else 1


def in_halves(items: Sequence[T], work: Callable[[Sequence[T]], R], *, workers: int) -> list[R]:
    """``[work(items)]``, or with ``workers`` > 1 ``[work(first half), work(second half)]``,
    the second half computed in a forked child while this process does the first.

    The child's result comes back pickled (both sides are this program, in one
    version). When the child fails, its half is done here: the same answer, later.
    """
    if workers < 2 or len(items) < 2:
        return [work(items)]
    import pickle  # only a split pays for it

    half = len(items) // 2
    rest = items[half:]
    child = Forked(lambda: pickle.dumps(work(rest), protocol=pickle.HIGHEST_PROTOCOL))
    mine = work(items[:half])
    data = child.result()
    if data is not None:
        with contextlib.suppress(pickle.UnpicklingError, EOFError):
            theirs: R = pickle.loads(data)
            return [mine, theirs]
    return [mine, work(rest)]


class Forked:
    """``work()`` running in a forked child; :meth:`result` is its bytes, or None.

    None when the child could not be started or failed in any way: the caller
    then does the work itself, so a split can only change how fast a command is,
    never what it finds. With ``SILO_REGRESS_JOBS=1`` no child is started at all.
    """

    def __init__(self, work: Callable[[], bytes]) -> None:
        self._pid = 0
        self._read = -1
        if not hasattr(os, "fork") or jobs_limit() == 1:
            return
        try:
            read, write = os.pipe()
        except OSError:
            return
        try:
            pid = os.fork()
        except OSError:
            os.close(read)
            os.close(write)
            return
        if pid == 0:  # the child: do the work, write it, and leave without cleanup
            code = 1
            try:
                os.close(read)
                view = memoryview(work())
                while view:
                    view = view[os.write(write, view) :]
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        self._pid, self._read = pid, read

    def result(self) -> bytes | None:
        if not self._pid:
            return None
        chunks = []
        try:
            while chunk := os.read(self._read, 1 << 20):
                chunks.append(chunk)
        except OSError:
            chunks = []
        finally:
            os.close(self._read)
        try:
            _, status = os.waitpid(self._pid, 0)
        except ChildProcessError:
            return None
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            return None
        return b"".join(chunks)
