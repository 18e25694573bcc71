"""Shared fixtures for the grader and sandbox unit tests (no sandbox is started)."""

from __future__ import annotations

import shutil
import tomllib
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

    ``make test`` spreads the suite over the cores with pytest-xdist, giving
    each worker the next test as it frees up; started
    first, the long tests cannot end up alone at the tail of the run while
    the other worker idles. Validations go by their package's wall-clock
    limit, the best estimate of their length before they run (the heaviest,
    compile-bisect-layer and find-the-broken-pass, take minutes; the
    lightest a few seconds; one test validates a package on every backend,
    tests/challenges/test_packages_validate.py). Otherwise the collection
    order stays.
    """

    for item in items:
        _mark_real_sandboxes(item)

    def rank(item: pytest.Item) -> tuple[int, float, str]:
        if item.get_closest_marker("slow") and "test_package_is_valid" in item.name:
            folder = getattr(item, "callspec").params["folder"]
            return 0, -_package_wall_seconds(folder), str(folder)
        if item.get_closest_marker("slow") or item.get_closest_marker("browser"):
            return 1, 0, ""
        return 2, 0, ""

    items.sort(key=rank)


# Folders whose every test runs real sandboxes (or the compose stack): marked ``sandbox`` for ``make check`` to skip.
_SANDBOX_FOLDERS = ("sandbox", "integration", "deploy")


def _mark_real_sandboxes(item: pytest.Item) -> None:
    """Mark ``sandbox`` what runs real sandboxes: the tests of the sandbox, integration and deploy folders, and every
    test parametrized by a real backend (``bwrap``, ``docker``); tests elsewhere that grade in one say so themselves."""
    parts = Path(str(item.fspath)).relative_to(Path(__file__).parent).parts
    params = getattr(getattr(item, "callspec", None), "params", {})
    if parts[0] in _SANDBOX_FOLDERS or any(value in ("bwrap", "docker") for value in params.values() if isinstance(value, str)):
        item.add_marker(pytest.mark.sandbox)


def _package_wall_seconds(folder: Path) -> float:
    """A package's ``[limits] wall_seconds`` (0 if unreadable: the test itself will say why)."""
    try:
        with (folder / "challenge.toml").open("rb") as f:
            return float(tomllib.load(f).get("limits", {}).get("wall_seconds", 0))
    except (OSError, ValueError, tomllib.TOMLDecodeError):
        return 0.0


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Let the last sandboxes' background destroys finish while pytest's streams are still open.

    Left to the interpreter's exit (sandbox/teardown.py registers that too),
    they log "sandbox destroyed" into a stream pytest has closed by then, and
    every worker prints a logging traceback at the end of the run.
    """
    from sandbox.teardown import finish_destroys

    finish_destroys(timeout=60)
