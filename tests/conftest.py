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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Longest first: whole-package validations, then the other slow and browser tests, then the rest.

    ``make test`` spreads the suite over the cores with pytest-xdist's
    work-stealing scheduler; started first, the long tests cannot end up
    alone at the tail of the run while the other worker idles. The order
    within each group is the collection order (the sort is stable).
    """

    def rank(item: pytest.Item) -> int:
        if item.get_closest_marker("slow") and "test_package_is_valid" in item.name:
            return 0
        if item.get_closest_marker("slow") or item.get_closest_marker("browser"):
            return 1
        return 2

    items.sort(key=rank)
