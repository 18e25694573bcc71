"""Shared test helpers: fixture packages and grading through a chosen backend."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

from grader import GradeResult, Package, grade_submission, load_package_dir

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "packages"
ADD_NUMBERS = FIXTURES / "demo" / "add-numbers"


def add_numbers() -> Package:
    return load_package_dir(ADD_NUMBERS)


def package_with(tmp_path: Path, **replace: str) -> Package:
    """A copy of add-numbers with files replaced (keys use '__' for '/': probes__hidden_py)."""
    target = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, target)
    for key, text in replace.items():
        rel = key.replace("__", "/").replace("_py", ".py").replace("_toml", ".toml")
        (target / rel).write_text(textwrap.dedent(text))
    return load_package_dir(target)


def patient_add_numbers(tmp_path: Path) -> Package:
    """add-numbers with a minute per probe instead of 3 s: for a test whose verdict must not depend on how loaded the machine is
    (heavy work that must finish, or a probe that blocks until the test acts)."""
    toml = (ADD_NUMBERS / "challenge.toml").read_text()
    assert "probe_seconds = 3\n" in toml
    return package_with(tmp_path, challenge_toml=toml.replace("probe_seconds = 3\n", "probe_seconds = 60\n"))


def grade(code: str, *, backend: str, public: bool = False, package: Package | None = None) -> GradeResult:
    from sandbox import get_backend

    return grade_submission(package or add_numbers(), textwrap.dedent(code), public=public, backend=get_backend(backend))


def statuses(result: GradeResult) -> dict[str, str]:
    return {p.name: p.status for p in result.probes}


def _docker_engine_answers() -> bool:
    # Knock on the engine's socket first: docker-py leaves the socket of a
    # refused connection open, which fails the run under -W error.
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if host.startswith("unix://"):
        with socket.socket(socket.AF_UNIX) as knock:
            knock.settimeout(5)
            try:
                knock.connect(host.removeprefix("unix://"))
            except OSError:
                return False
    try:
        import docker

        client = docker.from_env(version="auto", timeout=5)
        client.ping()
        client.close()
    except Exception:
        return False
    return True


def real_backends() -> list[str]:
    """bwrap and docker wherever they can run; in CI both, so a missing one fails loudly instead of skipping."""
    names = []
    if shutil.which("bwrap") or os.environ.get("CI"):
        names.append("bwrap")
    if os.environ.get("CI") or _docker_engine_answers():
        names.append("docker")
    return names


def dead_owner_token() -> str:
    """The owner token (sandbox/owners.py) of a process that ran and was reaped: what a killed worker's leftovers carry."""
    from sandbox.owners import owner_token

    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    token = owner_token(proc.pid)
    proc.kill()
    proc.wait()
    return token
