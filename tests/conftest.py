"""Shared fixtures for the grader and sandbox unit tests (no sandbox is started)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURE_PACKAGE = Path(__file__).resolve().parent / "fixtures" / "packages" / "demo" / "add-numbers"


@pytest.fixture
def demo_dir() -> Path:
    """The pristine demo package (read-only: copy it before changing anything)."""
    return FIXTURE_PACKAGE


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    """A private copy of the demo package at <tmp>/demo/add-numbers, free to break."""
    dest = tmp_path / "demo" / "add-numbers"
    shutil.copytree(FIXTURE_PACKAGE, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest
