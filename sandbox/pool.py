"""Warm pools: sandboxes started ahead of time, one job each, refilled behind.

Place in the flow: :func:`sandbox.get_backend` wraps the configured backend
in a :class:`PooledBackend` when ``SANDBOX_POOL`` names sizes (for example
``python=1,torch=2,tensorflow=1``). ``start`` then hands out a sandbox that
has already imported its profile's modules and is blocked reading its job,
so a grading pays only for its probes; a background thread starts the
replacement. A sandbox is still never reused: the pool only moves its start
earlier. One that died while waiting is dropped and replaced, never handed
out; with the pool empty, ``start`` falls back to a cold start.

Pools are created lazily in the process that grades (after Celery forks its
pool processes: threads and sandboxes do not survive a fork), and each
sandbox is started with its profile's default limits; the job's own memory
and process limits are applied when it is taken (:meth:`Sandbox.apply_limits`).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import time
from collections import deque

from sandbox.backend import Backend, Sandbox, SandboxLimits, SandboxStartError
from sandbox.runner.profiles import PIDS_LIMIT, WARM_MEMORY_MB

log = logging.getLogger(__name__)


def parse_sizes(text: str) -> dict[str, int]:
    """``"python=1,torch=2"`` -> {"python": 1, "torch": 2}; ValueError names a bad part."""
    sizes: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, count = part.partition("=")
        if not sep or not count.strip().isdigit():
            raise ValueError(f"SANDBOX_POOL: expected profile=count, got {part!r}")
        if name.strip() not in PIDS_LIMIT:
            raise ValueError(f"SANDBOX_POOL: unknown profile {name.strip()!r}")
        sizes[name.strip()] = int(count)
    return sizes


class PooledBackend(Backend):
    def __init__(self, inner: Backend, sizes: dict[str, int]) -> None:
        super().__init__()
        self.inner = inner
        self.name = inner.name
        self.sizes = {p: n for p, n in sizes.items() if n > 0}
        self._ready: dict[str, deque[Sandbox]] = {p: deque() for p in self.sizes}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._pid = os.getpid()
        self._thread: threading.Thread | None = None
        self._in_flight: Sandbox | None = None  # being started by the refill thread
        self.stats = {"warm": 0, "cold": 0, "dead": 0, "start_failures": 0}
        # A worker that exits must not leave warm containers behind (bwrap's die
        # with their parent; containers do not). The stale sweep of the next
        # worker on this host catches what an abrupt exit still leaves.
        atexit.register(self.close)

    def default_limits(self, profile: str) -> SandboxLimits:
        return SandboxLimits(wall_seconds=60, memory_mb=WARM_MEMORY_MB.get(profile, 1024), pids=PIDS_LIMIT.get(profile, 128))

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive() or self._pid != os.getpid():
            self._pid = os.getpid()
            self._thread = threading.Thread(target=self._refill_loop, name="sandbox-pool", daemon=True)
            self._thread.start()

    def _refill_loop(self) -> None:
        while not self._closed:
            self._drop_ended()
            wanted = None
            with self._lock:
                for profile, size in self.sizes.items():
                    if len(self._ready[profile]) < size:
                        wanted = profile
                        break
            if wanted is None:
                self._wake.wait(5.0)
                self._wake.clear()
                continue
            try:
                sandbox = self.inner.start(wanted, self.default_limits(wanted))
                self._in_flight = sandbox
                sandbox.wait_ready()
            except SandboxStartError as exc:
                if self._closed:
                    break  # close() destroyed the sandbox being started: not a start failure
                self.stats["start_failures"] += 1
                log.warning("warm sandbox for %s failed to start: %s", wanted, exc)
                self._wake.wait(2.0)
                continue
            with self._lock:
                self._in_flight = None
                if self._closed:
                    sandbox.destroy()
                    return
                self._ready[wanted].append(sandbox)

    def _drop_ended(self) -> None:
        """Destroy warm sandboxes whose stream has ended, so the counts health reports are true and they are replaced now.

        A launcher or engine restart cuts every warm sandbox's attach at once;
        without this they sat in the pool, counted ready, until a grading took
        each and found it dead.
        """
        with self._lock:
            ended = [sandbox for queue in self._ready.values() for sandbox in queue if sandbox.stream_ended()]
            for profile, queue in self._ready.items():
                self._ready[profile] = deque(sandbox for sandbox in queue if sandbox not in ended)
        for sandbox in ended:
            self.stats["dead"] += 1
            log.warning("warm sandbox lost its stream; replaced", extra={"event": "sandbox.lost", **sandbox.log_fields()})
            sandbox.destroy()

    def start(self, profile: str, limits: SandboxLimits) -> Sandbox:
        if profile in self.sizes:
            self._ensure_thread()
            while True:
                with self._lock:
                    sandbox = self._ready[profile].popleft() if self._ready[profile] else None
                self._wake.set()
                if sandbox is None:
                    break
                if not sandbox.alive():
                    self.stats["dead"] += 1
                    sandbox.destroy()
                    continue
                try:
                    sandbox.apply_limits(limits)
                except SandboxStartError as exc:
                    log.warning("could not apply limits to a warm sandbox: %s", exc)
                    sandbox.destroy()
                    continue
                self.stats["warm"] += 1
                # Logged in the grading's context: ties this warm sandbox to its submission.
                log.info("warm sandbox taken", extra={"event": "sandbox.taken", "profile": profile, **sandbox.log_fields()})
                return sandbox
        self.stats["cold"] += 1
        return self.inner.start(profile, limits)

    def ready_counts(self) -> dict[str, int]:
        with self._lock:
            return {p: len(q) for p, q in self._ready.items()}

    def fill(self, timeout: float = 120.0) -> bool:
        """Block until every pool is full (for benchmarks and tests); True when it is."""
        self._ensure_thread()
        self._wake.set()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            counts = self.ready_counts()
            if all(counts[p] >= n for p, n in self.sizes.items()):
                return True
            time.sleep(0.05)
        return False

    def close(self) -> None:
        self._closed = True
        self._wake.set()
        in_flight = self._in_flight
        if in_flight is not None:
            with contextlib.suppress(Exception):
                in_flight.destroy()
        with self._lock:
            for queue in self._ready.values():
                while queue:
                    with contextlib.suppress(Exception):
                        queue.popleft().destroy()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread() and self._pid == os.getpid():
            # Let it finish what it was doing (destroying sandboxes whose stream ended; a start it was waiting on
            # was destroyed above) before the backend under it closes: its engine connections would outlive the client.
            thread.join(30.0)
        self.inner.close()

