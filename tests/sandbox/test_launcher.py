"""The sandbox launcher (sandbox/launcher.py, launcher_policy.py): the worker grades through it, nothing else gets through.

The policy tests take the create body the Docker SDK builds from
DockerSandbox's own options and break one hardening setting at a time. The
engine tests run a real launcher on a temporary socket in front of the real
engine, grade a submission through it with the unchanged docker backend, and
try, through the same socket, what a compromised worker would.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandbox import SandboxLimits
from sandbox.labels import LABEL, LABEL_PROFILE, LABEL_WORKER
from sandbox.launcher import LauncherServer
from sandbox.launcher_policy import Policy, check_create, decide
from sandbox.seccomp import docker_security_options
from tests.helpers import add_numbers, real_backends

IMAGE = "mlprep-sandbox:test"
SECURITY = docker_security_options()
POLICY = Policy(image=IMAGE)


def sandbox_create_body(**host_changes: Any) -> dict[str, Any]:
    """What docker-py sends for DockerSandbox's options (sandbox/docker.py), with HostConfig changes."""
    import docker
    from docker.types import Ulimit

    api = docker.APIClient(version="1.41")
    host = api.create_host_config(
        network_mode="none", read_only=True, cap_drop=["ALL"], security_opt=docker_security_options(), init=True,
        tmpfs={"/tmp": "rw,exec,nosuid,nodev,size=256m,mode=1777", "/dev/shm": "rw,nosuid,nodev,size=64m"},
        pids_limit=128, mem_limit=1024**3, memswap_limit=1024**3, nano_cpus=10**9,
        ulimits=[Ulimit(name="core", soft=0, hard=0), Ulimit(name="nofile", soft=1024, hard=1024)],
        log_config={"type": "none", "config": {}},
    )  # fmt: skip
    host.update(host_changes)
    body = api.create_container_config(
        IMAGE, ["torch"], stdin_open=True, tty=False, detach=False, user="65534:65534",
        environment={"PATH": "/opt/venv/bin:/usr/bin:/bin", "HOME": "/tmp"},
        labels={LABEL: "1", LABEL_WORKER: "host:123", LABEL_PROFILE: "torch"}, host_config=host,
    )  # fmt: skip
    api.close()  # it built the body only; no connection is kept
    return json.loads(json.dumps(body))


def test_the_sandboxs_own_container_is_allowed() -> None:
    check_create(sandbox_create_body(), POLICY)
    assert decide("POST", "/v1.41/containers/create", json.dumps(sandbox_create_body()).encode(), POLICY).allowed


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"Privileged": True}, "Privileged"),
        ({"Binds": ["/:/host"]}, "Binds"),
        ({"Mounts": [{"Type": "bind", "Source": "/var/run/docker.sock", "Target": "/s"}]}, "Mounts"),
        ({"Devices": [{"PathOnHost": "/dev/kmsg"}]}, "Devices"),
        ({"CapAdd": ["SYS_ADMIN"]}, "CapAdd"),
        ({"PidMode": "host"}, "PidMode"),
        ({"UsernsMode": "host"}, "UsernsMode"),
        ({"NetworkMode": "host"}, "NetworkMode"),
        ({"ReadonlyRootfs": False}, "ReadonlyRootfs"),
        ({"CapDrop": []}, "CapDrop"),
        ({"SecurityOpt": ["no-new-privileges", "seccomp=unconfined"]}, "SecurityOpt"),
        ({"SecurityOpt": ["no-new-privileges"]}, "SecurityOpt"),  # the engine's default profile, which allows io_uring
        # Our profile with one call more: the launcher compares the whole profile, not its first lines.
        ({"SecurityOpt": [SECURITY[0], SECURITY[1].replace('"getpid",', '"getpid","io_uring_setup",')]}, "SecurityOpt"),
        ({"Memory": 64 * 1024**3, "MemorySwap": 64 * 1024**3}, "Memory"),
        ({"MemorySwap": -1}, "MemorySwap"),
        ({"PidsLimit": -1}, "PidsLimit"),
        ({"NanoCpus": 0}, "NanoCpus"),
        ({"Tmpfs": {"/tmp": "rw,exec,nosuid,nodev,size=256m", "/etc": "rw,nosuid,nodev,size=1m"}}, "/etc"),
        ({"Tmpfs": {"/tmp": "rw,exec,nosuid,nodev,size=256m", "/dev/shm": "rw,exec,nosuid,nodev,size=64m"}}, "/dev/shm"),
        ({"Tmpfs": {"/tmp": "rw,exec,nodev,size=256m"}}, "/tmp"),
        ({"Tmpfs": {"/tmp": "rw,exec,nosuid,nodev,size=100g"}}, "size"),
        ({"Ulimits": [{"Name": "core", "Soft": -1, "Hard": -1}]}, "core"),
        ({"Runtime": "runc-unsafe"}, "Runtime"),
        ({"Sysctls": {"kernel.unprivileged_userns_clone": "1"}}, "Sysctls"),
    ],
)
def test_a_container_with_any_hardening_undone_is_refused(change: dict[str, Any], named: str) -> None:
    decision = decide("POST", "/v1.41/containers/create", json.dumps(sandbox_create_body(**change)).encode(), POLICY)
    assert not decision.allowed and named in decision.reason


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"Image": "mlprep-debian:bookworm"}, "only the sandbox image"),
        ({"User": "0:0"}, "User"),
        ({"Cmd": ["sh", "-c", "id"]}, "Cmd"),
        ({"Entrypoint": ["/bin/sh"]}, "Entrypoint"),
        ({"Tty": True}, "Tty"),
        ({"Env": ["LD_PRELOAD=/tmp/x.so"]}, "LD_PRELOAD"),
        ({"Labels": {LABEL_WORKER: "x"}}, LABEL),
        ({"Labels": {LABEL: "1", "com.docker.compose.project": "x"}}, "com.docker.compose.project"),
        ({"Volumes": {"/data": {}}}, "Volumes"),
        ({"Shell": ["/bin/sh"]}, "Shell"),
    ],
)
def test_a_container_other_than_a_sandbox_is_refused(change: dict[str, Any], named: str) -> None:
    body = {**sandbox_create_body(), **change}
    decision = decide("POST", "/containers/create", json.dumps(body).encode(), POLICY)
    assert not decision.allowed and named in decision.reason


@pytest.mark.parametrize(
    ("method", "target", "named"),
    [
        ("POST", "/v1.41/containers/create?name=web", "name"),
        ("POST", "/v1.41/containers/abc/exec", "not an operation"),
        ("POST", "/v1.41/exec/abc/start", "not an operation"),
        ("POST", "/v1.41/images/create?fromImage=alpine", "not an operation"),
        ("POST", "/v1.41/build", "not an operation"),
        ("GET", "/v1.41/images/alpine:latest/json", "only the sandbox image"),
        ("POST", "/v1.41/volumes/create", "not an operation"),
        ("POST", "/v1.41/networks/create", "not an operation"),
        ("GET", "/v1.41/containers/json?all=1", "label"),
        ("GET", '/v1.41/containers/json?filters={"label":["com.docker.compose.project"]}', "label"),
        ("GET", "/v1.41/events", "exactly one container"),
        ("POST", "/v1.41/containers/abc/archive", "not an operation"),
        ("PUT", "/v1.41/containers/abc/archive?path=/tmp", "not an operation"),
        ("POST", "/v1.41/containers/abc/update", "update"),
        ("GET", "/v1.41/containers/abc/logs", "not an operation"),
    ],
)
def test_operations_the_sandbox_never_needs_are_refused(method: str, target: str, named: str) -> None:
    body = json.dumps({"CpuShares": 2}).encode() if target.endswith("/update") else b""
    decision = decide(method, target, body, POLICY)
    assert not decision.allowed and named in decision.reason


@pytest.mark.parametrize(
    ("body", "allowed", "named"),
    [
        ({"Memory": 256 * 1024 * 1024, "MemorySwap": 256 * 1024 * 1024}, True, ""),
        ({"NanoCpus": 2_000_000_000, "PidsLimit": 512}, True, ""),
        ({"NanoCpus": int(POLICY.max_cpus * 1e9) + 1, "PidsLimit": 512}, False, "NanoCpus"),
        ({"NanoCpus": 2_000_000_000, "PidsLimit": POLICY.max_pids + 1}, False, "PidsLimit"),
        ({"NanoCpus": 2_000_000_000}, False, "NanoCpus and PidsLimit"),
        ({"NanoCpus": 2_000_000_000, "PidsLimit": 512, "CpusetCpus": "0-63"}, False, "NanoCpus and PidsLimit"),
    ],
)
def test_an_update_changes_memory_or_cpus_and_processes_within_the_policy(body: dict[str, Any], allowed: bool, named: str) -> None:
    decision = decide("POST", "/v1.41/containers/abc/update", json.dumps(body).encode(), POLICY)
    assert decision.allowed is allowed and named in decision.reason


def test_operations_on_a_container_name_it_for_the_label_check() -> None:
    for method, target in [("POST", "/v1.41/containers/abc/kill"), ("DELETE", "/v1.41/containers/abc?v=False&link=False&force=True")]:
        decision = decide(method, target, b"", POLICY)
        assert decision.allowed and decision.container == "abc"
    attach = decide("POST", "/v1.41/containers/abc/attach?stdin=1&stdout=1&stderr=1&stream=1", b"", POLICY)
    assert attach.allowed and attach.upgrade and attach.container == "abc"
    events = decide("GET", '/v1.41/events?since=1&until=2&filters={"container":["abc"],"event":["kill"]}', b"", POLICY)
    assert events.allowed and events.container == "abc"


# --- Through a real launcher, in front of the real engine ----------------------------------------------

needs_docker = pytest.mark.skipif("docker" not in real_backends(), reason="no Docker engine on this machine (CI always has one)")


@pytest.fixture
def launcher(tmp_path: Path) -> Iterator[str]:
    from sandbox.image import image_tag

    listen = str(tmp_path / "launcher.sock")
    server = LauncherServer(listen, "/var/run/docker.sock", Policy(image=os.environ.get("SANDBOX_IMAGE") or image_tag()))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"unix://{listen}"
    finally:
        server.shutdown()
        server.server_close()


@needs_docker
def test_the_worker_grades_through_the_launcher_without_the_engines_socket(launcher: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from grader import grade_submission
    from sandbox.docker import DockerBackend

    monkeypatch.setenv("DOCKER_HOST", launcher)
    backend = DockerBackend()
    try:
        package = add_numbers()
        result = grade_submission(package, package.reference_code.encode(), public=False, backend=backend)
        assert result.verdict == "accepted", result.message
        wrong = grade_submission(package, b"def add(a, b):\n    return a - b\n", public=False, backend=backend)
        assert wrong.verdict == "wrong_answer"
    finally:
        backend.close()
        backend.client.close()  # a backend of the test's own: its connections are not left to GC


@needs_docker
def test_a_compromised_worker_gets_nothing_else_and_each_refusal_is_logged(launcher: str, caplog: pytest.LogCaptureFixture) -> None:
    import docker
    from docker.errors import APIError

    from sandbox.image import image_tag

    engine = docker.DockerClient(base_url="unix:///var/run/docker.sock", version="auto")
    via_launcher = docker.DockerClient(base_url=launcher, version="auto")
    # A container of the host's that is not a sandbox (stands for the web or postgres container).
    bystander = engine.containers.create(image_tag(), command=["python"], labels={"role": "bystander"})
    caplog.set_level(logging.WARNING, logger="sandbox.launcher")
    try:
        attempts = {
            "privileged": lambda: via_launcher.containers.create(image_tag(), command=["python"], privileged=True),
            "bind the host": lambda: via_launcher.containers.create(image_tag(), command=["python"], volumes={"/": {"bind": "/host"}}),
            "pull": lambda: via_launcher.images.pull("alpine", tag="latest"),
            "kill a bystander": lambda: via_launcher.api.kill(bystander.id),
            "remove a bystander": lambda: via_launcher.api.remove_container(bystander.id, force=True),
            "list everything": lambda: via_launcher.api.containers(all=True),
        }
        for what, attempt in attempts.items():
            with pytest.raises(APIError) as refused:
                attempt()
            assert "refused by the sandbox launcher" in str(refused.value), what
        bystander.reload()  # still there
        assert bystander.status == "created"

        # A sandbox the launcher allowed cannot be exec'd into, but can be killed and removed.
        options = sandbox_create_body()
        options.update(Image=image_tag(), Cmd=["python"], Labels={LABEL: "1", LABEL_PROFILE: "python"})
        url = via_launcher.api._url("/containers/create")
        created = via_launcher.api.post(url, data=json.dumps(options), headers={"Content-Type": "application/json"})
        assert created.status_code == 201, created.text
        sandbox_id = created.json()["Id"]
        with pytest.raises(APIError):
            via_launcher.api.exec_create(sandbox_id, ["sh"])
        via_launcher.api.remove_container(sandbox_id, force=True)
        assert not engine.containers.list(all=True, filters={"id": sandbox_id})
    finally:
        bystander.remove(force=True)
        engine.close()
        via_launcher.close()
    refusals = [r for r in caplog.records if getattr(r, "event", None) == "launcher.refused"]
    assert len(refusals) >= 7
    assert any(bystander.id in r.getMessage() and "not a sandbox" in r.getMessage() for r in refusals)


def test_the_policy_copy_is_not_shared() -> None:
    # check_create never changes the body it checks (the launcher forwards that body, written out again).
    body = sandbox_create_body()
    before = copy.deepcopy(body)
    check_create(body, POLICY)
    assert body == before


def _engine_runtimes() -> set[str]:
    try:
        import docker

        client = docker.DockerClient(base_url="unix:///var/run/docker.sock", version="auto", timeout=10)
        try:
            return set(client.info().get("Runtimes") or {})
        finally:
            client.close()
    except Exception:  # no engine: no runtime either
        return set()


@pytest.mark.skipif("runsc" not in _engine_runtimes(), reason="gVisor (runsc) is not registered with this Docker engine (README: Deploying)")
def test_a_submission_is_graded_under_gvisor_through_the_launcher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from grader import grade_submission
    from sandbox.docker import DockerBackend
    from sandbox.image import image_tag

    listen = str(tmp_path / "launcher.sock")
    server = LauncherServer(listen, "/var/run/docker.sock", Policy(image=image_tag(), runtimes=frozenset({"runsc"})))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("DOCKER_HOST", f"unix://{listen}")
    monkeypatch.setenv("SANDBOX_DOCKER_RUNTIME", "runsc")
    backend = DockerBackend()
    try:
        package = add_numbers()
        result = grade_submission(package, package.reference_code.encode(), public=False, backend=backend)
        assert result.verdict == "accepted", result.message
        # The container really ran under gVisor: its kernel is gVisor's, not the host's.
        sandbox = backend.start("python", SandboxLimits(wall_seconds=30, memory_mb=512))
        try:
            sandbox.wait_ready()
            assert sandbox.container.attrs["HostConfig"]["Runtime"] == "runsc"  # type: ignore[attr-defined]
        finally:
            sandbox.destroy()
    finally:
        backend.close()
        backend.client.close()  # a backend of the test's own: its connections are not left to GC
        server.shutdown()
        server.server_close()
