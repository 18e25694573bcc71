"""One sandbox's conversation with its runner: ready, the job, done, and what came of it.

Place in the flow: every real sandbox is a :class:`RunnerSandbox`, whether it
is a host process tree (``process.py``: bwrap, local) or a container
(``docker.py``); they differ only in how bytes reach the runner and how the
sandbox is killed. The conversation is the same:

1. the runner imports its profile and writes a ``ready`` frame
   (:meth:`RunnerSandbox.wait_ready`; a warm pool waits for it ahead of time);
2. :meth:`RunnerSandbox.run` leases cores (``cpus.py``), sends the job as one
   JSON line and starts the wall clock;
3. the runner's ``done`` frame ends the run, and the sandbox is destroyed
   behind the grading (``teardown.py``). A run that never says ``done`` is
   ended by the wall clock, the output cap or the sandbox dying; then the
   sandbox is waited for, so that its exit status and the cause (the memory
   limit, a kill from outside) can be told.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
from abc import abstractmethod
from typing import Any

from sandbox import cpus
from sandbox.backend import STOP_POLL_SECONDS, FrameWatcher, RunOutcome, Sandbox, SandboxLimits, SandboxStartError
from sandbox.errors import SandboxNotReady
from sandbox.runner.wire import EXIT_NO_JOB
from sandbox.stream import StreamBuffer
from sandbox.teardown import destroy_soon

log = logging.getLogger(__name__)

# The stderr of a sandbox is for operators; keep only its end.
STDERR_TAIL_BYTES = 16 * 1024


class RunnerSandbox(Sandbox):
    """A started sandbox whose runner speaks frames on its stdout; subclasses give the transport.

    A subclass sets :attr:`stream` and :attr:`pump` (the thread that fills
    it) as it starts the sandbox, and implements the hooks below.
    """

    # What the sandbox is called in messages ("the container did not become ready").
    noun = "sandbox"
    # Whether the runner may kill every process it can see after each probe:
    # only where it sees nothing but its own sandbox (a pid namespace).
    sweep_strays = True

    stream: StreamBuffer
    pump: threading.Thread

    def __init__(self, profile: str, limits: SandboxLimits) -> None:
        self.profile = profile
        self.limits = limits
        self.ready: dict[str, Any] | None = None
        self._killed_by_us = False

    # -- the transport's part
    @abstractmethod
    def send_job(self, line: bytes, *, more: bool = False) -> None:
        """Give the runner a job line, the last one unless ``more``; OSError if the runner is gone."""

    def process_snapshot(self) -> str:
        """One line per process of the sandbox (pid, state, what it waits in, command), for the log; "" where unseen."""
        return ""

    @abstractmethod
    def kill_all(self) -> None:
        """SIGKILL everything in the sandbox at once; harmless if it has already stopped."""

    @abstractmethod
    def wait_stopped(self) -> int | None:
        """After a run that never said "done": wait (a bounded time) for the sandbox to stop; its exit status, None if unknown."""

    @abstractmethod
    def stderr_text(self) -> str:
        """The end of the sandbox's stderr, for operators."""

    def oom_killed(self, done: bool) -> bool:
        """Whether the memory limit killed the runner itself (a probe killed by it is the runner's to report)."""
        return False

    def killed_from_outside(self, exit_code: int | None) -> bool:
        """For a run that ended without "done", not by our kill nor the memory limit: whether something outside killed it."""
        return False

    def stream_ended(self) -> bool:
        return self.stream.eof.is_set()

    def outlives_its_stream(self) -> bool:
        """After the stream ended without "done": whether the sandbox still runs, so the stream was lost, not ended.

        The runner's output is its stream: when the runner dies, the sandbox
        stops with it. A sandbox still running after its stream ended lost the
        stream on the way (a launcher or engine restart cut an attach): the
        platform's failure, which the candidate's code cannot cause.
        """
        return False

    def job_limits(self) -> dict[str, Any]:
        """Limits the runner must enforce itself because the backend cannot."""
        return {}

    def widen(self, cores: int) -> bool:
        """Let the sandbox use ``cores`` cores (its CPU quota) and as many times its process limit, for probes side by side.

        False where the backend cannot change them on a running sandbox: its
        probes then run one at a time. The sandbox is destroyed after its
        job, so nothing narrows it again.
        """
        return False

    # -- the conversation
    def kill(self) -> None:
        """Kill the sandbox on purpose (the wall clock, the output cap, destroy): not a kill from outside."""
        self._killed_by_us = True
        self.kill_all()

    def wait_ready(self) -> dict[str, Any]:
        if self.ready is not None:
            return self.ready
        header = self.stream.wait_for_first_frame(self.limits.startup_seconds)
        if not header or header.get("type") != "ready":
            # Still running with nothing said: it hung (seen once in hundreds of
            # starts on a loaded host). What its processes wait on is the only
            # clue to why, so it goes into the log before they are killed.
            hung = header is None and not self.stream.eof.is_set()
            snapshot = self.process_snapshot() if hung else ""
            tail = self.stderr_text()
            self.destroy()
            log.warning(
                "sandbox never became ready",
                extra={"event": "sandbox.start_failed", "profile": self.profile, "hung": hung, "processes": snapshot, **self.log_fields()},
            )
            if hung:
                raise SandboxNotReady(f"the {self.noun} did not become ready in {self.limits.startup_seconds:g} s: {tail[-2000:] or 'no output'}")
            raise SandboxStartError(f"the {self.noun} did not become ready: {tail[-2000:] or 'no output'}")
        self.ready = header
        log.info("sandbox ready", extra={"event": "sandbox.ready", "profile": self.profile, **self.log_fields()})
        return header

    def run(self, job: dict[str, Any], on_frame: FrameWatcher | None = None, stop: threading.Event | None = None) -> RunOutcome:
        return self.run_series([job], on_frame, stop)[0]

    def run_series(
        self, jobs: list[dict[str, Any]], on_frame: FrameWatcher | None = None, stop: threading.Event | None = None
    ) -> list[RunOutcome]:
        """Run ``jobs`` one after another in this sandbox, then destroy it; one outcome per job that ran.

        For trusted code only (see :meth:`Sandbox.run_series`). Each job has
        the wall clock to itself, from its line to its ``done`` frame; its
        outcome holds the ``ready`` frame and its own frames, as if it had had
        the sandbox alone. A job that never says ``done`` ends the series.
        """
        if not jobs:
            raise ValueError("run_series needs at least one job")
        cores = cpus.CpuLease([], [])
        outcomes: list[RunOutcome] = []
        try:
            self.wait_ready()
            cores, at_once = self._lease(jobs)
            ready_end = self.stream.end_of("ready") or 0
            start = 0
            for position, job in enumerate(jobs):
                more = position + 1 < len(jobs)
                line = {
                    **job,
                    "sweep_strays": self.sweep_strays,
                    "limits": {**job.get("limits", {}), **self.job_limits()},
                    "cpus": cores.cpus,
                    "probes_at_once": at_once,
                    # Only the trusted side says so: the runner then waits for
                    # another line instead of ending after this job's "done".
                    "another_follows": more,
                }
                outcome, end = self._run_one(line, position + 1, more=more, on_frame=on_frame, stop=stop)
                head = b"" if position == 0 else bytes(self.stream.buffer[:ready_end])
                stream = head + bytes(self.stream.buffer[start:end])
                outcomes.append(dataclasses.replace(outcome, stream=stream))
                if end is None or outcome.stream_overflow:
                    break
                start = end
            return outcomes
        finally:
            cores.release()
            destroy_soon(self)

    def _lease(self, jobs: list[dict[str, Any]]) -> tuple[cpus.CpuLease, int]:
        """The cores for ``jobs`` and how many probes run side by side on them.

        The job's own share first, as always; then, for a job with more
        than one probe, spare cores that no other job holds, up to
        ``SANDBOX_PROBES_AT_ONCE``. With spares the sandbox is widened to
        them (quota, process limit); a backend that cannot gives them back.
        """
        probes = max((len(job.get("probes_list") or ()) for job in jobs), default=0)
        base = cpus.cores_for(self.limits.cpus)
        # The runner runs a job's first probe alone (the work the others share,
        # such as a build, happens there), so only the rest can go side by side.
        spare = max(0, min(cpus.probes_at_once_limit(), probes - 1) - base)
        cores = cpus.lease(self.limits.cpus, spare=spare)
        if len(cores.cpus) <= base:
            return cores, 1
        if self.widen(len(cores.cpus)):
            return cores, len(cores.cpus)
        cores.release()
        return cpus.lease(self.limits.cpus), 1

    def _run_one(
        self, job: dict[str, Any], count: int, *, more: bool, on_frame: FrameWatcher | None = None, stop: threading.Event | None = None
    ) -> tuple[RunOutcome, int | None]:
        """Send one job, the ``count``-th in this sandbox, and wait for its ``done``.

        Returns its outcome (the stream left empty) and where its frames end in
        the stream (None: it never said done). ``on_frame`` sees the job's
        frames as they arrive (``_watch``).
        """
        seen = self.stream.frame_count()  # the runner says nothing between "ready" (or the last "done") and the next job
        t0 = time.monotonic()
        try:
            self.send_job(json.dumps(job).encode() + b"\n", more=more)
        except OSError:
            pass  # the runner died; the stream tells what it managed to say
        # The "done" frame, not the exit, ends a run: tearing down the
        # namespaces or the container costs time nobody needs to wait for.
        if on_frame is None and stop is None:
            done = self.stream.wait_for_done(self.limits.wall_seconds, count)
        else:
            done = self._watch(on_frame, seen, t0 + self.limits.wall_seconds, count, stop)
        cancelled = not done and stop is not None and stop.is_set()
        timed_out = not done and not cancelled and not self.stream.eof.is_set()
        stream_lost = not done and not timed_out and not cancelled and not self.stream.overflow and self.outlives_its_stream()
        if timed_out or cancelled or self.stream.overflow or stream_lost:
            self.kill()
        exit_code = None
        if not done:
            exit_code = self.wait_stopped()
            self.pump.join(5.0)
            # A runner that found its stdin closed before the job came never ran it: the stream was cut on the way.
            stream_lost = stream_lost or (not timed_out and not cancelled and exit_code == EXIT_NO_JOB)
        run_ms = int((time.monotonic() - t0) * 1000)
        oom_killed = self.oom_killed(done)
        killed_externally = stream_lost or (
            not done and not cancelled and not oom_killed and not self._killed_by_us and self.killed_from_outside(exit_code)
        )
        log.info(
            "sandbox run finished",
            extra={
                "event": "sandbox.finished", "profile": self.profile, **self.log_fields(), "done": done, "exit_code": exit_code,
                "timed_out": timed_out, "oom_killed": oom_killed, "killed_externally": killed_externally, "stream_lost": stream_lost,
                "cancelled": cancelled,
                "run_ms": run_ms,
                "job_in_sandbox": count,
            },
        )  # fmt: skip
        outcome = RunOutcome(
            stream=b"",
            stream_overflow=self.stream.overflow,
            exit_code=exit_code,
            timed_out=timed_out,
            oom_killed=oom_killed,
            stderr_tail=self.stderr_text(),
            run_ms=run_ms,
            killed_externally=killed_externally,
            stream_lost=stream_lost,
            cancelled=cancelled,
        )
        return outcome, self.stream.end_of("done", count) if done else None

    def _watch(self, on_frame: FrameWatcher | None, seen: int, deadline: float, count: int, stop: threading.Event | None = None) -> bool:
        """Wait for the ``count``-th ``done`` as ``wait_for_done`` does, giving ``on_frame`` each whole frame on the way.

        The watcher runs here, in the caller's thread, between frames: the
        runner goes on writing into the pipe meanwhile, and the wall clock is
        the same deadline. A watcher that raises is logged and dropped; it is
        a spectator (live progress), the run and its outcome do not depend on it.
        (An exception a signal raises while the watcher runs, such as Celery's
        soft time limit, is dropped with it; the run then ends by its own wall
        clock, which is shorter than the task's limits.) With ``stop``, the
        wait looks at it every ``STOP_POLL_SECONDS`` and ends (False) once it
        is set.
        """
        watcher: FrameWatcher | None = on_frame
        while True:
            now = time.monotonic()
            until = deadline if stop is None else min(deadline, now + STOP_POLL_SECONDS)
            if watcher is None:
                if self.stream.wait_for_done(max(until - now, 0.0), count):
                    return True
            else:
                frames = self.stream.frames_after(seen, max(until - now, 0.0))
                seen += len(frames)
                for header, blob in frames:
                    if header is None:
                        watcher = None  # not JSON: the grader's decoding stops there too
                        break
                    try:
                        watcher(header, blob)
                    except Exception:
                        log.exception("a frame watcher failed; the run goes on without it", extra={"event": "sandbox.watcher_failed"})
                        watcher = None
                        break
                if self.stream.end_of("done", count) is not None:
                    return True
            if stop is not None and stop.is_set():
                return False  # cancelled
            if watcher is not None and frames:
                continue
            if self.stream.eof.is_set() or time.monotonic() >= deadline:
                return False  # EOF or the wall clock, before "done"
