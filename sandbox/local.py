"""The local backend: the runner as a plain child process, WITHOUT isolation.

For the grader's fast unit tests and for a developer's laptop only: the
candidate's code runs with the worker's user, file system and network. It is
never chosen unless ``SANDBOX_BACKEND=local`` is set explicitly, and the web
settings refuse it outside DEBUG. The runner's per-probe fork, time limits,
output caps and wire format are the same as in the real backends, which is
what the grader's tests need.
"""

from __future__ import annotations

import sys
from typing import Any

from sandbox.backend import Backend, SandboxLimits
from sandbox.environment import RUNNER_DIR, sandbox_env
from sandbox.process import ProcessSandbox
from sandbox.scratch import sweep_orphan_host_dirs


class LocalSandbox(ProcessSandbox):
    sweep_strays = False  # /proc here is the host's: never sweep it

    def __init__(self, profile: str, limits: SandboxLimits) -> None:
        super().__init__(profile, limits)
        self.tmp = self.host_dir / "tmp"
        self.tmp.mkdir()

    def command(self) -> list[str]:
        return [sys.executable, "-B", str(RUNNER_DIR / "runner.py"), self.profile]

    def environment(self) -> dict[str, str]:
        return sandbox_env(HOME=str(self.tmp), TMPDIR=str(self.tmp), TORCHINDUCTOR_CACHE_DIR=str(self.tmp / "torchinductor"))

    def job_limits(self) -> dict[str, Any]:
        return {"workdir": str(self.tmp / "work")}


class LocalBackend(Backend):
    name = "local"

    def sweep_orphans(self) -> int:
        return sweep_orphan_host_dirs()

    def start(self, profile: str, limits: SandboxLimits) -> LocalSandbox:
        self.sweep_if_due()
        sandbox = LocalSandbox(profile, limits)
        sandbox.launch()
        return sandbox
