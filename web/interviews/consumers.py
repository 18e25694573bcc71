"""The interview's keystroke sockets: carry messages between the pages and web/interviews/keys.py, decide nothing.

``CandidateKeysConsumer`` (/ws/interviews/join/<token>/keys/) takes the
candidate's edits; ``WatchKeysConsumer`` (/ws/interviews/<id>/keys/) joins
the interview's group and forwards what the candidate's socket relays. Both
authenticate with the session cookie (web/config/asgi.py: the origin is
checked first) and ask ``keys`` whether the user may open them; a refusal is
sent as one message and the socket closed with 4000 + the HTTP status a page
would get (4404, 4409), so the page knows not to retry.

The service calls run in a thread pool (not the one thread that runs the
sync page views), so a slow page never holds up a keystroke.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from web.interviews import keys

logger = logging.getLogger(__name__)
T = TypeVar("T")


async def _call(func: Callable[..., T], *args: Any) -> T:
    return await database_sync_to_async(func, thread_sensitive=False)(*args)


class _KeysConsumer(AsyncJsonWebsocketConsumer):
    session: keys.KeysSession | None = None

    async def _refuse(self, exc: BaseException) -> bool:
        """Answer a refusal; close unless it refused one message of an open socket. False for an error that is not ours (re-raised by the caller)."""
        answer = keys.refusal(exc)
        if answer is None:
            return False
        message, code = answer
        await self.send_json(message)
        if self.session is not None and code != 4409:
            return True  # a bad message on an open socket: it stays open, the page has been told why
        await self.close(code=code)
        return True

    async def _open(self, opener: Callable[..., keys.KeysSession], *args: Any) -> bool:
        await self.accept()
        try:
            self.session = await _call(opener, *args, self.scope["user"])
        except Exception as exc:
            if not await self._refuse(exc):
                raise
            return False
        return True


class CandidateKeysConsumer(_KeysConsumer):
    async def connect(self) -> None:
        if await self._open(keys.keys_candidate_open, self.scope["url_route"]["kwargs"]["token"]):
            assert self.session is not None
            await self.send_json({"type": "hello", "docs": await _call(keys.keys_documents, self.session)})

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if self.session is None:
            return
        try:
            result = await _call(keys.keys_candidate_message, self.session, self.scope["user"], content)
        except Exception as exc:
            if not await self._refuse(exc):
                raise
            return
        if result.relay is not None:  # the watchers first: their delay is the one that counts
            await self.channel_layer.group_send(keys.group_name(self.session.interview.pk), {"type": "keys.relay", "message": result.relay})
        if result.reply is not None:
            await self.send_json(result.reply)


class WatchKeysConsumer(_KeysConsumer):
    group: str | None = None

    async def connect(self) -> None:
        if not await self._open(keys.keys_watch_open, int(self.scope["url_route"]["kwargs"]["interview_id"])):
            return
        assert self.session is not None
        # Join before reading the documents: an edit relayed in between arrives after the
        # hello with a seq the page already has, and is skipped, so none falls in the gap.
        self.group = keys.group_name(self.session.interview.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.send_json({"type": "hello", "docs": await _call(keys.keys_documents, self.session)})

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if self.session is None:
            return
        try:
            await self.send_json(await _call(keys.keys_watch_message, self.session, content))
        except Exception as exc:
            if not await self._refuse(exc):
                raise

    async def keys_relay(self, event: dict[str, Any]) -> None:
        await self.send_json(event["message"])
