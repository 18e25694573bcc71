"""Remembered validations: a package that passed on this exact code, runtime and backend is not run again.

Place in the flow: ``validate_package`` (grader/validate.py) asks :func:`lookup`
before it runs anything and calls :func:`record` after a validation that
passed. ``make test`` and ``check_challenges`` then re-validate only the
packages whose outcome could have changed, instead of grading 28 packages
on two backends from nothing on every run.

A cache must never hide a real change, so the key is everything that decides
a validation's outcome:

- the package version (a hash of every file of the package, probes,
  solutions and ``expected.toml`` included);
- the runtime fingerprint (the pinned requirements and the in-sandbox runner,
  the same one that keys the expected observations);
- the platform code: every file under ``grader/`` and ``sandbox/`` (the
  checks, scoring, validation rules, backends, Dockerfiles);
- the backend: its name and what it runs on (for docker the image id and
  the engine's version, for bwrap the bwrap version), and the kernel;
- how the package is validated (its custom checks in a sandbox or not).

Only passing reports are recorded: a failure is always run again. Entries
live in ``var/cache/validated/`` (ignored by git; ``GRADER_VALIDATION_CACHE_DIR``
moves it, ``GRADER_VALIDATION_CACHE=0`` turns the cache off), one JSON file
per key, written to a temporary name and renamed so parallel runs never read
half an entry.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from grader.expected import runtime_fingerprint

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DIR = REPO / "var" / "cache" / "validated"
# The platform code whose every byte can change a validation's outcome.
PLATFORM_FOLDERS = ("grader", "sandbox")
_SKIPPED_PARTS = {"__pycache__", ".mypy_cache", ".ruff_cache"}


def enabled() -> bool:
    return os.environ.get("GRADER_VALIDATION_CACHE", "1").strip().lower() not in {"0", "off", "false", "no"}


def cache_dir() -> Path:
    return Path(os.environ.get("GRADER_VALIDATION_CACHE_DIR") or DEFAULT_DIR)


def platform_fingerprint(root: Path = REPO) -> str:
    """A hash of every file under ``grader/`` and ``sandbox/`` of ``root`` (names and contents)."""
    digest = hashlib.sha256()
    for folder in PLATFORM_FOLDERS:
        base = root / folder
        for path in sorted(p for p in base.rglob("*") if p.is_file() and not _SKIPPED_PARTS.intersection(p.parts) and p.suffix != ".pyc"):
            rel = path.relative_to(root).as_posix().encode()
            data = path.read_bytes()
            digest.update(len(rel).to_bytes(4, "big") + rel + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


@functools.cache
def _platform_fingerprint_of_this_checkout() -> str:
    # Computed once per process: the files do not change under a running validation.
    return platform_fingerprint(REPO)


def _command_output(*argv: str) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unavailable: {exc}"
    return (done.stdout + done.stderr).strip()


def backend_identity(backend: Any) -> dict[str, str]:
    """What the backend runs on, as far as it can change a probe's outcome.

    ``backend`` is a ``sandbox.Backend`` (a warm pool is named by its inner backend).
    """
    inner = getattr(backend, "inner", backend)
    name = str(getattr(inner, "name", type(inner).__name__))
    identity = {"backend": name, "kernel": platform.release()}
    if name == "docker":
        client = inner.client
        image = client.images.get(inner.image)
        identity.update(image=str(inner.image), image_id=str(image.id), engine=str(client.version().get("Version", "")))
        identity["runtime"] = str(getattr(inner, "runtime", None) or "runc")
    elif name == "bwrap":
        identity["bwrap"] = _command_output(str(getattr(inner, "bwrap", "bwrap")), "--version")
    return identity


def key(version: str, backend: Any, *, checks_in_sandbox: bool, share: str = "part 1 of 1", platform_code: str | None = None) -> str:
    parts = {
        "package": version,
        "share": share,
        "runtime": runtime_fingerprint(),
        "platform": platform_code or _platform_fingerprint_of_this_checkout(),
        "checks_in_sandbox": checks_in_sandbox,
        **backend_identity(backend),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def lookup(cache_key: str) -> dict[str, Any] | None:
    """The recorded passing report ({"name", "lines", "recorded_at"}) under ``cache_key``, or None."""
    if not enabled():
        return None
    try:
        entry = json.loads((cache_dir() / f"{cache_key}.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("lines"), list) or not isinstance(entry.get("name"), str):
        return None
    return entry


def record(cache_key: str, name: str, lines: list[str]) -> None:
    """Remember a passing validation (callers record only reports that passed)."""
    if not enabled():
        return
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    entry = {"name": name, "lines": lines, "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    with os.fdopen(fd, "w") as fh:
        json.dump(entry, fh)
    os.replace(tmp, folder / f"{cache_key}.json")
