"""The cache of expected observations, outside every candidate's sandbox.

Place in the flow: the grader needs, for each probe, what the reference
solution observes. Running the reference costs a sandbox, so the result is
stored per package version (the content hash: a changed package is a new
key, so a stale expectation cannot be served), per runtime fingerprint (the
runner and the pinned runtimes) and per probe file. The cache
lives in the worker's file system (``GRADER_CACHE_DIR``), which no sandbox
mounts. Files are written to a temporary name and renamed, so concurrent
workers never read half an entry.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from sandbox.runner.wire import TaggedArray

DEFAULT_DIR = Path(__file__).resolve().parent.parent / "var" / "cache" / "expected"


def cache_dir() -> Path:
    return Path(os.environ.get("GRADER_CACHE_DIR", str(DEFAULT_DIR)))


def _pack(value: Any, arrays: list[np.ndarray]) -> Any:
    if isinstance(value, TaggedArray):
        arrays.append(value.data)
        return {"$tagged": len(arrays) - 1, "dtype": value.dtype, "source": value.source}
    if isinstance(value, float) and value != value:
        return {"$float": "nan"}
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return {"$float": "inf" if value > 0 else "-inf"}
    if isinstance(value, list):
        return [_pack(v, arrays) for v in value]
    if isinstance(value, dict):
        return {"$map": {k: _pack(v, arrays) for k, v in value.items()}}
    return value


def _unpack(value: Any, arrays: Any) -> Any:
    if isinstance(value, list):
        return [_unpack(v, arrays) for v in value]
    if isinstance(value, dict):
        if "$tagged" in value:
            return TaggedArray(arrays[f"a{value['$tagged']}"], value["dtype"], value["source"])
        if "$float" in value:
            return float(value["$float"])
        return {k: _unpack(v, arrays) for k, v in value["$map"].items()}
    return value


@functools.cache
def runtime_fingerprint() -> str:
    """What besides the package decides an observation: the runner (wire format) and the pinned runtimes.

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
    """{probe name: expected observation}, or None when not cached."""
    meta_path, arrays_path = _paths(version, public)
    try:
        meta = json.loads(meta_path.read_text())
        with np.load(arrays_path, allow_pickle=False) as arrays:
            return {name: _unpack(obs, arrays) for name, obs in meta["probes"].items()}
    except (OSError, ValueError, KeyError):
        return None


def store(version: str, public: bool, observations: dict[str, Any]) -> None:
    meta_path, arrays_path = _paths(version, public)
    meta_path.parent.mkdir(parents=True, exist_ok=True)
    arrays: list[np.ndarray] = []
    packed = {name: _pack(obs, arrays) for name, obs in observations.items()}
    buf = io.BytesIO()
    np.savez(buf, **{f"a{i}": a for i, a in enumerate(arrays)})  # type: ignore[arg-type]
    # Arrays first, then the JSON that makes the entry visible to load().
    for path, data in ((arrays_path, buf.getvalue()), (meta_path, json.dumps({"probes": packed}).encode())):
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
