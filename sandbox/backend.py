"""The sandbox interface every backend implements.

Place in the flow: the grader asks a :class:`Backend` to ``start`` a sandbox
for a runtime profile, then calls :meth:`Sandbox.run` exactly once with the
job (the sources of the solution and of one probe file, the probes to run,
the limits). A sandbox is never reused: ``run`` always ends by destroying it.

Starting and running are separate so that a warm pool (``pool.py``) can start
sandboxes ahead of time: a started sandbox has imported its profile's modules
and is blocked reading its job from stdin. The job carries the sources
themselves, so no host folder is shared with a sandbox.

What comes back is a :class:`RunOutcome`: the runner's raw stream (untrusted
bytes, decoded by the grader), whether the wall clock or the memory limit
ended it, and a tail of stderr for operators (never shown to candidates).

The rest of the package, by job: ``session.py`` is the conversation with the
runner every real sandbox has (ready, job, done); ``process.py`` runs it as a
host process tree (``bwrap.py``, ``local.py``), ``docker.py`` as a container;
``stream.py`` reads the runner's frames as they arrive; ``teardown.py``
destroys used sandboxes behind the grading; ``environment.py`` is what every
sandbox is given; ``scratch.py``, ``cgroups.py`` and ``owners.py`` name and
sweep what dead workers left.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sandbox.errors import SandboxStartError as SandboxStartError  # re-exported: defined with the error tree

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SandboxLimits:
    """Limits of one sandbox; the wall clock starts when the job is sent."""

    wall_seconds: float
    memory_mb: int
    pids: int = 128
    cpus: float = 1.0
    tmpfs_mb: int = 256
    stream_bytes: int = 96 * 1024 * 1024
    startup_seconds: float = 90.0


@dataclass
class RunOutcome:
    stream: bytes
    stream_overflow: bool = False
    # How the sandbox ended, when the run waited for it to end (a run that
    # said "done" does not): a process's return code (negative: the signal
    # that killed it), a container's exit status (128 + signal for a signal).
    exit_code: int | None = None
    timed_out: bool = False
    oom_killed: bool = False
    stderr_tail: str = ""
    run_ms: int = 0
    # The sandbox was killed by a signal that neither the wall clock, the
    # output cap nor the candidate's code sent (an operator, the OOM killer of
    # the host, a dying engine): a platform failure, graded again.
    killed_externally: bool = False
    # The stream ended while the sandbox still ran (``outlives_its_stream``): lost on the way, graded again.
    stream_lost: bool = False
    # The caller's ``stop`` was set while the job ran: the sandbox was killed and the job has no result (a Cancel).
    cancelled: bool = False


#: How often a running job looks at its ``stop`` event (``Sandbox.run``).
STOP_POLL_SECONDS = 0.5

#: Sees each frame of a running job as it arrives: its header and its blob (None when it has none).
#: For a spectator of the run (the grader's live progress); what it does changes nothing in the run.
FrameWatcher = Callable[[dict[str, Any], bytes | None], None]


class Sandbox(ABC):
    """One started sandbox, good for exactly one job."""

    profile: str
    limits: SandboxLimits

    @abstractmethod
    def run(self, job: dict[str, Any], on_frame: FrameWatcher | None = None, stop: threading.Event | None = None) -> RunOutcome:
        """Send ``job`` (sources included), collect the stream, destroy.

        ``on_frame``, if given, is called in the caller's thread with each of
        the job's frames after ``ready``, in order, while the job still runs.
        ``stop``, if given and set while the job runs, ends it within about
        ``STOP_POLL_SECONDS``: the sandbox is killed and the outcome is
        ``cancelled`` (the candidate's Cancel).
        """

    def run_series(self, jobs: list[dict[str, Any]], on_frame: FrameWatcher | None = None) -> list[RunOutcome]:
        """Run several jobs one after another in this one sandbox, then destroy it; the outcomes of those that ran, in order.

        For trusted code only (a package's shipped solutions, the mutants of
        its reference): jobs in one sandbox share its files and processes
        between them, which candidates' submissions must never do. Each job
        still runs in the runner's freshly forked children, in a folder of its
        own. A job that does not finish ends the series: the caller runs the
        rest in a new sandbox. A sandbox that cannot keep its runner for a
        second job runs the first one only, which callers handle alike.
        """
        return [self.run(jobs[0], on_frame)]

    @abstractmethod
    def wait_ready(self) -> dict[str, Any]:
        """Block until the runner has imported its profile; SandboxStartError if it never does."""

    def apply_limits(self, limits: SandboxLimits) -> None:
        """Replace the limits a warm sandbox was started with by the job's own."""
        self.limits = limits

    @abstractmethod
    def destroy(self) -> None:
        """Kill everything in the sandbox and remove its traces; idempotent."""

    @abstractmethod
    def alive(self) -> bool:
        """Whether the sandbox is still running (a warm one may have died)."""

    def stream_ended(self) -> bool:
        """Whether its stream has already ended (the runner exited, or a launcher restart cut the attach).

        Such a sandbox can take no job. Unlike :meth:`alive`, this asks no
        engine: the pool calls it on every warm sandbox every few seconds.
        """
        return False

    def log_fields(self) -> dict[str, Any]:
        """What names this sandbox in log lines (its pid, its container)."""
        return {}


# How often a running backend looks again for what killed workers left. Its
# first look, at start, can come too early: the worker it replaces may still
# be exiting (a process tearing down gigabytes of torch takes a while).
SWEEP_INTERVAL_SECONDS = 300.0


class Backend(ABC):
    """Starts sandboxes of one kind, and sweeps what the sandboxes of dead workers left."""

    name: str

    def __init__(self) -> None:
        self._last_sweep: float | None = None
        self._sweep_lock = threading.Lock()

    @abstractmethod
    def start(self, profile: str, limits: SandboxLimits) -> Sandbox:
        """Start a sandbox for ``profile``; raise SandboxStartError on failure."""

    def close(self) -> None:
        """Release what the backend holds between sandboxes (a warm pool's sandboxes).

        A worker stopping cleanly also sweeps: what a dead one left goes too.
        """
        self.sweep()

    def sweep_orphans(self) -> int:
        """Remove what the sandboxes of dead workers left (scratch folders, cgroups, containers); how many."""
        return 0

    def sweep(self) -> int:
        """:meth:`sweep_orphans` now, unless another thread is at it."""
        if not self._sweep_lock.acquire(blocking=False):
            return 0
        try:
            self._last_sweep = time.monotonic()
            return self.sweep_orphans()
        except Exception:  # a failed sweep leaves leftovers for the next one; it must not fail a grading
            log.exception("sweeping the leftovers of dead workers failed", extra={"event": "sandbox.sweep_failed"})
            return 0
        finally:
            self._sweep_lock.release()

    def sweep_if_due(self) -> None:
        """Sweep if :data:`SWEEP_INTERVAL_SECONDS` have passed since the last sweep (backends call it as they start a sandbox)."""
        if self._last_sweep is None or time.monotonic() - self._last_sweep >= SWEEP_INTERVAL_SECONDS:
            self.sweep()
