"""The docker backend: one hardened container per submission, through the Docker SDK.

Each sandbox is a container of the sandbox image (``sandbox/image.py``) with
no network, a read-only root file system, a size-capped tmpfs ``/tmp`` (the
only writable place: the runner writes the job's sources there), uid 65534,
every capability dropped, ``no-new-privileges``, limits on pids, memory (swap
included, so no swap) and CPU, no core dumps, and an init process that reaps
orphans. stdin/stdout are attached through the engine's socket: the job goes
in on stdin, the runner's frames come back on stdout (demultiplexed from the
engine's 8-byte-header framing), stderr is kept as an operator's tail.

Containers carry labels naming the worker (host and pid) that started them;
:func:`remove_stale_containers` runs when a backend is created and removes
those whose worker is gone, so nothing survives a crashed worker. An optional
OCI runtime (``SANDBOX_DOCKER_RUNTIME=runsc`` for gVisor) is passed through.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import threading
import time
from typing import Any

from sandbox import cpus
from sandbox.backend import Backend, RunOutcome, Sandbox, SandboxLimits, SandboxStartError, StreamBuffer, destroy_soon
from sandbox.bwrap import BASE_ENV, PASSTHROUGH_ENV
from sandbox.owners import owner_alive, owner_token

LABEL = "mlprep.sandbox"
LABEL_WORKER = "mlprep.worker"
STDERR_TAIL_BYTES = 16 * 1024


def _worker_id() -> str:
    return f"{socket.gethostname()}:{owner_token()}"


def remove_stale_containers(client: Any) -> int:
    """Remove sandbox containers whose worker (on this host) no longer runs."""
    removed = 0
    host = socket.gethostname()
    for container in client.containers.list(all=True, filters={"label": LABEL}):
        owner = container.labels.get(LABEL_WORKER, "")
        owner_host, _, owner_process = owner.rpartition(":")
        if owner_host != host or owner_alive(owner_process) is True:
            continue
        # Already gone, or being removed by the engine: either way not ours to fix.
        with contextlib.suppress(Exception):
            container.remove(force=True)
            removed += 1
    return removed


class DockerSandbox(Sandbox):
    def __init__(self, backend: DockerBackend, profile: str, limits: SandboxLimits) -> None:
        self.profile = profile
        self.limits = limits
        self.backend = backend
        self._destroyed = False
        self._killed_by_us = False
        # Whole seconds for the engine's event filter; a second early so the start is surely inside.
        self._since = int(time.time()) - 1
        self.ready: dict[str, Any] | None = None
        self.stream = StreamBuffer(limits.stream_bytes, self._kill)
        self.stderr_tail = bytearray()
        env = dict(BASE_ENV)
        env.update({k: os.environ[k] for k in PASSTHROUGH_ENV if k in os.environ})
        env["PATH"] = "/opt/venv/bin:/usr/bin:/bin"
        options: dict[str, Any] = {
            "image": backend.image,
            "command": [profile],
            "stdin_open": True,
            "tty": False,
            "detach": True,
            "network_mode": "none",
            "read_only": True,
            # exec: compiled extensions (load_inline, inductor) are dlopen'ed from /tmp;
            # docker's tmpfs default is noexec. bwrap's /tmp allows it too.
            "tmpfs": {"/tmp": f"rw,exec,nosuid,nodev,size={limits.tmpfs_mb}m,mode=1777", "/dev/shm": "rw,nosuid,nodev,size=64m"},
            "user": "65534:65534",
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "pids_limit": limits.pids,
            "mem_limit": limits.memory_mb * 1024 * 1024,
            "memswap_limit": limits.memory_mb * 1024 * 1024,
            "nano_cpus": int(limits.cpus * 1e9),
            "ulimits": [_ulimit("core", 0), _ulimit("nofile", 1024)],
            "init": True,
            "environment": env,
            "labels": {LABEL: "1", LABEL_WORKER: _worker_id(), "mlprep.profile": profile},
            "log_config": {"type": "none", "config": {}},
        }
        if backend.runtime:
            options["runtime"] = backend.runtime
        try:
            self.container = backend.client.containers.create(**options)
            self._attached = self.container.attach_socket(params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
            self.sock: socket.socket = getattr(self._attached, "_sock", self._attached)
            self.container.start()
        except Exception as exc:  # any engine failure is a platform failure
            self.destroy()
            raise SandboxStartError(f"could not start the container: {exc}") from exc
        self._pump = threading.Thread(target=self._demux, daemon=True)
        self._pump.start()

    def _demux(self) -> None:
        """Split the engine's multiplexed stream: stdout to the buffer, stderr to the tail."""
        try:
            pending = b""
            while True:
                try:
                    chunk = self.sock.recv(1 << 16)
                except OSError:
                    break
                if not chunk:
                    break
                pending += chunk
                while len(pending) >= 8:
                    kind, size = pending[0], struct.unpack(">I", pending[4:8])[0]
                    if len(pending) < 8 + size:
                        break
                    payload, pending = pending[8 : 8 + size], pending[8 + size :]
                    if kind == 1:
                        if not self.stream.add(payload):
                            return
                    elif kind == 2:
                        self.stderr_tail = (self.stderr_tail + payload)[-STDERR_TAIL_BYTES:]
        finally:
            self.stream.close()

    def wait_ready(self) -> dict[str, Any]:
        if self.ready is None:
            header = self.stream.wait_for_first_frame(self.limits.startup_seconds)
            if not header or header.get("type") != "ready":
                tail = self.stderr_tail.decode("utf-8", errors="replace")
                self.destroy()
                raise SandboxStartError(f"the container did not become ready: {tail[-2000:] or 'no output'}")
            self.ready = header
        return self.ready

    def apply_limits(self, limits: SandboxLimits) -> None:
        super().apply_limits(limits)
        self.stream.cap = limits.stream_bytes
        memory = limits.memory_mb * 1024 * 1024
        try:
            self.container.update(mem_limit=memory, memswap_limit=memory)
        except Exception as exc:  # the engine refused (usage above the new limit, or gone)
            raise SandboxStartError(f"could not apply the job's limits: {exc}") from exc

    def alive(self) -> bool:
        if self._destroyed:
            return False
        try:
            self.container.reload()
        except Exception:  # noqa: BLE001
            return False
        return bool(self.container.status == "running")

    def run(self, job: dict[str, Any]) -> RunOutcome:
        cores = cpus.CpuLease([], [])
        try:
            self.wait_ready()
            cores = cpus.lease(self.limits.cpus)
            job = {**job, "sweep_strays": True, "cpus": cores.cpus}
            t0 = time.monotonic()
            try:
                # One line is the whole job; no half-close: the engine drops the
                # attach connection on SHUT_WR before delivering what was sent.
                self.sock.sendall(json.dumps(job).encode() + b"\n")
            except OSError:
                pass  # the runner died; the stream says how far it got
            # The "done" frame ends the run; removing the container happens behind.
            done = self.stream.wait_for_done(self.limits.wall_seconds)
            timed_out = not done and not self.stream.eof.is_set()
            if timed_out or self.stream.overflow:
                self._kill()
            if not done:
                with contextlib.suppress(Exception):  # the engine's wait timed out: it is killed anyway
                    self.container.wait(timeout=30)
                self._pump.join(5.0)
            run_ms = int((time.monotonic() - t0) * 1000)
            oom_killed = self._oom_killed(done)
            return RunOutcome(
                stream=bytes(self.stream.buffer),
                stream_overflow=self.stream.overflow,
                exit_code=None,
                timed_out=timed_out,
                oom_killed=oom_killed,
                stderr_tail=self.stderr_tail.decode("utf-8", errors="replace"),
                run_ms=run_ms,
                killed_externally=not done and not oom_killed and not self._killed_by_us and self._kill_requested(),
            )
        finally:
            cores.release()
            destroy_soon(self)

    def _oom_killed(self, done: bool) -> bool:
        """Whether the memory limit killed the runner itself.

        A probe killed by it is reported by the runner, which reads its own
        cgroup's OOM count; only a run that never said "done" needs the
        engine's word, once the container has stopped.
        """
        if done:
            return False
        try:
            self.container.reload()
        except Exception:  # noqa: BLE001 - the container is already gone
            return False
        return bool(self.container.attrs.get("State", {}).get("OOMKilled"))

    def _kill_requested(self) -> bool:
        """Whether someone asked the engine to kill or stop this container (``docker kill/stop/rm -f``).

        The candidate can kill the runner (same uid) but not through the
        engine: the engine records a ``kill`` event only for requests made to
        its API. Ours are excluded by the caller (``_killed_by_us``), so such
        an event means an operator, an orchestrator or a host shutting down.
        """
        try:
            events = self.backend.client.events(
                since=self._since, until=int(time.time()) + 1, decode=True, filters={"container": self.container.id, "event": "kill"}
            )
            return any(True for _ in events)
        except Exception:  # noqa: BLE001 - the engine cannot say: blame nobody, grade what came back
            return False

    def _kill(self) -> None:
        self._killed_by_us = True
        with contextlib.suppress(Exception):  # already stopped
            self.container.kill()

    def destroy(self) -> None:
        if self._destroyed:
            return
        self._destroyed = True
        for stream in (getattr(self, "sock", None), getattr(self, "_attached", None)):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        container = getattr(self, "container", None)
        if container is not None:
            # Removed already, or the engine is gone: the stale sweep at the next start catches it.
            with contextlib.suppress(Exception):
                container.remove(force=True)


def _ulimit(name: str, value: int) -> Any:
    from docker.types import Ulimit

    return Ulimit(name=name, soft=value, hard=value)


class DockerBackend(Backend):
    name = "docker"

    def __init__(self) -> None:
        super().__init__()
        try:
            import docker

            self.client = docker.from_env(version="auto", timeout=120)
            self.client.ping()
        except Exception as exc:  # no engine, no socket, no permission
            raise SandboxStartError(f"the Docker engine is not reachable: {exc}") from exc
        from sandbox.image import image_tag

        self.image = os.environ.get("SANDBOX_IMAGE") or image_tag()
        try:
            self.client.images.get(self.image)
        except Exception as exc:
            raise SandboxStartError(f"the sandbox image {self.image} is missing: run `make sandbox-image`") from exc
        self.runtime = os.environ.get("SANDBOX_DOCKER_RUNTIME") or None
        self.sweep()

    def sweep_orphans(self) -> int:
        return remove_stale_containers(self.client)

    def start(self, profile: str, limits: SandboxLimits) -> DockerSandbox:
        self.sweep_if_due()
        return DockerSandbox(self, profile, limits)
