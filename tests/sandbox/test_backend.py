"""sandbox.backend: what every backend shares, here its sweep of dead workers' leftovers, again when due and as it closes."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox import backend as backend_module
from sandbox.local import LocalBackend
from sandbox.scratch import HOST_DIR_PREFIX
from tests.helpers import dead_owner_token


def test_a_backend_sweeps_again_when_due_and_as_it_closes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Its first sweep can run while the worker it replaces is still exiting; later ones catch what that one left.
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    backend = LocalBackend()
    backend.sweep_if_due()
    left_late = tmp_path / f"{HOST_DIR_PREFIX}{dead_owner_token()}-late"
    left_late.mkdir()

    backend.sweep_if_due()  # not due yet
    assert left_late.exists()
    monkeypatch.setattr(backend_module, "SWEEP_INTERVAL_SECONDS", 0.0)
    backend.sweep_if_due()
    assert not left_late.exists()

    left_later = tmp_path / f"{HOST_DIR_PREFIX}{dead_owner_token()}-later"
    left_later.mkdir()
    backend.close()
    assert not left_later.exists()
