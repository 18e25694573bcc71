"""sandbox/image.py:prune_old_tags on the real Docker engine: old tags go, the current and the newest stay.

The images are tiny ones built for the test from the debootstrapped OS image
(a LABEL each, no RUN), in a repository of the test's own.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest

from sandbox import image
from tests.helpers import real_backends

REPO = "mlprep-prune-test"

pytestmark = pytest.mark.skipif("docker" not in real_backends(), reason="the Docker engine does not answer (CI always has it)")


@pytest.fixture
def client() -> Iterator[Any]:
    import docker

    client = docker.from_env(version="auto", timeout=120)
    image.ensure_os_image(client)
    yield client
    for img in client.images.list(name=REPO):
        for tag in img.tags:
            client.images.remove(tag, force=True)


def build(client: Any, tag: str, parent: str = image.OS_IMAGE) -> str:
    dockerfile = f"FROM {parent}\nLABEL mlprep.prune-test={tag}\n".encode()
    client.images.build(fileobj=io.BytesIO(dockerfile), tag=f"{REPO}:{tag}", rm=True)
    return f"{REPO}:{tag}"


def tags(client: Any) -> set[str]:
    return {t for img in client.images.list(name=REPO) for t in img.tags}


def test_all_but_the_newest_old_tags_are_removed(client: Any) -> None:
    old = [build(client, f"old{i}") for i in range(4)]  # built in this order: old3 is the newest
    current = build(client, "current")
    client.images.get(current).tag(REPO, "latest")

    removed = image.prune_old_tags(client, REPO, current, keep=2)

    assert sorted(removed) == sorted(old[:2])
    assert tags(client) == {current, f"{REPO}:latest", old[2], old[3]}


def test_a_base_that_a_kept_image_builds_on_loses_only_its_tag(client: Any) -> None:
    base = build(client, "base")
    child = build(client, "child", parent=base)
    base_id = client.images.get(base).id

    assert image.prune_old_tags(client, REPO, child, keep=0) == [base]

    assert tags(client) == {child}
    assert client.images.get(base_id).id == base_id  # its layers stay: the child needs them
