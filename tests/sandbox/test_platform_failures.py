"""Failures of the platform, not of the candidate: a sandbox killed from outside, cgroups left by a dead worker.

sandbox/process.py tells a bwrap sandbox killed from outside (its outer
process is out of the candidate's reach) from a runner the candidate killed;
sandbox/docker.py does the same for a container killed through the engine
(``docker kill``: an engine event the candidate cannot cause);
sandbox/cgroups.py removes the groups of workers that died without cleaning up.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from grader.errors import PlatformError
from sandbox import cgroups
from sandbox.docker import DockerSandbox
from sandbox.errors import SandboxStartError
from sandbox.process import ProcessSandbox
from sandbox.runner.wire import EXIT_NO_JOB
from sandbox.session import RunnerSandbox
from sandbox.teardown import finish_destroys
from tests.helpers import grade, patient_add_numbers, real_backends

HONEST = "import numpy as np\n\ndef add(a, b):\n    return np.add(a, b)\n"

# The first probe returns; every later one blocks until the sandbox is
# killed. Each probe runs in a fresh process, so the first leaves a mark in
# the sandbox's /tmp for the others to find.
FIRST_PROBE_THEN_BLOCK = """
import os, tempfile, time
import numpy as np

MARK = os.path.join(tempfile.gettempdir(), "a-probe-finished")

def add(a, b):
    if os.path.exists(MARK):
        time.sleep(3600)
    open(MARK, "w").close()
    return np.add(a, b)
"""


def kill_once_a_probe_reported(sandbox: RunnerSandbox, kill: Callable[[], None], killed: list[bool]) -> None:
    """On a thread: wait for the first probe's result frame (the job is surely running), then ``kill``."""

    def watch() -> None:
        if sandbox.stream.wait_for_frame("probe", 120) is not None:
            kill()  # an operator, a dying host: not the candidate
            killed.append(True)

    threading.Thread(target=watch, daemon=True).start()


def test_a_sandbox_killed_from_outside_is_a_platform_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    package = patient_add_numbers(tmp_path)
    grade(HONEST, backend="bwrap", package=package)  # expectations cached first
    original = ProcessSandbox.run
    killed: list[bool] = []

    def run_and_get_killed(self: ProcessSandbox, job: dict[str, Any]) -> Any:
        assert self.proc is not None
        pid = self.proc.pid
        kill_once_a_probe_reported(self, lambda: os.kill(pid, signal.SIGKILL), killed)
        return original(self, job)

    monkeypatch.setattr(ProcessSandbox, "run", run_and_get_killed)
    with pytest.raises(PlatformError, match=r"killed from outside while it ran \(exit -9\)"):
        grade(FIRST_PROBE_THEN_BLOCK, backend="bwrap", package=package)
    assert killed


@pytest.mark.skipif("docker" not in real_backends(), reason="the Docker engine does not answer (CI always has it)")
def test_a_container_killed_through_the_engine_is_a_platform_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    package = patient_add_numbers(tmp_path)
    grade(HONEST, backend="docker", package=package)  # expectations cached first
    original = DockerSandbox.run
    killed: list[bool] = []

    def run_and_get_killed(self: DockerSandbox, job: dict[str, Any]) -> Any:
        container_id = self.container.id
        kill_once_a_probe_reported(self, lambda: self.backend.client.containers.get(container_id).kill(), killed)  # `docker kill`
        return original(self, job)

    monkeypatch.setattr(DockerSandbox, "run", run_and_get_killed)
    # The container's real exit status: docker-init reports its child's SIGKILL as 128 + 9.
    with pytest.raises(PlatformError, match=r"killed from outside while it ran \(exit 137\)"):
        grade(FIRST_PROBE_THEN_BLOCK, backend="docker", package=package)
    assert killed


@pytest.mark.skipif(not cgroups.available(), reason="needs writable cgroups (root)")
def test_groups_of_a_dead_worker_are_swept_and_live_ones_kept(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    parent = f"mlprep-test-sweep-{os.getpid()}"
    monkeypatch.setattr(cgroups, "PARENT_NAME", parent)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    dead_pid = int(dead.stdout)
    mine = cgroups.Cgroup(64, 16, 1.0)
    try:
        # A group named after a worker process that no longer exists, as a SIGKILLed worker leaves it.
        monkeypatch.setattr(os, "getpid", lambda: dead_pid)
        orphan = cgroups.Cgroup(64, 16, 1.0)
        monkeypatch.undo()
        monkeypatch.setattr(cgroups, "PARENT_NAME", parent)
        orphan_name = orphan.name.split("/")[-1]
        assert orphan_name in cgroups.sandbox_groups()

        assert cgroups.sweep_orphans() == 1

        assert cgroups.sandbox_groups() == [mine.name.split("/")[-1]]
    finally:
        mine.destroy()
        for parent_dir in cgroups._parent_dirs():
            parent_dir.rmdir()


class _HangsBeforeReady(ProcessSandbox):
    """A sandbox whose "runner" never says ready: it blocks reading its stdin, as a hung import would."""

    def command(self) -> list[str]:
        return [sys.executable, "-c", "import sys; sys.stdin.read()"]


def test_a_runner_that_hangs_before_ready_is_reported_with_what_it_waits_on(caplog: pytest.LogCaptureFixture) -> None:
    from sandbox import SandboxLimits
    from sandbox.errors import SandboxNotReady

    sandbox = _HangsBeforeReady("python", SandboxLimits(wall_seconds=5, memory_mb=256, startup_seconds=0.5))
    sandbox.launch()
    assert sandbox.proc is not None
    pid = sandbox.proc.pid
    with caplog.at_level("WARNING", logger="sandbox.session"), pytest.raises(SandboxNotReady, match=r"did not become ready in 0\.5 s: no output"):
        sandbox.wait_ready()
    # The log names the hung process and what it waits in, taken before it was killed.
    record = next(r for r in caplog.records if getattr(r, "event", "") == "sandbox.start_failed")
    assert record.hung is True
    assert f"{pid} S " in record.processes and "sys.stdin.read()" in record.processes
    assert not sandbox.alive()


def test_a_runner_that_dies_before_ready_is_not_taken_for_a_hang() -> None:
    from sandbox import SandboxLimits
    from sandbox.errors import SandboxNotReady

    class DiesBeforeReady(ProcessSandbox):
        def command(self) -> list[str]:
            return [sys.executable, "-c", "import sys; sys.exit('no such profile')"]

    sandbox = DiesBeforeReady("python", SandboxLimits(wall_seconds=5, memory_mb=256, startup_seconds=30))
    sandbox.launch()
    with pytest.raises(SandboxStartError, match="no such profile") as raised:
        sandbox.wait_ready()
    assert not isinstance(raised.value, SandboxNotReady)


def test_grading_starts_one_more_sandbox_when_the_first_hangs_before_ready(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from grader import grade_submission
    from tests.fake_backend import FakeBackend
    from tests.helpers import add_numbers

    # The fake's expectations in the test's own folder: never served to a real backend, and never
    # the real backend's (recorded by other tests of the run) served to the fake.
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "expected"))
    fake = FakeBackend({"floats": [3.0, 4.5], "keeps_float16": "float16", "integers": [5, 7]})
    grade_submission(add_numbers(), HONEST, public=False, backend=fake)  # the expectations
    fake.starts = 0
    fake.hang_starts(1)
    assert grade_submission(add_numbers(), HONEST, public=False, backend=fake).score == 100
    assert fake.starts == 2

    # Twice in a row is not a passing hiccup: the grading fails as the platform's fault, after two sandboxes.
    fake.starts = 0
    fake.hang_starts(2)
    with pytest.raises(PlatformError, match="did not become ready"):
        grade_submission(add_numbers(), HONEST, public=False, backend=fake)
    assert fake.starts == 2


@pytest.mark.parametrize("backend", real_backends())
def test_a_syntax_check_that_ends_without_a_result_is_a_platform_error(backend: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Compiling the source runs none of the candidate's code: a check cut short (its time spent on a loaded host, a kill)
    is the platform's failure. It used to read "Syntax error: the code could not be compiled (killed by SIGKILL)" for
    code that compiles, and counted as one of the candidate's Submits (issue 28)."""
    package = patient_add_numbers(tmp_path)
    grade(HONEST, backend=backend, package=package)  # expectations cached first
    original = RunnerSandbox.run

    def run_with_no_time_to_compile(self: RunnerSandbox, job: dict[str, Any]) -> Any:
        # The check's time runs out, as under load: a millisecond for a source that takes tens of them to compile.
        long_source = job["sources"]["solution"] + "".join(f"padding_{i} = {i}\n" for i in range(40_000))
        job = {**job, "sources": {**job["sources"], "solution": long_source}, "limits": {**job["limits"], "syntax_seconds": 0.001}}
        return original(self, job)

    monkeypatch.setattr(RunnerSandbox, "run", run_with_no_time_to_compile)
    with pytest.raises(PlatformError, match=r"platform fault: the syntax check ended without a result"):
        grade(HONEST, backend=backend, package=package)
    monkeypatch.setattr(RunnerSandbox, "run", original)
    broken = grade("def add(a, b)\n    return a + b\n", backend=backend, package=package)
    assert broken.verdict == "syntax_error"  # a real syntax error is still the candidate's


@pytest.mark.skipif("docker" not in real_backends(), reason="the Docker engine does not answer (CI always has it)")
def test_a_stream_lost_while_the_container_runs_is_a_platform_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A launcher or engine restart cuts the attach while the container runs on: the grading is retried, never
    `runtime_error` ("the probe's process crashed"), as it was graded when a launcher restart cut every warm sandbox."""
    import socket

    package = patient_add_numbers(tmp_path)
    grade(HONEST, backend="docker", package=package)  # expectations cached first
    original = DockerSandbox.run

    def run_with_the_stream_cut(self: DockerSandbox, job: dict[str, Any]) -> Any:
        self.sock.shutdown(socket.SHUT_RDWR)  # what a dying launcher does to the worker's end
        assert self.stream.eof.wait(10)
        assert not self.alive()  # a pool would drop it rather than hand it out
        return original(self, job)

    monkeypatch.setattr(DockerSandbox, "run", run_with_the_stream_cut)
    with pytest.raises(PlatformError, match=r"stream was lost while it ran"):
        grade(HONEST, backend="docker", package=package)


@pytest.mark.skipif("docker" not in real_backends(), reason="the Docker engine does not answer (CI always has it)")
def test_after_a_launcher_restart_the_warm_pool_grades_correct_code_as_accepted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Warm sandboxes started through a launcher lose their streams when it restarts (issue 28: the next gradings got
    runtime_error 0): the pool drops them, and the grading on a fresh sandbox is accepted."""
    import docker

    from grader import grade_submission
    from sandbox.docker import DockerBackend
    from sandbox.image import image_tag
    from sandbox.pool import PooledBackend

    package = patient_add_numbers(tmp_path)
    listen = tmp_path / "launcher.sock"
    command = [sys.executable, "-m", "sandbox.launcher", "--listen", str(listen), "--image", os.environ.get("SANDBOX_IMAGE") or image_tag()]
    repo = Path(__file__).resolve().parents[2]

    def start_launcher() -> subprocess.Popen[bytes]:
        listen.unlink(missing_ok=True)
        process = subprocess.Popen(command, cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)}, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while not listen.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert listen.exists()
        return process

    launcher = start_launcher()
    monkeypatch.setenv("DOCKER_HOST", f"unix://{listen}")
    pool = PooledBackend(DockerBackend(), {"python": 2})
    try:
        assert pool.fill(120)
        warm = [sandbox.container.id for sandbox in pool._ready["python"]]  # type: ignore[attr-defined]
        launcher.kill()  # as an upgrade or a crash does: its attaches die with it
        launcher.wait()
        # Their stdin closed with the attach (StdinOnce): the runners exit saying no job came, no warm container keeps running.
        engine = docker.DockerClient(base_url="unix:///var/run/docker.sock", version="auto")
        try:
            assert [engine.api.wait(container, timeout=60)["StatusCode"] for container in warm] == [EXIT_NO_JOB] * len(warm)
        finally:
            engine.close()
        launcher = start_launcher()
        for _ in range(2):
            result = grade_submission(package, HONEST.encode(), public=False, backend=pool)
            assert result.verdict == "accepted", result.message
        assert pool.stats["dead"] >= 2
    finally:
        pool.close()
        atexit.unregister(pool.close)  # closed here, against a launcher that is gone by the interpreter's exit
        finish_destroys(60)  # the destroys of the sandboxes the pool dropped, before their client goes
        pool.inner.client.close()  # type: ignore[attr-defined]  # its connections to the killed launcher, which GC would report in another test
        launcher.kill()
        launcher.wait()
