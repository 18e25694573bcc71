"""Isolation backends for running untrusted code, and the in-sandbox runner.

``get_backend()`` picks the backend named by ``SANDBOX_BACKEND``: ``bwrap``
(the default: bubblewrap namespaces plus cgroups), ``docker`` (production:
a hardened container per sandbox) or ``local`` (no isolation; tests and laptops only).
``use_backend`` installs another under a name of its own (the tests' in-memory
fake, tests/fake_backend.py). This package never imports Django or the grader.
"""

from __future__ import annotations

import os

from sandbox import cpus
from sandbox.backend import Backend, FrameWatcher, RunOutcome, Sandbox, SandboxLimits, SandboxStartError
from sandbox.teardown import finish_destroys

__all__ = [
    "BACKENDS", "Backend", "FrameWatcher", "RunOutcome", "Sandbox", "SandboxLimits", "SandboxStartError", "get_backend", "shutdown",
    "use_backend",
]  # fmt: skip

BACKENDS = ("bwrap", "docker", "local")

_cache: dict[str, Backend] = {}


def get_backend(name: str | None = None) -> Backend:
    """The backend named ``name`` or by ``SANDBOX_BACKEND`` (default ``bwrap``)."""
    name = name or os.environ.get("SANDBOX_BACKEND", "bwrap")
    if name in _cache:
        return _cache[name]
    try:
        cpus.probes_at_once_limit()  # a bad setting is named when the worker starts, not at its first grading
    except ValueError as exc:
        raise SandboxStartError(str(exc)) from exc
    backend: Backend
    if name == "bwrap":
        from sandbox.bwrap import BwrapBackend

        backend = BwrapBackend()
    elif name == "docker":
        from sandbox.docker import DockerBackend

        backend = DockerBackend()
    elif name == "local":
        from sandbox.local import LocalBackend

        backend = LocalBackend()
    else:
        raise SandboxStartError(f"unknown SANDBOX_BACKEND {name!r} (choose from {', '.join(BACKENDS)})")
    sizes = os.environ.get("SANDBOX_POOL", "").strip()
    if sizes and sizes != "0":
        from sandbox.pool import PooledBackend, parse_sizes

        backend = PooledBackend(backend, parse_sizes(sizes))
    _cache[name] = backend
    return backend


def use_backend(name: str, backend: Backend | None) -> None:
    """Make ``get_backend(name)`` answer ``backend`` (None forgets it).

    With ``SANDBOX_BACKEND=name`` every grading of the process then runs on it:
    how tests put an in-memory backend under the grader. A name of
    :data:`BACKENDS` is refused, so a real backend is never shadowed.
    """
    if name in BACKENDS:
        raise ValueError(f"{name!r} names a real backend; install a stand-in under a name of its own")
    if backend is None:
        _cache.pop(name, None)
    else:
        _cache[name] = backend


def shutdown(timeout: float = 15.0) -> int:
    """The end of a process that graded: close every backend (a warm pool
    destroys its waiting sandboxes) and wait for the destroys still running.
    Returns how many sandboxes were still being destroyed at the deadline."""
    for backend in list(_cache.values()):
        backend.close()
    return finish_destroys(timeout)
