"""sandbox/image.py:prune_old_tags on the real Docker engine: old tags go, the current and the newest stay.

The images are tiny ones built for the test from the debootstrapped OS image
(a LABEL each, no RUN), in a repository of each test's own: the suite runs
tests side by side, and a prune in a shared repository would see the other
test's images.
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from sandbox import image
from tests.helpers import real_backends

pytestmark = pytest.mark.skipif("docker" not in real_backends(), reason="the Docker engine does not answer (CI always has it)")


@pytest.fixture
def repo() -> str:
    """This test's own repository name."""
    return f"mlprep-prune-test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def client(repo: str) -> Iterator[Any]:
    import docker

    client = docker.from_env(version="auto", timeout=120)
    image.ensure_os_image(client)
    yield client
    for img in client.images.list(name=repo):
        for tag in img.tags:
            client.images.remove(tag, force=True)
    client.close()


def build(client: Any, repo: str, tag: str, parent: str = image.OS_IMAGE) -> str:
    dockerfile = f"FROM {parent}\nLABEL mlprep.prune-test={tag}\n".encode()
    client.images.build(fileobj=io.BytesIO(dockerfile), tag=f"{repo}:{tag}", rm=True)
    return f"{repo}:{tag}"


def tags(client: Any, repo: str) -> set[str]:
    return {t for img in client.images.list(name=repo) for t in img.tags}


def test_all_but_the_newest_old_tags_are_removed(client: Any, repo: str) -> None:
    old = [build(client, repo, f"old{i}") for i in range(4)]  # built in this order: old3 is the newest
    current = build(client, repo, "current")
    client.images.get(current).tag(repo, "latest")

    removed = image.prune_old_tags(client, repo, current, keep=2)

    assert sorted(removed) == sorted(old[:2])
    assert tags(client, repo) == {current, f"{repo}:latest", old[2], old[3]}


def test_a_base_that_a_kept_image_builds_on_loses_only_its_tag(client: Any, repo: str) -> None:
    base = build(client, repo, "base")
    child = build(client, repo, "child", parent=base)
    base_id = client.images.get(base).id

    assert image.prune_old_tags(client, repo, child, keep=0) == [base]

    assert tags(client, repo) == {child}
    assert client.images.get(base_id).id == base_id  # its layers stay: the child needs them
