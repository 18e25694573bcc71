"""The cache of expected observations, outside every candidate's sandbox.

Place in the flow: the grader needs, for each probe, what the reference
solution observes. Running the reference costs a sandbox, so the result is
stored per package version (the content hash: a changed package is a new
key, so a stale expectation cannot be served), per runtime fingerprint (the
runner, the observation codec and the pinned runtimes) and per probe file.
The cache lives in the worker's file system (``GRADER_CACHE_DIR``), which no
sandbox mounts.

An entry is the observation codec's encoding (``sandbox/runner/codec.py``),
as on the wire: a JSON file of trees, one per probe, and an uncompressed zip
of their ``.npy`` blobs (``a0.npy``, ``a1.npy``, ...; an ``.npz`` in numpy's
terms), read back with ``allow_pickle=False``. Files are written to a
temporary name and renamed, arrays first, so concurrent workers never read
half an entry.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from sandbox.runner.codec import ObservationError, decode_observation, encode_observation

DEFAULT_DIR = Path(__file__).resolve().parent.parent / "var" / "cache" / "expected"


def cache_dir() -> Path:
    return Path(os.environ.get("GRADER_CACHE_DIR", str(DEFAULT_DIR)))


@functools.cache
def runtime_fingerprint() -> str:
    """What besides the package decides an observation: the runner, its observation codec and the pinned runtimes.

    Part of every cache key, so upgrading torch or changing how observations
    are encoded never serves an expectation computed under the old ones.
    """
    digest = hashlib.sha256()
    repo = Path(__file__).resolve().parent.parent
    for path in [repo / "requirements.txt", *sorted((repo / "sandbox" / "runner").glob("*.py"))]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def entry_dir(version: str) -> Path:
    """The folder holding a package version's expectations under the current runtime."""
    return cache_dir() / f"{version}-{runtime_fingerprint()}"


def _paths(version: str, public: bool) -> tuple[Path, Path]:
    base = entry_dir(version)
    stem = "public" if public else "hidden"
    return base / f"{stem}.json", base / f"{stem}.npz"


def load(version: str, public: bool) -> dict[str, Any] | None:
    """{probe name: expected observation}, or None when not cached or the entry is unreadable."""
    meta_path, arrays_path = _paths(version, public)
    try:
        meta = json.loads(meta_path.read_text())
        if not isinstance(meta, dict) or not isinstance(meta.get("probes"), dict) or not isinstance(meta.get("arrays"), int):
            return None  # not an entry this code wrote
        with zipfile.ZipFile(arrays_path) as archive:
            blobs = [archive.read(f"a{i}.npy") for i in range(meta["arrays"])]
        return {name: decode_observation(tree, blobs) for name, tree in meta["probes"].items()}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, ObservationError):
        return None


def store(version: str, public: bool, observations: dict[str, Any]) -> None:
    """Store a package version's expected observations; raises ObservationError for a value that is not one."""
    meta_path, arrays_path = _paths(version, public)
    meta_path.parent.mkdir(parents=True, exist_ok=True)
    blobs: list[bytes] = []
    trees = {name: encode_observation(obs, blobs) for name, obs in observations.items()}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as archive:
        for i, blob in enumerate(blobs):
            archive.writestr(f"a{i}.npy", blob)
    meta = json.dumps({"probes": trees, "arrays": len(blobs)}, allow_nan=False).encode()
    # Arrays first, then the JSON that makes the entry visible to load().
    for path, data in ((arrays_path, buf.getvalue()), (meta_path, meta)):
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
