"""Backends under test: every real one this host can run; in CI, bwrap and docker both must work."""

from __future__ import annotations

import pytest

from tests.helpers import real_backends


@pytest.fixture(params=real_backends())
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)
