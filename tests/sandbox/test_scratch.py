"""sandbox.scratch: host scratch folders of process sandboxes, and the sweep of those whose worker died."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.owners import owner_token
from sandbox.scratch import HOST_DIR_PREFIX, make_host_dir, sweep_orphan_host_dirs
from tests.helpers import dead_owner_token


@pytest.fixture
def tmpdir_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    return tmp_path


def test_a_scratch_folder_is_named_after_this_worker_and_readable_by_the_sandbox_user(tmpdir_here: Path) -> None:
    folder = make_host_dir()
    assert folder.parent == tmpdir_here
    assert folder.name.startswith(f"{HOST_DIR_PREFIX}{owner_token()}-")
    assert folder.stat().st_mode & 0o777 == 0o755
    assert sweep_orphan_host_dirs() == 0 and folder.is_dir()  # its worker (this process) lives


def test_only_folders_of_gone_owners_are_swept(tmpdir_here: Path) -> None:
    dead = tmpdir_here / f"{HOST_DIR_PREFIX}{dead_owner_token()}-abc"
    live = tmpdir_here / f"{HOST_DIR_PREFIX}{owner_token()}-def"
    foreign = tmpdir_here / f"{HOST_DIR_PREFIX}someone-else"
    for folder in (dead, live, foreign):
        (folder / "etc").mkdir(parents=True)
        (folder / "etc" / "passwd").write_text("x")
        (folder / "etc" / "passwd").chmod(0o444)

    assert sweep_orphan_host_dirs() == 1

    assert sorted(p.name for p in tmpdir_here.iterdir()) == sorted([live.name, foreign.name])
