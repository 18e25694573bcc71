"""Where the interview's live documents are kept: one JSON value per (interview, challenge), changed atomically.

The keystroke relay (web/interviews/keys.py) keeps the candidate's current
text, its sequence number and the cursor here, so that a socket opened in
any web process, or opened again after a drop, starts from the whole
current document. Two implementations of one small interface: Redis
(shared by every web process; ``CHANNELS_URL=redis://...``) and a
process-local dictionary (``memory://``: tests and single-process demos).
``update`` is a read-modify-write that no other writer can interleave with.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Protocol, TypeVar

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

T = TypeVar("T")
Doc = dict[str, Any]
Change = Callable[[Doc | None], tuple[Doc | None, T]]


class DocStore(Protocol):
    def get_many(self, keys: list[str]) -> list[Doc | None]: ...

    def update(self, key: str, change: Change[T]) -> T:
        """Call ``change(current)``; store the document it returns (None: store nothing) and return its result."""
        ...


class MemoryDocStore:
    """One process's documents; enough for tests and a single-process server."""

    def __init__(self) -> None:
        self._docs: dict[str, str] = {}
        self._lock = threading.Lock()

    def get_many(self, keys: list[str]) -> list[Doc | None]:
        with self._lock:
            return [json.loads(self._docs[k]) if k in self._docs else None for k in keys]

    def update(self, key: str, change: Change[T]) -> T:
        with self._lock:
            current = json.loads(self._docs[key]) if key in self._docs else None
            new, result = change(current)
            if new is not None:
                self._docs[key] = json.dumps(new)
            return result


class RedisDocStore:
    """Documents in Redis, changed with WATCH/MULTI so two web processes never interleave a change."""

    def __init__(self, url: str, ttl_seconds: int) -> None:
        import redis

        self._client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        self._ttl = ttl_seconds

    def get_many(self, keys: list[str]) -> list[Doc | None]:
        if not keys:
            return []
        return [json.loads(raw) if raw else None for raw in self._client.mget(keys)]

    def update(self, key: str, change: Change[T]) -> T:
        import redis

        with self._client.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)
                    raw = pipe.get(key)
                    new, result = change(json.loads(raw) if raw else None)
                    pipe.multi()
                    if new is not None:
                        pipe.set(key, json.dumps(new), ex=self._ttl)
                    pipe.execute()
                    return result
                except redis.WatchError:
                    continue  # another writer changed it between WATCH and EXEC: read again


@lru_cache(maxsize=1)
def doc_store() -> DocStore:
    """The configured store (one per process: the Redis client pools its connections)."""
    url = settings.CHANNELS_URL
    if url.startswith("memory://"):
        return MemoryDocStore()
    return RedisDocStore(url, settings.INTERVIEW_KEYS_TTL_SECONDS)


@receiver(setting_changed)
def _forget_store(setting: str, **kwargs: Any) -> None:
    # Tests switch between the memory store and a real Redis with override_settings.
    if setting in {"CHANNELS_URL", "INTERVIEW_KEYS_TTL_SECONDS"}:
        doc_store.cache_clear()
