"""The docker backend's own duties: hardening settings and no container left behind."""

from __future__ import annotations

import os
import socket
from typing import Any

import pytest

from sandbox import SandboxLimits, get_backend
from sandbox.docker import LABEL, LABEL_WORKER, remove_stale_containers
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
        ids = {c.id for c in client.containers.list(all=True, filters={"label": LABEL})}
        assert stale.id not in ids
        assert alive.id in ids
    finally:
        alive.remove(force=True)
