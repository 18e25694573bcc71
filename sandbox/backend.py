"""The sandbox interface every backend implements, and the process plumbing they share.

Place in the flow: the grader asks a :class:`Backend` to ``start`` a sandbox
for a runtime profile, then calls :meth:`Sandbox.run` exactly once with the
files of the job (the solution and one probe file) and the job itself. A
sandbox is never reused: ``run`` always ends by destroying it.

Starting and running are separate so that a warm pool can start sandboxes
ahead of time: a started sandbox has imported its profile's modules and is
blocked reading its job from stdin. The job carries the sources themselves,
so no host folder is shared with a sandbox.

What comes back is a :class:`RunOutcome`: the runner's raw stream (untrusted
bytes, decoded by the grader), whether the wall clock or the memory limit
ended it, and a tail of stderr for operators (never shown to candidates).
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import json
import logging
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox import cpus
from sandbox.errors import SandboxStartError as SandboxStartError  # re-exported: defined with the error tree
from sandbox.owners import owner_alive, owner_token

RUNNER_DIR = Path(__file__).resolve().parent / "runner"

log = logging.getLogger(__name__)

# The stderr of a sandbox is for operators; keep only its end.
STDERR_TAIL_BYTES = 16 * 1024


HOST_DIR_PREFIX = "mlprep-sbx-"


def sweep_orphan_host_dirs() -> int:
    """Remove sandbox scratch folders whose worker process is gone (killed before ``destroy``); how many."""
    removed = 0
    for folder in Path(tempfile.gettempdir()).glob(f"{HOST_DIR_PREFIX}*-*"):
        owner = folder.name[len(HOST_DIR_PREFIX) :].split("-", 1)[0]
        if owner_alive(owner) is not False:
            continue  # its worker lives, or the name is not one of ours
        shutil.rmtree(folder, ignore_errors=True)
        removed += 1
    return removed


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
    exit_code: int | None = None
    timed_out: bool = False
    oom_killed: bool = False
    stderr_tail: str = ""
    run_ms: int = 0
    # The sandbox was killed by a signal that neither the wall clock, the
    # output cap nor the candidate's code sent (an operator, the OOM killer of
    # the host, a dying engine): a platform failure, graded again.
    killed_externally: bool = False


class Sandbox(ABC):
    """One started sandbox, good for exactly one job."""

    profile: str
    limits: SandboxLimits

    @abstractmethod
    def run(self, job: dict[str, Any]) -> RunOutcome:
        """Send ``job`` (sources included), collect the stream, destroy."""

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


# How often a running backend looks again for what killed workers left. Its
# first look, at start, can come too early: the worker it replaces may still
# be exiting (a process tearing down gigabytes of torch takes a while).
SWEEP_INTERVAL_SECONDS = 300.0


class Backend(ABC):
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


_destroying: set[threading.Thread] = set()
_destroying_lock = threading.Lock()


def destroy_soon(sandbox: Sandbox) -> None:
    """Destroy ``sandbox`` on a thread of its own: the result is already in hand.

    The thread runs in a copy of the caller's context, so its log lines carry
    the same submission id as the grading that used the sandbox. It is a
    daemon (a stuck destroy must not hold the process forever), so a process
    that ends calls :func:`finish_destroys` first, or its last sandboxes'
    scratch folders and cgroups would outlive it.
    """
    context = contextvars.copy_context()

    def run() -> None:
        try:
            context.run(sandbox.destroy)
        finally:
            with _destroying_lock:
                _destroying.discard(threading.current_thread())

    thread = threading.Thread(target=run, name="sandbox-destroy", daemon=True)
    with _destroying_lock:
        _destroying.add(thread)
    thread.start()


def finish_destroys(timeout: float = 15.0) -> int:
    """Wait (up to ``timeout`` in all) for the destroys :func:`destroy_soon` started; return how many are left."""
    deadline = time.monotonic() + timeout
    with _destroying_lock:
        pending = list(_destroying)
    for thread in pending:
        thread.join(max(0.0, deadline - time.monotonic()))
    return sum(thread.is_alive() for thread in pending)


# Interpreter exit (the CLI, tests, a worker's main process); Celery's pool
# processes end without atexit and call it from worker_process_shutdown.
atexit.register(finish_destroys)


class StreamBuffer:
    """The runner's stdout as it arrives: a capped buffer that readers can wait on.

    A pump thread (one per backend transport) calls :meth:`add` and, at the
    end, :meth:`close`; the sandbox waits for the ``ready`` frame and, after the
    run, takes :attr:`data`. Past ``cap`` bytes it keeps nothing more and
    calls ``on_overflow`` (which kills the sandbox).
    """

    def __init__(self, cap: int, on_overflow: Callable[[], None] | None = None) -> None:
        self.buffer = bytearray()
        self.cap = cap
        self.overflow = False
        self.eof = threading.Event()
        self._changed = threading.Condition()
        self._on_overflow = on_overflow

    def add(self, chunk: bytes) -> bool:
        """Append a chunk; False once over the cap (the caller stops reading)."""
        with self._changed:
            room = self.cap - len(self.buffer)
            self.buffer += chunk[: max(room, 0)]
            if len(chunk) > room:
                self.overflow = True
            self._changed.notify_all()
        if self.overflow and self._on_overflow:
            self._on_overflow()
        return not self.overflow

    def close(self) -> None:
        with self._changed:
            self.eof.set()
            self._changed.notify_all()

    def _headers(self) -> list[dict[str, Any] | None]:
        """Headers of the complete frames so far (None for one that is not JSON); caller holds the lock."""
        headers: list[dict[str, Any] | None] = []
        at = 0
        data = self.buffer
        while len(data) - at >= 4:
            (size,) = struct.unpack(">I", bytes(data[at : at + 4]))
            if len(data) - at < 4 + size:
                break
            try:
                header = json.loads(bytes(data[at + 4 : at + 4 + size]))
            except ValueError:
                headers.append(None)
                break
            headers.append(header if isinstance(header, dict) else None)
            blob = header.get("blob_len", 0) if isinstance(header, dict) else 0
            at += 4 + size + (blob if isinstance(blob, int) and blob > 0 else 0)
        return headers

    def wait_for_first_frame(self, timeout: float) -> dict[str, Any] | None:
        """The first frame's header once it is complete, or None (EOF/timeout)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                headers = self._headers()
                if headers:
                    return headers[0]
                if self.eof.is_set():
                    return None
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._changed.wait(remaining)

    def wait_for_done(self, timeout: float) -> bool:
        """Whether a ``done`` frame arrived (True) before EOF or ``timeout`` (False).

        The runner's last word: once it is here the result is complete, and
        the sandbox can be torn down without waiting for its processes to exit.
        """
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                if any(h is not None and h.get("type") == "done" for h in self._headers()):
                    return True
                if self.eof.is_set():
                    return False
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._changed.wait(remaining)


def pump_fd(fd: int, stream: StreamBuffer) -> threading.Thread:
    """Read ``fd`` into ``stream`` on a daemon thread until EOF or overflow."""

    def pump() -> None:
        try:
            while True:
                try:
                    chunk = os.read(fd, 1 << 16)
                except OSError:
                    break
                if not chunk or not stream.add(chunk):
                    break
        finally:
            stream.close()

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    return thread


class ProcessSandbox(Sandbox):
    """A sandbox that is one host process tree with a runner speaking on stdio.

    Subclasses give the command line and where the job folder appears inside;
    this class owns the lifecycle: the job folder on the host, the readiness
    handshake, the wall clock, the output cap and the cleanup.
    """

    sweep_strays: bool = True
    # Whether a signal death of the launched process can only come from outside:
    # true where the candidate's code cannot see that process (bwrap's outer
    # process lives outside the sandbox's pid namespace); false for the local
    # backend, whose runner the candidate's code can kill itself.
    outside_kill_detectable: bool = False

    def __init__(self, profile: str, limits: SandboxLimits) -> None:
        self.profile = profile
        self.limits = limits
        # Host-side scratch of this sandbox (bwrap's /etc files, the local backend's tmp).
        # Named after this worker process, so that a successor can remove what a killed one left.
        self.host_dir = Path(tempfile.mkdtemp(prefix=f"{HOST_DIR_PREFIX}{owner_token()}-"))
        os.chmod(self.host_dir, 0o755)  # noqa: S103 - read by the sandbox user; holds nothing secret
        self._destroyed = False
        self.proc: subprocess.Popen[bytes] | None = None
        self.ready: dict[str, Any] | None = None
        self._killed_by_us = False

    # -- hooks for subclasses
    def command(self) -> list[str]:
        raise NotImplementedError

    def environment(self) -> dict[str, str] | None:
        return None

    def oom_killed(self) -> bool:
        return False

    def release_resources(self) -> None:
        """Backend-specific cleanup after the process tree is gone."""

    def job_limits(self) -> dict[str, Any]:
        """Limits the runner must enforce itself because the backend cannot."""
        return {}

    # -- lifecycle
    def launch(self) -> None:
        self._stderr_file = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(
                self.command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr_file,
                env=self.environment(),
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            self.destroy()
            raise SandboxStartError(f"could not start the sandbox: {exc}") from exc
        assert self.proc.stdout is not None
        self.stream = StreamBuffer(self.limits.stream_bytes, self._kill_tree)
        self._pump = pump_fd(self.proc.stdout.fileno(), self.stream)
        log.info("sandbox started", extra={"event": "sandbox.started", "profile": self.profile, "sandbox_pid": self.proc.pid})

    def wait_ready(self) -> dict[str, Any]:
        if self.ready is not None:
            return self.ready
        header = self.stream.wait_for_first_frame(self.limits.startup_seconds)
        if not header or header.get("type") != "ready":
            tail = self._stderr_tail()
            self.destroy()
            log.warning("sandbox never became ready", extra={"event": "sandbox.start_failed", "profile": self.profile})
            raise SandboxStartError(f"the sandbox did not become ready: {tail[-2000:] or 'no output'}")
        self.ready = header
        log.info("sandbox ready", extra={"event": "sandbox.ready", "profile": self.profile, "sandbox_pid": self.proc and self.proc.pid})
        return header

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and not self._destroyed

    def run(self, job: dict[str, Any]) -> RunOutcome:
        cores = cpus.CpuLease([], [])
        try:
            self.wait_ready()
            cores = cpus.lease(self.limits.cpus)
            job = {
                **job,
                "sweep_strays": self.sweep_strays,
                "limits": {**job.get("limits", {}), **self.job_limits()},
                "cpus": cores.cpus,
            }
            assert self.proc is not None and self.proc.stdin is not None
            t0 = time.monotonic()
            try:
                self.proc.stdin.write(json.dumps(job).encode() + b"\n")
                self.proc.stdin.close()
            except (BrokenPipeError, OSError):
                pass  # the runner died; the stream tells what it managed to say
            # The "done" frame, not the exit, ends a run: tearing down the
            # namespaces or the container costs tens of milliseconds nobody waits for.
            done = self.stream.wait_for_done(self.limits.wall_seconds)
            timed_out = not done and not self.stream.eof.is_set()
            if timed_out or self.stream.overflow:
                self._kill_tree()
            if not done:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(timeout=5)
                self._pump.join(5.0)
            run_ms = int((time.monotonic() - t0) * 1000)
            code = self.proc.returncode
            killed_externally = (
                self.outside_kill_detectable and not done and code is not None and code < 0 and not self._killed_by_us
            )
            outcome = RunOutcome(
                stream=bytes(self.stream.buffer),
                stream_overflow=self.stream.overflow,
                exit_code=code,
                timed_out=timed_out,
                oom_killed=self.oom_killed(),
                stderr_tail=self._stderr_tail(),
                run_ms=run_ms,
                killed_externally=killed_externally,
            )
            log.info(
                "sandbox run finished",
                extra={
                    "event": "sandbox.finished", "profile": self.profile, "sandbox_pid": self.proc.pid, "done": done,
                    "exit_code": code, "timed_out": timed_out, "killed_externally": killed_externally, "run_ms": run_ms,
                },
            )  # fmt: skip
            return outcome
        finally:
            cores.release()
            destroy_soon(self)

    def _stderr_tail(self) -> str:
        try:
            self._stderr_file.seek(0, os.SEEK_END)
            size = self._stderr_file.tell()
            self._stderr_file.seek(max(0, size - STDERR_TAIL_BYTES))
            return self._stderr_file.read().decode("utf-8", errors="replace")
        except (OSError, ValueError, AttributeError):
            return ""

    def _kill_tree(self) -> None:
        if self.proc is None:
            return
        self._killed_by_us = True
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def destroy(self) -> None:
        if self._destroyed:
            return
        self._destroyed = True
        if self.proc is not None:
            self._kill_tree()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            for stream in (self.proc.stdin, self.proc.stdout):
                try:
                    if stream:
                        stream.close()
                except OSError:
                    pass
        self.release_resources()
        shutil.rmtree(self.host_dir, ignore_errors=True)
        try:
            self._stderr_file.close()
        except AttributeError:
            pass
        log.info("sandbox destroyed", extra={"event": "sandbox.destroyed", "profile": self.profile, "sandbox_pid": self.proc and self.proc.pid})
