"""Whether this host can start sandboxes now: the readiness half of the worker's health check.

Place in the flow: the Celery worker's ``sandbox_health`` control command
(web/config/celery.py) calls :func:`backend_health` in the worker's main
process, and ``manage.py health`` / ``GET /healthz`` show the answer. It
checks what a start needs without starting anything or changing state:
bwrap's binary and cgroups, or the Docker engine and the sandbox image.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from sandbox import cgroups


def _bwrap() -> tuple[bool, str, dict[str, Any]]:
    if not shutil.which("bwrap"):
        return False, "bubblewrap (bwrap) is not installed", {}
    usable = cgroups.available()
    extra: dict[str, Any] = {"cgroups": usable}
    if usable:
        extra["sandbox_cgroups"] = len(cgroups.sandbox_groups())
    return True, "bwrap found" + ("" if usable else "; no writable cgroups, rlimits only"), extra


def _docker() -> tuple[bool, str, dict[str, Any]]:
    try:
        import docker

        client = docker.from_env(version="auto", timeout=5)
        client.ping()
    except Exception as exc:  # noqa: BLE001 - no engine, no socket, no permission: all mean not ready
        return False, f"the Docker engine is not reachable: {exc}", {}
    try:
        from sandbox.image import image_tag

        image = os.environ.get("SANDBOX_IMAGE") or image_tag()
        try:
            client.images.get(image)
        except Exception:  # noqa: BLE001 - docker.errors.ImageNotFound or an API error: not ready either way
            return False, f"the sandbox image {image} is missing: run `make sandbox-image`", {"image": image}
        # Sparse: a count needs no inspection, which fails on a container removed meanwhile.
        containers = len(client.containers.list(sparse=True, filters={"label": "mlprep.sandbox"}))
        return True, "engine and image ready", {"image": image, "sandbox_containers": containers}
    finally:
        client.close()


def backend_health(name: str | None = None) -> dict[str, Any]:
    """{"backend", "ready", "detail", "pool": {profile: warm size per process}, ...}."""
    name = name or os.environ.get("SANDBOX_BACKEND", "bwrap")
    if name == "bwrap":
        ready, detail, extra = _bwrap()
    elif name == "docker":
        ready, detail, extra = _docker()
    elif name == "local":
        ready, detail, extra = True, "no isolation (tests only)", {}
    else:
        ready, detail, extra = False, f"unknown SANDBOX_BACKEND {name!r}", {}
    pool: dict[str, int] = {}
    sizes = os.environ.get("SANDBOX_POOL", "").strip()
    if sizes and sizes != "0":
        from sandbox.pool import parse_sizes

        try:
            pool = parse_sizes(sizes)
        except ValueError as exc:
            ready, detail = False, str(exc)
    return {"backend": name, "ready": ready, "detail": detail, "pool": pool, **extra}
