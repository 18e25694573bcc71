"""The docker backend's own duties: hardening settings and no container left behind."""

from __future__ import annotations

import contextlib
import os
import socket
from typing import Any

import pytest

from sandbox import SandboxLimits, get_backend
from sandbox.docker import LABEL, LABEL_WORKER, remove_stale_containers
from sandbox.runner.wire import EXIT_NO_JOB
from tests.helpers import real_backends

pytestmark = pytest.mark.skipif("docker" not in real_backends(), reason="no Docker engine on this machine (CI always has one)")


@pytest.fixture
def client() -> Any:
    return get_backend("docker").client  # type: ignore[attr-defined]


def test_containers_are_hardened(client: Any) -> None:
    sandbox = get_backend("docker").start("python", SandboxLimits(wall_seconds=10, memory_mb=300, pids=50))
    try:
        sandbox.wait_ready()
        config = sandbox.container.attrs["HostConfig"]  # type: ignore[attr-defined]
        assert config["NetworkMode"] == "none"
        assert config["ReadonlyRootfs"] is True
        assert config["CapDrop"] == ["ALL"]
        assert "no-new-privileges" in config["SecurityOpt"]
        assert config["PidsLimit"] == 50
        assert config["Memory"] == config["MemorySwap"] == 300 * 1024 * 1024
        assert sandbox.container.attrs["Config"]["User"] == "65534:65534"  # type: ignore[attr-defined]
        assert "/tmp" in config["Tmpfs"]
    finally:
        sandbox.destroy()
    assert not client.containers.list(all=True, filters={"id": sandbox.container.id})  # type: ignore[attr-defined]


def test_stale_containers_of_a_dead_worker_are_removed(client: Any) -> None:
    from sandbox.image import image_tag

    dead_pid = 2**22 + 12345  # above pid_max's default range: no such process
    stale = client.containers.create(
        image_tag(), command=["python"], labels={LABEL: "1", LABEL_WORKER: f"{socket.gethostname()}:{dead_pid}"}
    )
    alive = client.containers.create(
        image_tag(), command=["python"], labels={LABEL: "1", LABEL_WORKER: f"{socket.gethostname()}:{os.getpid()}"}
    )
    try:
        removed = remove_stale_containers(client)
        assert removed >= 1
        ids = {c.id for c in client.containers.list(all=True, sparse=True, filters={"label": LABEL})}
        assert stale.id not in ids
        assert alive.id in ids
    finally:
        alive.remove(force=True)


def test_a_sandbox_stops_by_itself_when_its_workers_attach_ends(client: Any) -> None:
    # A worker that dies (or a launcher restart) drops the attach: the engine closes the runner's stdin (StdinOnce),
    # the waiting runner reads EOF and exits, so no warm sandbox outlives the worker that could use it.
    sandbox = get_backend("docker").start("python", SandboxLimits(wall_seconds=10, memory_mb=300, pids=50))
    try:
        sandbox.wait_ready()
        container = sandbox.container  # type: ignore[attr-defined]
        assert container.attrs["Config"]["StdinOnce"] is True
        sandbox.sock.shutdown(socket.SHUT_RDWR)  # type: ignore[attr-defined]  # the connection ends, as a dead worker's does
        assert container.wait(timeout=60)["StatusCode"] == EXIT_NO_JOB  # the runner says no job came
    finally:
        sandbox.destroy()


def test_stopped_sandboxes_of_another_hosts_worker_are_removed_after_a_grace(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from sandbox import docker as docker_backend
    from sandbox.image import image_tag

    # A compose worker replaced by an upgrade comes back under another hostname: its old sandboxes cannot be looked
    # up by owner token. A running one is left (its worker may live); a stopped one goes once the grace has passed.
    other = {LABEL: "1", LABEL_WORKER: f"another-host-{os.getpid()}:1.1"}
    stopped = client.containers.create(image_tag(), command=["python"], labels=other)
    running = client.containers.create(image_tag(), command=["python"], labels=other, stdin_open=True)
    try:
        stopped.start()
        assert stopped.wait(timeout=60)["StatusCode"] == EXIT_NO_JOB  # no stdin: the runner reads EOF at once
        running.start()
        remove_stale_containers(client)
        ids = {c.id for c in client.containers.list(all=True, sparse=True, filters={"label": LABEL})}
        assert {stopped.id, running.id} <= ids  # within the grace: its worker may still read its exit state
        monkeypatch.setattr(docker_backend, "EXITED_GRACE_SECONDS", 0)
        remove_stale_containers(client)
        ids = {c.id for c in client.containers.list(all=True, sparse=True, filters={"label": LABEL})}
        assert stopped.id not in ids and running.id in ids
    finally:
        for container in (stopped, running):
            with contextlib.suppress(Exception):
                container.remove(force=True)
