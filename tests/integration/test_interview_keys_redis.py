"""The keystroke relay on a real redis-server: Channels' Redis layer and the Redis document store, as deployed.

tests/web/test_interviews_keys.py pins the rules on the in-memory layer and
store; here the same sockets go through Redis: an edit reaches a watcher
through the layer's group, a watcher joining later reads the document
from Redis, and the store's read-modify-write holds when writers race.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client

from web.challenges.models import Challenge
from web.config.settings import channel_layers
from web.interviews.keys_store import RedisDocStore, doc_store
from web.interviews.models import Interview
from web.interviews.services import interview_create, interview_open

from ..web.conftest import challenge, coach, package_root, user  # noqa: F401 - pytest fixtures

SLUG = "add-two"


@pytest.fixture
def redis_relay(redis_url: str, settings: Any, transactional_db: Any) -> Iterator[str]:
    url = redis_url.rsplit("/", 1)[0] + "/2"
    settings.ALLOWED_HOSTS = ["testserver"]
    settings.CHANNELS_URL = url
    settings.CHANNEL_LAYERS = channel_layers(url)
    assert isinstance(doc_store(), RedisDocStore)
    yield url
    doc_store.cache_clear()


@pytest.fixture
def live(coach: User, user: User, challenge: Challenge) -> Interview:  # noqa: F811
    interview = interview_create(coach, candidate_username="alice", challenges=[challenge], duration_minutes=30)
    return interview_open(interview, user)


def headers(user: User) -> list[tuple[bytes, bytes]]:  # noqa: F811
    client = Client()
    client.force_login(user)
    return [(b"origin", b"http://testserver"), (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())]


def test_edits_reach_the_watcher_through_redis_and_a_late_watcher_reads_the_document_there(
    redis_relay: str,
    live: Interview,
    user: User,  # noqa: F811
    coach: User,  # noqa: F811
) -> None:
    from web.config.asgi import application

    candidate_headers, coach_headers = headers(user), headers(coach)

    async def scenario() -> None:
        watcher = WebsocketCommunicator(application, f"/ws/interviews/{live.pk}/keys/", headers=coach_headers)
        assert (await watcher.connect())[0]
        assert (await watcher.receive_json_from())["docs"][SLUG]["text"] is None

        typist = WebsocketCommunicator(application, f"/ws/interviews/join/{live.token}/keys/", headers=candidate_headers)
        assert (await typist.connect())[0]
        await typist.receive_json_from()
        await typist.send_json_to({"type": "reset", "slug": SLUG, "seq": 1, "text": "x = 1\n", "sel": []})
        relayed = await watcher.receive_json_from(timeout=5)
        assert relayed["type"] == "doc" and relayed["text"] == "x = 1\n"
        sel = [{"anchor": [0, 5], "head": [0, 5]}]
        await typist.send_json_to({"type": "edit", "slug": SLUG, "seq": 2, "ops": [{"from": [0, 4], "to": [0, 5], "text": "42"}], "sel": sel})
        relayed = await watcher.receive_json_from(timeout=5)
        assert relayed["type"] == "edit" and relayed["seq"] == 2 and relayed["sel"] == sel

        late = WebsocketCommunicator(application, f"/ws/interviews/{live.pk}/keys/", headers=coach_headers)
        assert (await late.connect())[0]
        hello = await late.receive_json_from(timeout=5)
        assert hello["docs"][SLUG] == {"seq": 2, "text": "x = 42\n", "sel": sel, "at": hello["docs"][SLUG]["at"]}
        for socket in (typist, watcher, late):
            await socket.disconnect()

    async_to_sync(scenario)()


def test_racing_writers_never_lose_an_update(redis_relay: str) -> None:
    store = doc_store()
    key = "test:keys:race"

    def bump(doc: dict[str, Any] | None) -> tuple[dict[str, Any], int]:
        seq = (doc or {"seq": 0})["seq"] + 1
        return {"seq": seq, "text": "", "sel": []}, seq

    def writer() -> None:
        for _ in range(50):
            store.update(key, bump)

    threads = [threading.Thread(target=writer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.get_many([key]) == [{"seq": 200, "text": "", "sel": []}]


def test_a_socket_left_idle_longer_than_the_layers_wait_still_gets_the_next_edit(
    redis_relay: str,
    live: Interview,
    user: User,  # noqa: F811
    coach: User,  # noqa: F811
) -> None:
    # channels_redis waits for messages with a 5 s BZPOPMIN; redis-py 8 reads with a 5 s timeout unless
    # told otherwise (settings.channel_layers), which killed every socket idle for 5 s.
    import asyncio

    from web.config.asgi import application

    candidate_headers, coach_headers = headers(user), headers(coach)

    async def scenario() -> None:
        watcher = WebsocketCommunicator(application, f"/ws/interviews/{live.pk}/keys/", headers=coach_headers)
        assert (await watcher.connect())[0]
        await watcher.receive_json_from()
        typist = WebsocketCommunicator(application, f"/ws/interviews/join/{live.token}/keys/", headers=candidate_headers)
        assert (await typist.connect())[0]
        await typist.receive_json_from()
        await asyncio.sleep(7)
        await typist.send_json_to({"type": "reset", "slug": SLUG, "seq": 1, "text": "after a pause\n", "sel": []})
        assert (await watcher.receive_json_from(timeout=5))["text"] == "after a pause\n"
        assert await typist.receive_json_from(timeout=5) == {"type": "ack", "slug": SLUG, "seq": 1}
        for socket in (typist, watcher):
            await socket.disconnect()

    async_to_sync(scenario)()
