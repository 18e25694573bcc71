"""The docker backend: one hardened container per submission, through the Docker SDK.

Each sandbox is a container of the sandbox image (``sandbox/image.py``) with
no network, a read-only root file system, a size-capped tmpfs ``/tmp`` (the
only writable place: the runner writes the job's sources there), uid 65534,
every capability dropped, ``no-new-privileges``, the sandboxes' seccomp
allowlist (``seccomp.py``, the same policy bwrap installs), limits on pids, memory (swap
included, so no swap) and CPU, no core dumps, and an init process that reaps
orphans. stdin/stdout are attached through the engine's socket: the job goes
in on stdin, the runner's frames come back on stdout (demultiplexed from the
engine's 8-byte-header framing), stderr is kept as an operator's tail.

Containers carry labels naming the worker (host and owner token, see
``owners.py``) that started them; :func:`remove_stale_containers` runs as a
backend is created, every few minutes after and as it closes, and removes
those whose worker is gone, so nothing survives a crashed worker. An optional
OCI runtime (``SANDBOX_DOCKER_RUNTIME=runsc`` for gVisor) is passed through.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from datetime import datetime
from typing import Any

from sandbox import seccomp
from sandbox.backend import Backend, SandboxLimits, SandboxStartError
from sandbox.environment import SANDBOX_UID, sandbox_env
from sandbox.labels import LABEL, LABEL_PROFILE, LABEL_WORKER
from sandbox.owners import owner_alive, owner_token
from sandbox.session import STDERR_TAIL_BYTES, RunnerSandbox
from sandbox.stream import StreamBuffer

log = logging.getLogger(__name__)

# The engine's attach stream: frames of an 8-byte header (stream kind, 3 zero
# bytes, big-endian payload length) and the payload.
STDOUT, STDERR = 1, 2


def _worker_id() -> str:
    return f"{socket.gethostname()}:{owner_token()}"


# How long an exited sandbox container of another host's worker is left for its worker to read its exit state.
EXITED_GRACE_SECONDS = 600


def _exited_long_ago(container: Any, now: float) -> bool:
    """Whether ``container`` stopped (exited or dead) more than EXITED_GRACE_SECONDS ago."""
    state = container.attrs.get("State") or {}
    if state.get("Status") not in ("exited", "dead"):
        return False
    finished = str(state.get("FinishedAt") or "")
    try:
        when = datetime.fromisoformat(finished[:26].rstrip("Z") + "+00:00").timestamp() if finished else 0.0
    except ValueError:
        when = 0.0
    return when > 0 and now - when > EXITED_GRACE_SECONDS


def sandbox_containers(client: Any) -> list[Any]:
    """Every sandbox container, stopped ones included, each inspected on its own.

    docker-py's full listing inspects every container it lists and raises
    NotFound when one is removed in between (its own worker destroying it at
    the end of a grading): the sweep then failed for another worker's
    ordinary work. A container gone meanwhile is skipped.
    """
    import docker  # the engine's client, imported where the backend is used (as DockerBackend does)

    found = []
    for listed in client.containers.list(all=True, sparse=True, filters={"label": LABEL}):
        try:
            found.append(client.containers.get(listed.id))
        except docker.errors.NotFound:
            continue
    return found


def remove_stale_containers(client: Any) -> int:
    """Remove sandbox containers whose worker no longer runs.

    A worker on this host is looked up by its owner token. One on another host
    (a compose worker replaced by an upgrade gets a new hostname) cannot be:
    its sandboxes stop by themselves once its attach ends (StdinOnce, see
    DockerSandbox), and are removed here once they have been stopped for
    EXITED_GRACE_SECONDS, whoever started them.
    """
    removed = 0
    host = socket.gethostname()
    now = time.time()
    for container in sandbox_containers(client):
        owner = container.labels.get(LABEL_WORKER, "")
        owner_host, _, owner_process = owner.rpartition(":")
        if owner_host == host:
            if owner_alive(owner_process) is True:
                continue
        elif not _exited_long_ago(container, now):
            continue
        # Already gone, or being removed by the engine: either way not ours to fix.
        with contextlib.suppress(Exception):
            container.remove(force=True)
            removed += 1
    return removed


class DockerSandbox(RunnerSandbox):
    noun = "container"

    def __init__(self, backend: DockerBackend, profile: str, limits: SandboxLimits) -> None:
        super().__init__(profile, limits)
        self.backend = backend
        self._destroyed = False
        # Whole seconds for the engine's event filter; a second early so the start is surely inside.
        self._since = int(time.time()) - 1
        self.stream = StreamBuffer(limits.stream_bytes, self.kill)
        self.stderr_tail = bytearray()
        uid = f"{SANDBOX_UID}:{SANDBOX_UID}"
        options: dict[str, Any] = {
            "image": backend.image,
            "command": [profile],
            "stdin_open": True,
            "tty": False,
            # Not detached: docker-py then asks for StdinOnce, so the engine closes the runner's stdin when our one
            # attach ends (this worker exits or dies, the launcher restarts): the runner reads EOF and exits, and no
            # sandbox outlives the worker that could use it, whatever host that worker ran on (issue 28).
            "detach": False,
            "network_mode": "none",
            "read_only": True,
            # exec: compiled extensions (load_inline, inductor) are dlopen'ed from /tmp;
            # docker's tmpfs default is noexec. bwrap's /tmp allows it too.
            "tmpfs": {"/tmp": f"rw,exec,nosuid,nodev,size={limits.tmpfs_mb}m,mode=1777", "/dev/shm": "rw,nosuid,nodev,size=64m"},
            "user": uid,
            "cap_drop": ["ALL"],
            "security_opt": seccomp.docker_security_options(),  # our allowlist, not the engine's default (sandbox/seccomp.py)
            "pids_limit": limits.pids,
            "mem_limit": limits.memory_mb * 1024 * 1024,
            "memswap_limit": limits.memory_mb * 1024 * 1024,
            "nano_cpus": int(limits.cpus * 1e9),
            "ulimits": [_ulimit("core", 0), _ulimit("nofile", 1024)],
            "init": True,
            "environment": sandbox_env(PATH="/opt/venv/bin:/usr/bin:/bin"),
            "labels": {LABEL: "1", LABEL_WORKER: _worker_id(), LABEL_PROFILE: profile},
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
        self.pump = threading.Thread(target=self._demux, daemon=True)
        self.pump.start()
        log.info("sandbox started", extra={"event": "sandbox.started", "profile": self.profile, **self.log_fields()})

    def _demux(self) -> None:
        """Split the engine's multiplexed stream: stdout to the buffer, stderr to the tail."""
        try:
            pending = bytearray()
            while True:
                try:
                    chunk = self.sock.recv(1 << 16)
                except OSError:
                    break
                if not chunk:
                    break
                pending += chunk
                at = 0  # consume whole frames by offset, then drop them at once: each byte is copied once
                while len(pending) - at >= 8:
                    kind, size = pending[at], int.from_bytes(pending[at + 4 : at + 8], "big")
                    if len(pending) - at < 8 + size:
                        break
                    payload = bytes(pending[at + 8 : at + 8 + size])
                    at += 8 + size
                    if kind == STDOUT:
                        if not self.stream.add(payload):
                            return
                    elif kind == STDERR:
                        self.stderr_tail = (self.stderr_tail + payload)[-STDERR_TAIL_BYTES:]
                del pending[:at]
        finally:
            self.stream.close()

    def log_fields(self) -> dict[str, str | None]:
        container = getattr(self, "container", None)
        return {"container": container.short_id if container is not None else None}

    def apply_limits(self, limits: SandboxLimits) -> None:
        super().apply_limits(limits)
        self.stream.cap = limits.stream_bytes
        memory = limits.memory_mb * 1024 * 1024
        try:
            self.container.update(mem_limit=memory, memswap_limit=memory)
        except Exception as exc:  # the engine refused (usage above the new limit, or gone)
            raise SandboxStartError(f"could not apply the job's limits: {exc}") from exc

    def widen(self, cores: int) -> bool:
        # The engine's update takes NanoCpus and PidsLimit only through its API
        # (docker-py's update() has neither); the launcher allows these two alone.
        api = self.backend.client.api
        try:
            wider = {"NanoCpus": int(cores * 1e9), "PidsLimit": self.limits.pids * cores}
            response = api._post_json(api._url("/containers/{0}/update", self.container.id), data=wider)
            api._raise_for_status(response)
        except Exception as exc:  # noqa: BLE001 - refused (a runtime without updates, a launcher policy): run one at a time
            why = {"event": "sandbox.not_widened", "profile": self.profile, "error": str(exc)[:300], **self.log_fields()}
            log.info("sandbox not widened", extra=why)
            return False
        return True

    def alive(self) -> bool:
        # A running container whose attach was cut (a launcher or engine restart) can take no job: not alive.
        if self._destroyed or self.stream.eof.is_set():
            return False
        try:
            self.container.reload()
        except Exception:  # noqa: BLE001
            return False
        return bool(self.container.status == "running")

    def send_job(self, line: bytes, *, more: bool = False) -> None:
        # One line is the whole job; no half-close: the engine drops the
        # attach connection on SHUT_WR before delivering what was sent.
        self.sock.sendall(line)

    def wait_stopped(self) -> int | None:
        try:
            status = self.container.wait(timeout=30)
        except Exception:  # noqa: BLE001 - the engine's wait timed out, or the engine is gone: the status is unknown
            return None
        code = status.get("StatusCode") if isinstance(status, dict) else None
        return code if isinstance(code, int) else None

    def stderr_text(self) -> str:
        return self.stderr_tail.decode("utf-8", errors="replace")

    def oom_killed(self, done: bool) -> bool:
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

    def killed_from_outside(self, exit_code: int | None) -> bool:
        """Whether someone asked the engine to kill or stop this container (``docker kill/stop/rm -f``).

        The candidate can kill the runner (same uid) but not through the
        engine: the engine records a ``kill`` event only for requests made to
        its API. Ours are excluded by the caller (``kill`` marks them), so
        such an event means an operator, an orchestrator or a host shutting down.
        """
        try:
            events = self.backend.client.events(
                since=self._since, until=int(time.time()) + 1, decode=True, filters={"container": self.container.id, "event": "kill"}
            )
            return any(True for _ in events)
        except Exception:  # noqa: BLE001 - the engine cannot say: blame nobody, grade what came back
            return False

    def outlives_its_stream(self) -> bool:
        # A kill through the engine also ends the stream, and the container may take a moment to stop (on a loaded
        # host, seconds): that is a kill from outside, said as such, not a lost stream.
        if self.killed_from_outside(None):
            return False
        # docker-init stops the container once the runner exits; give it a moment to, then ask the engine.
        deadline = time.monotonic() + 3.0
        while True:
            try:
                self.container.reload()
            except Exception:  # noqa: BLE001 - gone, or the engine cannot say: not provably lost
                return False
            if self.container.status != "running":
                return False
            if time.monotonic() >= deadline:
                return True
            time.sleep(0.2)

    def kill_all(self) -> None:
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
            log.info("sandbox destroyed", extra={"event": "sandbox.destroyed", "profile": self.profile, **self.log_fields()})


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
        except Exception as exc:  # no engine, no socket, no permission
            raise SandboxStartError(f"the Docker engine is not reachable: {exc}") from exc
        try:
            self.client.ping()
        except Exception as exc:
            self.client.close()
            raise SandboxStartError(f"the Docker engine is not reachable: {exc}") from exc
        from sandbox.image import image_tag

        self.image = os.environ.get("SANDBOX_IMAGE") or image_tag()
        try:
            self.client.images.get(self.image)
        except Exception as exc:
            self.client.close()  # a backend that never started keeps no connection to the engine
            raise SandboxStartError(f"the sandbox image {self.image} is missing: run `make sandbox-image`") from exc
        self.runtime = os.environ.get("SANDBOX_DOCKER_RUNTIME") or None
        self.sweep()

    def sweep_orphans(self) -> int:
        return remove_stale_containers(self.client)

    def start(self, profile: str, limits: SandboxLimits) -> DockerSandbox:
        self.sweep_if_due()
        return DockerSandbox(self, profile, limits)
