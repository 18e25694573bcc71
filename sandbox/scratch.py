"""Host-side scratch folders of process sandboxes: made per sandbox, swept when their worker died.

Place in the flow: a bwrap or local sandbox (``process.py``) makes its folder
with :func:`make_host_dir` (bwrap's ``/etc`` files, the local backend's
``/tmp``) and removes it as it is destroyed. A worker killed before that
leaves the folder behind; the folder's name carries the worker's owner token
(``owners.py``), so the backends' sweep (:func:`sweep_orphan_host_dirs`) can
remove those of dead workers and never one that a live worker is using.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from sandbox.owners import owner_alive, owner_token

HOST_DIR_PREFIX = "mlprep-sbx-"


def make_host_dir() -> Path:
    """A new scratch folder in the host's temp dir, named after this worker process."""
    folder = Path(tempfile.mkdtemp(prefix=f"{HOST_DIR_PREFIX}{owner_token()}-"))
    os.chmod(folder, 0o755)  # noqa: S103 - read by the sandbox user; holds nothing secret
    return folder


def sweep_orphan_host_dirs() -> int:
    """Remove sandbox scratch folders whose worker process is gone (killed before ``destroy``); how many."""
    removed = 0
    for folder in Path(tempfile.gettempdir()).glob(f"{HOST_DIR_PREFIX}*-*"):
        owner = folder.name[len(HOST_DIR_PREFIX) :].split("-", 1)[0]
        if owner_alive(owner) is not False:
            continue  # its worker lives, or the name is not one of ours
        shutil.rmtree(folder, ignore_errors=True)
        removed += 1
    return removed
