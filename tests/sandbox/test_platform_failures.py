"""Failures of the platform, not of the candidate: a sandbox killed from outside, cgroups left by a dead worker.

sandbox/process.py tells a bwrap sandbox killed from outside (its outer
process is out of the candidate's reach) from a runner the candidate killed;
sandbox/docker.py does the same for a container killed through the engine
(``docker kill``: an engine event the candidate cannot cause);
sandbox/cgroups.py removes the groups of workers that died without cleaning up.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from grader.errors import PlatformError
from sandbox import cgroups
from sandbox.docker import DockerSandbox
from sandbox.process import ProcessSandbox
from tests.helpers import grade, real_backends

SLOW_ACCEPTED = """
import time
import numpy as np

def add(a, b):
    time.sleep(1.5)
    return np.add(a, b)
"""


def test_a_sandbox_killed_from_outside_is_a_platform_error(monkeypatch: pytest.MonkeyPatch) -> None:
    grade("import numpy as np\n\ndef add(a, b):\n    return np.add(a, b)\n", backend="bwrap")  # expectations cached first
    original = ProcessSandbox.run
    killed: list[int] = []

    def run_and_get_killed(self: ProcessSandbox, job: dict[str, Any]) -> Any:
        assert self.proc is not None
        pid = self.proc.pid

        def kill_soon() -> None:
            time.sleep(0.5)
            os.kill(pid, signal.SIGKILL)  # an operator, a dying host: not the candidate
            killed.append(pid)

        threading.Thread(target=kill_soon, daemon=True).start()
        return original(self, job)

    monkeypatch.setattr(ProcessSandbox, "run", run_and_get_killed)
    with pytest.raises(PlatformError, match="killed from outside"):
        grade(SLOW_ACCEPTED, backend="bwrap")
    assert killed


@pytest.mark.skipif("docker" not in real_backends(), reason="the Docker engine does not answer (CI always has it)")
def test_a_container_killed_through_the_engine_is_a_platform_error(monkeypatch: pytest.MonkeyPatch) -> None:
    grade("import numpy as np\n\ndef add(a, b):\n    return np.add(a, b)\n", backend="docker")  # expectations cached first
    original = DockerSandbox.run
    killed: list[str] = []

    def run_and_get_killed(self: DockerSandbox, job: dict[str, Any]) -> Any:
        def kill_soon() -> None:
            time.sleep(0.5)
            self.backend.client.containers.get(self.container.id).kill()  # `docker kill` by an operator
            killed.append(self.container.id)

        threading.Thread(target=kill_soon, daemon=True).start()
        return original(self, job)

    monkeypatch.setattr(DockerSandbox, "run", run_and_get_killed)
    with pytest.raises(PlatformError, match="killed from outside"):
        grade(SLOW_ACCEPTED, backend="docker")
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
