"""scripts/venv.sh: the pinned venv is built once per requirements.txt and interpreter on a machine, and a clone links to it.

Run on a copy of the script beside a requirements.txt of no packages, with a
private cache folder, so that each build is a bare ``python3 -m venv``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "venv.sh"


def clone(root: Path, name: str, requirements: str = "# nothing pinned\n") -> Path:
    """A folder shaped like a clone for the script: scripts/venv.sh and requirements.txt."""
    folder = root / name
    (folder / "scripts").mkdir(parents=True)
    shutil.copy(SCRIPT, folder / "scripts" / "venv.sh")
    (folder / "requirements.txt").write_text(requirements)
    return folder


def run(folder: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MLPREP_VENV_CACHE": str(cache)}
    return subprocess.run(["bash", str(folder / "scripts" / "venv.sh")], env=env, capture_output=True, text=True, timeout=300, check=True)


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def test_clones_share_one_environment_per_pin_set_and_a_half_built_one_is_built_again(tmp_path: Path, cache: Path) -> None:
    # One test, three builds: each build is a python3 -m venv with pip, seconds each.
    first, second = clone(tmp_path, "first"), clone(tmp_path, "second")
    built = run(first, cache)
    assert "Building the Python environment" in built.stdout
    target = (first / ".venv").resolve()
    assert (first / ".venv").is_symlink() and target.parent == cache.resolve()
    assert (target / ".complete").exists() and (target / "bin" / "python").exists()

    again = run(second, cache)
    assert "Building" not in again.stdout  # found complete: nothing installed
    assert (second / ".venv").resolve() == target

    other = clone(tmp_path, "other", requirements="# another pin set\n")
    run(other, cache)
    assert (other / ".venv").resolve() != target

    (target / ".complete").unlink()  # as if the install had been killed half way
    (target / "half-installed").write_text("")
    rebuilt = run(clone(tmp_path, "third"), cache)
    assert "Building" in rebuilt.stdout
    assert (target / ".complete").exists() and not (target / "half-installed").exists()


def test_a_clone_with_its_own_venv_folder_keeps_it(tmp_path: Path, cache: Path) -> None:
    own = clone(tmp_path, "own")
    subprocess.run(["python3", "-m", "venv", str(own / ".venv")], check=True, timeout=120)
    run(own, cache)
    assert not (own / ".venv").is_symlink()
    assert any(p.name.startswith(".requirements-") for p in (own / ".venv").iterdir())
    assert not cache.exists() or not any(cache.iterdir())
