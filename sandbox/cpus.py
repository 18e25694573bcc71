"""Which CPU cores a job runs on: one lease per running job, spread over the host's cores.

Place in the flow: a sandbox leases cores as it sends a job (``RunnerSandbox.run`` in
``session.py``, for every backend) and names them in the job; the in-sandbox runner pins
itself to them (``sched_setaffinity``) before it forks the probes, which inherit
the pin. The lease ends with the run. A warm sandbox holds no core while it waits.

Why pin at all: thread pools size themselves to the cores a process may run on
(TensorFlow's intra- and inter-op pools, IREE's task executor, LLVM's thread
pool inside ``iree-compile``). On a 64-core host an unpinned sandbox starts
dozens of threads per pool, all squeezed into its one-CPU quota (slower than
one thread), and can hit its pids limit, which kills the candidate's probe for
the size of the host. Pinned to as many cores as its CPU share, each pool
starts what the quota can run.

Why leases rather than a random core: two sandboxes pinned to one core share
it while another core idles. A lease is an ``flock`` on one file per core in a
folder of the host's temp dir, so every process of the host that grades (pool
processes, several Celery workers, a validation) sees the others' leases, and
a lease dies with the process that held it. When every core is leased (more
jobs than cores), a job takes the cores next in turn without a lock: the host
is oversubscribed, and the pin still bounds its thread pools.

``SANDBOX_PIN_CPUS=0`` turns pinning off (jobs then name no cores).
"""

from __future__ import annotations

import fcntl
import itertools
import math
import os
import tempfile
import threading
from pathlib import Path

LOCK_DIR = Path(tempfile.gettempdir()) / "mlprep-cpu-leases"

_turn = itertools.count()
_turn_lock = threading.Lock()


def pinning_enabled() -> bool:
    return os.environ.get("SANDBOX_PIN_CPUS", "1").strip() != "0"


def allowed_cpus() -> list[int]:
    """The cores this process may run on (its own affinity, which a container's cpuset already narrows)."""
    return sorted(os.sched_getaffinity(0))


class CpuLease:
    """Cores held for one job; ``cpus`` is empty when pinning is off. Release it when the run ends."""

    def __init__(self, cpus: list[int], fds: list[int]) -> None:
        self.cpus = cpus
        self._fds = fds

    def release(self) -> None:
        fds, self._fds = self._fds, []
        for fd in fds:
            os.close(fd)  # closing the file drops its flock

    def __enter__(self) -> CpuLease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _lock(cpu: int) -> int:
    """The locked lease file of ``cpu``, or -1 when another job holds it (OSError when there can be no locks here)."""
    fd = os.open(LOCK_DIR / f"{cpu}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)  # held elsewhere, or no locks here: either way this file is not ours
        if isinstance(exc, BlockingIOError):
            return -1
        raise
    return fd


def probes_at_once_limit() -> int:
    """``SANDBOX_PROBES_AT_ONCE``: the most probes of one job run side by side (default: every core; 1 turns it off)."""
    raw = os.environ.get("SANDBOX_PROBES_AT_ONCE", "").strip()
    if not raw:
        return len(allowed_cpus())
    try:
        return max(1, int(raw))
    except ValueError:
        raise ValueError(f"SANDBOX_PROBES_AT_ONCE must be a whole number of probes, not {raw!r}") from None


def cores_for(share: float) -> int:
    """How many cores a job with a CPU share of ``share`` is leased: at least one, a core for each started one."""
    return max(1, math.ceil(share))


def lease(share: float, spare: int = 0) -> CpuLease:
    """Lease as many cores as a CPU share of ``share`` needs (at least one), free ones first.

    ``spare``: up to that many more cores, but only free ones (their lock
    taken at once), for a job that can use them (probes side by side). On a
    busy host there are none, and the job gets what it always got.
    """
    if not pinning_enabled():
        return CpuLease([], [])
    cpus = allowed_cpus()
    want = min(len(cpus), cores_for(share))
    with _turn_lock:
        turn = next(_turn)
    # Start at a different core for each process and each job, so that leases
    # taken at the same moment by different processes rarely race for one file.
    start = (turn + os.getpid()) % len(cpus)
    order = cpus[start:] + cpus[:start]
    taken: list[int] = []
    fds: list[int] = []
    try:
        LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
        # The job's own cores, then spare ones (free ones only, never oversubscribed).
        for limit in (want, want + spare):
            for cpu in order:
                if len(taken) >= limit or (limit > want and len(taken) < want):  # full, or no spares for an oversubscribed job
                    break
                fd = -1 if cpu in taken else _lock(cpu)
                if fd >= 0:
                    taken.append(cpu)
                    fds.append(fd)
    except OSError:
        pass  # no lock folder (read-only tmp): pin without leases rather than not at all
    for cpu in order:  # oversubscribed: the next cores in turn, unlocked
        if len(taken) >= want:
            break
        if cpu not in taken:
            taken.append(cpu)
    return CpuLease(sorted(taken), fds)
