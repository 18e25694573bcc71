"""Backends under test: every real one this host can run; in CI, bwrap and docker both must work."""

from __future__ import annotations

import os
import shutil

import pytest


def _docker_engine_answers() -> bool:
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


@pytest.fixture(params=real_backends())
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)
