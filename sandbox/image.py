"""Build the sandbox image on a host with no container registry, reusing what exists.

Place in the flow: ``make sandbox-image`` (and ``make test``) call
``python -m sandbox.image build``; the docker backend asks :func:`image_tag`
which image holds the current runner. Three layers, each rebuilt only when
its inputs change, each tagged with a hash of those inputs:

1. ``mlprep-debian:bookworm``: a Debian root file system made with
   ``debootstrap`` and loaded with ``docker import`` (nothing can be pulled);
2. ``mlprep-sandbox-base:<hash of requirements.txt, requirements.in, base.Dockerfile>``:
   Python, g++, and the pinned environment installed offline from wheels that
   the host's pip downloaded (the host's pip knows where the CPU build of
   torch lies; pip inside a build would fetch the CUDA one);
3. ``mlprep-sandbox:<hash of the base tag, Dockerfile, runner/ and the warm
   sources>``: the runner, and the warm caches (TorchInductor's kernels, the
   compile cache's entries) that the packages asking for one
   (``warm = ["inductor"]``, ``warm = ["compile"]``) filled by running their
   references (see ``warm.py``). Changing the runner or those packages
   rebuilds only this layer.

``build`` also builds the bwrap backend's warm cache on the host, and removes
old tags of layers 2 and 3 (:func:`prune_old_tags`): each runner change
leaves a tag behind, and each requirements change a base of several GB.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
from collections import deque
from pathlib import Path
from typing import Any

from sandbox import warm

SANDBOX_DIR = Path(__file__).resolve().parent
REPO = SANDBOX_DIR.parent
OS_IMAGE = "mlprep-debian:bookworm"
BASE_REPO = "mlprep-sandbox-base"
IMAGE_REPO = "mlprep-sandbox"
DEBIAN_MIRROR = "http://deb.debian.org/debian"


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "big") + part)
    return h.hexdigest()[:16]


def base_tag() -> str:
    inputs = (REPO / "requirements.txt", SANDBOX_DIR / "requirements.in", SANDBOX_DIR / "base.Dockerfile")
    return f"{BASE_REPO}:{_digest(*(p.read_bytes() for p in inputs))}"


def image_tag() -> str:
    """The tag of the image holding this checkout's runner and requirements."""
    runner = [p for p in sorted((SANDBOX_DIR / "runner").rglob("*.py"))]
    parts = [base_tag().encode(), (SANDBOX_DIR / "Dockerfile").read_bytes()]
    parts += [str(p.relative_to(SANDBOX_DIR)).encode() + b"\0" + p.read_bytes() for p in runner]
    parts.append(warm.digest(warm.warm_sources()).encode())
    return f"{IMAGE_REPO}:{_digest(*parts)}"


def _client() -> Any:
    import docker

    return docker.from_env(version="auto", timeout=600)


def _exists(client: Any, tag: str) -> bool:
    from docker.errors import ImageNotFound

    try:
        client.images.get(tag)
    except ImageNotFound:
        return False
    return True


def _log(message: str) -> None:
    print(f"[sandbox-image] {message}", flush=True)


def _build(client: Any, context: Path, dockerfile: str, tag: str, buildargs: dict[str, str]) -> None:
    _log(f"building {tag}")
    recent: deque[str] = deque(maxlen=40)
    # Host networking: apt inside the build reaches Debian's mirror only that way here.
    for chunk in client.api.build(path=str(context), dockerfile=dockerfile, tag=tag, buildargs=buildargs, network_mode="host", rm=True, decode=True):
        if "error" in chunk:
            raise RuntimeError(f"building {tag} failed: {chunk['error']}\n" + "\n".join(recent))
        line = str(chunk.get("stream", "")).rstrip()
        if line:
            recent.append(line)
        if line.startswith("Step "):
            _log(line)


def ensure_os_image(client: Any) -> None:
    if _exists(client, OS_IMAGE):
        return
    with tempfile.TemporaryDirectory(prefix="mlprep-rootfs-") as root:
        _log(f"debootstrap bookworm into {root} (about a minute)")
        subprocess.run(["debootstrap", "--variant=minbase", "bookworm", root, DEBIAN_MIRROR], check=True, stdout=subprocess.DEVNULL)
        tar = subprocess.Popen(["tar", "-C", root, "-c", "."], stdout=subprocess.PIPE)
        assert tar.stdout is not None
        client.api.import_image_from_data(tar.stdout.read(), repository=OS_IMAGE.split(":")[0], tag=OS_IMAGE.split(":")[1])
        tar.wait()


def ensure_base_image(client: Any) -> str:
    tag = base_tag()
    if _exists(client, tag):
        return tag
    context = REPO / "var" / "docker" / "wheels"
    context.mkdir(parents=True, exist_ok=True)
    _log("downloading wheels with the host's pip (cached after the first time)")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
         "-r", str(SANDBOX_DIR / "requirements.in"), "-c", str(REPO / "requirements.txt"), "-d", str(context)],
        check=True,
    )  # fmt: skip
    (context / "requirements.in").write_bytes((SANDBOX_DIR / "requirements.in").read_bytes())
    (context / "constraints.txt").write_bytes((REPO / "requirements.txt").read_bytes())
    (context / "base.Dockerfile").write_bytes((SANDBOX_DIR / "base.Dockerfile").read_bytes())
    _build(client, context, "base.Dockerfile", tag, {"OS_IMAGE": OS_IMAGE})
    return tag


def ensure_image(client: Any | None = None) -> str:
    """Build whatever layer is missing; return the sandbox image tag."""
    client = client or _client()
    tag = image_tag()
    if _exists(client, tag):
        return tag
    ensure_os_image(client)
    base = ensure_base_image(client)
    with tempfile.TemporaryDirectory(prefix="mlprep-image-") as scratch:
        context = Path(scratch)
        shutil.copytree(SANDBOX_DIR / "runner", context / "runner", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(SANDBOX_DIR / "Dockerfile", context / "Dockerfile")
        warm.stage(warm.warm_sources(), context / "warm")
        _build(client, context, "Dockerfile", tag, {"BASE_IMAGE": base})
    client.images.get(tag).tag(IMAGE_REPO, "latest")
    return tag


#: Older tags kept per repository besides the current one: another checkout
#: (a CI clone, a branch) may still be grading with the image it built.
KEEP_OLD_TAGS = 2


def _created(stamp: str) -> tuple[str, int]:
    """The engine's RFC 3339 creation time as a sortable key (its fraction drops trailing zeros, so strings do not sort)."""
    whole, _, fraction = stamp.rstrip("Z").partition(".")
    return whole, int((fraction + "000000000")[:9])


def prune_old_tags(client: Any, repository: str, current: str, *, keep: int = KEEP_OLD_TAGS) -> list[str]:
    """Remove all but the ``keep`` newest tags of ``repository`` besides ``current`` and ``latest``; the removed.

    Only tags are removed: layers still used by a kept image stay, and an
    image a container still runs cannot be removed (the engine refuses; the
    next build tries again).
    """
    others = []
    for image in client.images.list(name=repository):
        for tag in image.tags:
            if tag.split(":", 1)[0] == repository and tag not in (current, f"{repository}:latest"):
                others.append((_created(image.attrs.get("Created", "")), tag))
    removed = []
    for _, tag in sorted(others, reverse=True)[keep:]:
        try:
            client.images.remove(tag)
        except Exception as exc:  # noqa: BLE001 - in use, or removed meanwhile: not this build's problem
            _log(f"kept {tag}: {exc}")
            continue
        removed.append(tag)
    if removed:
        _log(f"removed old tags: {', '.join(removed)}")
    return removed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox.image")
    parser.add_argument("command", choices=["build", "tag"])
    args = parser.parse_args(argv)
    if args.command == "tag":
        print(image_tag())
        return 0
    client = _client()
    try:
        tag = ensure_image(client)
        print(tag)
        prune_old_tags(client, IMAGE_REPO, tag)
        prune_old_tags(client, BASE_REPO, base_tag())
    finally:
        client.close()
    warm.ensure_host_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
