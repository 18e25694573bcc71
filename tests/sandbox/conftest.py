"""Backends under test: every real one this host can run; bwrap must work in CI."""

from __future__ import annotations

import os
import shutil

import pytest


def real_backends() -> list[str]:
    names = []
    if shutil.which("bwrap") or os.environ.get("CI"):
        names.append("bwrap")  # in CI a missing bwrap must fail loudly, not skip
    return names


@pytest.fixture(params=real_backends())
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)
