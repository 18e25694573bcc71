"""The keystroke relay: web/interviews/keys.py (the rules) and consumers.py (the sockets).

The service tests run on the in-memory document store; the socket tests
drive the real ASGI application (origin check, session cookie, routing)
with channels' WebsocketCommunicator on the in-memory channel layer. The
same relay over the real Redis layer and store is
tests/integration/test_interview_keys_redis.py.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from web.challenges.models import Challenge
from web.interviews import keys
from web.interviews.keys import KeysMessageInvalid, apply_ops, keys_candidate_message, keys_candidate_open, keys_documents, keys_watch_open
from web.interviews.keys_store import doc_store
from web.interviews.models import Interview, KeyEvent
from web.interviews.services import InterviewError, InterviewLocked, NotInInterview, interview_create, interview_end, interview_open
from web.submissions.services.intake import MAX_CODE_BYTES

SLUG = "add-two"


@pytest.fixture(autouse=True)
def _fresh_store() -> None:
    doc_store.cache_clear()  # a new in-memory store per test


@pytest.fixture
def interview(coach: User, user: User, challenge: Challenge) -> Interview:
    return interview_create(coach, candidate_username="alice", challenges=[challenge], duration_minutes=30)


@pytest.fixture
def live(interview: Interview, user: User) -> Interview:
    return interview_open(interview, user)


def edit(seq: int, ops: list[dict[str, Any]], sel: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": "edit", "slug": SLUG, "seq": seq, "ops": ops, "sel": sel or [], **extra}


def op(a: tuple[int, int], b: tuple[int, int], text: str) -> dict[str, Any]:
    return {"from": list(a), "to": list(b), "text": text}


def reset(seq: int, text: str) -> dict[str, Any]:
    return {"type": "reset", "slug": SLUG, "seq": seq, "text": text, "sel": []}


# --- Ops ----------------------------------------------------------------------------------


def test_ops_apply_in_order_across_lines() -> None:
    text = "def add(a, b):\n    return 0\n"
    text = apply_ops(text, [op((1, 11), (1, 12), "a + b"), op((2, 0), (2, 0), "# done")])
    assert text == "def add(a, b):\n    return a + b\n# done"
    assert apply_ops("one\ntwo\nthree", [op((0, 2), (2, 1), "")]) == "onhree"


def test_positions_count_utf16_units_as_the_browser_does() -> None:
    # "😀" is two UTF-16 units: ch 3 is just after it, as CodeMirror counts.
    assert apply_ops("x😀y", [op((0, 3), (0, 3), "!")]) == "x😀!y"
    with pytest.raises(ValueError):
        apply_ops("x😀y", [op((0, 2), (0, 2), "!")])  # inside the surrogate pair


@pytest.mark.parametrize(
    "bad",
    [
        op((5, 0), (5, 0), "x"),
        op((0, 9), (0, 9), "x"),
        op((0, 2), (0, 1), "x"),
        {"from": [0, 0], "to": [0, 0]},
        {"from": "0", "to": [0, 0], "text": ""},
    ],
)
def test_ops_that_do_not_fit_the_text_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        apply_ops("abc\n", [bad])


# --- The candidate's messages ---------------------------------------------------------------


def test_edits_in_sequence_build_the_document_that_a_joining_watcher_gets(live: Interview, user: User, coach: User) -> None:
    session = keys_candidate_open(live.token, user)
    first = keys_candidate_message(session, user, reset(1, "def add(a, b):\n    return 0\n"))
    assert first.reply == {"type": "ack", "slug": SLUG, "seq": 1}
    assert first.relay is not None and first.relay["type"] == "doc"
    sel = [{"anchor": [1, 16], "head": [1, 16]}]
    second = keys_candidate_message(session, user, edit(2, [op((1, 11), (1, 12), "a + b")], sel, sent=12.5))
    assert second.reply == {"type": "ack", "slug": SLUG, "seq": 2}
    assert second.relay is not None
    typed = [op((1, 11), (1, 12), "a + b")]
    assert second.relay == {"type": "edit", "slug": SLUG, "seq": 2, "ops": typed, "sel": sel, "sent": 12.5, "at": second.relay["at"]}
    docs = keys_documents(keys_watch_open(live.pk, coach))
    assert docs[SLUG]["seq"] == 2
    assert docs[SLUG]["text"] == "def add(a, b):\n    return a + b\n"
    assert docs[SLUG]["sel"] == sel


def test_every_applied_edit_and_reset_is_kept_for_the_replay_and_rebuilds_each_state(
    live: Interview, user: User, coach: User, client: Client
) -> None:
    """The replay's keystroke resolution (issue 29): each applied message becomes a KeyEvent; refused ones do not; the
    coach's code timeline returns them after an id, and replaying them gives the text after every keystroke."""
    session = keys_candidate_open(live.token, user)
    keys_candidate_message(session, user, reset(1, "def add(a, b):\n    return 0\n"))
    typed = "a + b"
    for i, char in enumerate(typed):
        keys_candidate_message(session, user, edit(2 + i, [op((1, 11 + i), (1, 12 if i == 0 else 11 + i), char)]))
    keys_candidate_message(session, user, edit(99, [op((0, 0), (0, 0), "x")]))  # out of sequence: refused, not kept
    keys_candidate_message(session, user, {"type": "cursor", "slug": SLUG, "seq": 6, "sel": []})  # no text change
    events = list(KeyEvent.objects.filter(interview=live).order_by("id"))
    assert [(e.kind, e.seq) for e in events] == [("reset", 1), *[("edit", 2 + i) for i in range(len(typed))]]

    client.force_login(coach)
    url = reverse("interview-timeline", args=[live.pk, SLUG])
    answer = client.get(url, {"keys_after": 0}).json()
    assert answer["more_keys"] is False and [k["kind"] for k in answer["keys"]] == ["reset"] + ["edit"] * len(typed)
    states, text = [], ""
    for k in answer["keys"]:
        text = k["text"] if k["kind"] == "reset" else apply_ops(text, k["ops"])
        states.append(text.splitlines()[1])
    assert states == ["    return 0", "    return a", "    return a ", "    return a +", "    return a + ", "    return a + b"]
    assert text == keys_documents(session)[SLUG]["text"]
    later = client.get(url, {"keys_after": answer["keys"][2]["id"]}).json()
    assert len(later["keys"]) == len(typed) - 2
    assert client.get(url, {"keys_after": "x"}).status_code == 400


def test_an_edit_out_of_sequence_changes_nothing_and_is_answered_with_the_servers_copy(live: Interview, user: User) -> None:
    session = keys_candidate_open(live.token, user)
    keys_candidate_message(session, user, reset(1, "abc"))
    for seq in (1, 3):  # a repeat of one the server has, and one after a gap
        result = keys_candidate_message(session, user, edit(seq, [op((0, 0), (0, 0), "x")]))
        assert result.reply == {"type": "resync", "slug": SLUG, "refused": seq, "seq": 1, "text": "abc", "sel": [], "at": result.reply["at"]}
        assert result.relay is None
    assert keys_documents(session)[SLUG]["text"] == "abc"


def test_an_edit_before_any_text_asks_for_the_whole_text(live: Interview, user: User) -> None:
    session = keys_candidate_open(live.token, user)
    result = keys_candidate_message(session, user, edit(1, [op((0, 0), (0, 0), "x")]))
    assert result.reply is not None and result.reply["type"] == "resync" and result.reply["text"] is None
    assert keys_documents(session)[SLUG] == {"seq": 0, "text": None, "sel": [], "at": None}


def test_ops_that_do_not_fit_the_servers_text_ask_for_a_resync(live: Interview, user: User) -> None:
    session = keys_candidate_open(live.token, user)
    keys_candidate_message(session, user, reset(1, "abc"))
    result = keys_candidate_message(session, user, edit(2, [op((3, 0), (3, 0), "x")]))
    assert result.reply is not None and result.reply["type"] == "resync" and result.reply["seq"] == 1


def test_a_cursor_move_is_kept_only_for_the_current_text(live: Interview, user: User) -> None:
    session = keys_candidate_open(live.token, user)
    keys_candidate_message(session, user, reset(1, "abc"))
    sel = [{"anchor": [0, 0], "head": [0, 3]}]
    moved = keys_candidate_message(session, user, {"type": "cursor", "slug": SLUG, "seq": 1, "sel": sel})
    assert moved.relay == {"type": "cursor", "slug": SLUG, "seq": 1, "sel": sel, "sent": None}
    stale = keys_candidate_message(session, user, {"type": "cursor", "slug": SLUG, "seq": 0, "sel": []})
    assert stale.relay is None and stale.reply is None
    assert keys_documents(session)[SLUG]["sel"] == sel


@pytest.mark.parametrize(
    "message",
    [
        "not an object",
        {"type": "delete", "slug": SLUG, "seq": 1},
        {"type": "edit", "slug": SLUG, "seq": "1", "ops": [op((0, 0), (0, 0), "x")]},
        {"type": "edit", "slug": SLUG, "seq": 1, "ops": []},
        {"type": "reset", "slug": SLUG, "seq": 1},
        {"type": "cursor", "slug": SLUG, "seq": 1, "sel": [{"anchor": [0, -1], "head": [0, 0]}]},
    ],
)
def test_malformed_messages_are_refused_with_a_reason(live: Interview, user: User, message: Any) -> None:
    session = keys_candidate_open(live.token, user)
    with pytest.raises(KeysMessageInvalid):
        keys_candidate_message(session, user, message)


def test_a_challenge_outside_the_interview_is_not_found(live: Interview, user: User) -> None:
    session = keys_candidate_open(live.token, user)
    with pytest.raises(NotInInterview):
        keys_candidate_message(session, user, {**reset(1, "x"), "slug": "other-challenge"})


def test_the_text_obeys_the_autosaves_size_limit(live: Interview, user: User) -> None:
    session = keys_candidate_open(live.token, user)
    with pytest.raises(InterviewError, match="limit"):
        keys_candidate_message(session, user, reset(1, "x" * (MAX_CODE_BYTES + 1)))
    keys_candidate_message(session, user, reset(1, "x" * MAX_CODE_BYTES))
    with pytest.raises(InterviewError, match="limit"):
        keys_candidate_message(session, user, edit(2, [op((0, 0), (0, 0), "y")]))
    assert keys_documents(session)[SLUG]["seq"] == 1


def test_after_the_end_the_candidate_can_neither_open_nor_send(live: Interview, user: User, coach: User) -> None:
    session = keys_candidate_open(live.token, user)
    interview_end(live, coach)
    with pytest.raises(InterviewLocked, match="ended"):
        keys_candidate_message(session, user, reset(1, "late"))
    with pytest.raises(InterviewLocked):
        keys_candidate_open(live.token, user)
    assert keys_documents(session)[SLUG]["text"] is None


def test_time_running_out_locks_the_candidate_too(live: Interview, user: User) -> None:
    session = keys_candidate_open(live.token, user)
    Interview.objects.filter(pk=live.pk).update(started_at=timezone.now() - timedelta(minutes=31))
    with pytest.raises(InterviewLocked, match="Time is up"):
        keys_candidate_message(session, user, reset(1, "late"))


def test_before_the_start_the_candidate_socket_is_refused(interview: Interview, user: User) -> None:
    with pytest.raises(InterviewLocked, match="not started"):
        keys_candidate_open(interview.token, user)


def test_only_the_coach_or_staff_may_watch(live: Interview, coach: User, staff: User, other_coach: User, user: User, other_user: User) -> None:
    assert keys_watch_open(live.pk, coach).slugs == (SLUG,)
    assert keys_watch_open(live.pk, staff).interview == live
    for someone in (other_coach, user, other_user):
        with pytest.raises(keys.NotFound):
            keys_watch_open(live.pk, someone)


def test_only_the_invited_candidate_may_send(live: Interview, other_user: User, coach: User) -> None:
    for someone in (other_user, coach):
        with pytest.raises(keys.NotFound):
            keys_candidate_open(live.token, someone)


# --- The sockets ------------------------------------------------------------------------------

ORIGIN = (b"origin", b"http://testserver")


def _cookie_headers(client: Client, user: User | None, origin: tuple[bytes, bytes] | None = ORIGIN) -> list[tuple[bytes, bytes]]:
    headers = [origin] if origin else []
    if user is not None:
        client.force_login(user)
        headers.append((b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode()))
    return headers


def communicator(path: str, headers: list[tuple[bytes, bytes]]) -> WebsocketCommunicator:
    from web.config.asgi import application

    return WebsocketCommunicator(application, path, headers=headers)


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    async_to_sync(scenario)()


@pytest.fixture
def sockets(transactional_db: Any, settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["testserver"]


def candidate_path(interview: Interview) -> str:
    return f"/ws/interviews/join/{interview.token}/keys/"


def watch_path(interview: Interview) -> str:
    return f"/ws/interviews/{interview.pk}/keys/"


def test_the_watcher_gets_the_whole_document_then_each_edit_as_typed(sockets: None, live: Interview, user: User, coach: User) -> None:
    candidate_headers = _cookie_headers(Client(), user)
    watch_headers = _cookie_headers(Client(), coach)

    async def scenario() -> None:
        typist = communicator(candidate_path(live), candidate_headers)
        assert (await typist.connect())[0]
        hello = await typist.receive_json_from()
        assert hello == {"type": "hello", "docs": {SLUG: {"seq": 0, "text": None, "sel": [], "at": None}}}
        await typist.send_json_to(reset(1, "def add(a, b):\n    return 0\n"))
        assert await typist.receive_json_from() == {"type": "ack", "slug": SLUG, "seq": 1}

        watcher = communicator(watch_path(live), watch_headers)
        assert (await watcher.connect())[0]
        hello = await watcher.receive_json_from()
        assert hello["docs"][SLUG]["text"] == "def add(a, b):\n    return 0\n" and hello["docs"][SLUG]["seq"] == 1

        sel = [{"anchor": [1, 11], "head": [1, 16]}]
        await typist.send_json_to(edit(2, [op((1, 11), (1, 12), "a + b")], sel))
        relayed = await watcher.receive_json_from()
        assert relayed["type"] == "edit" and relayed["seq"] == 2 and relayed["ops"] == [op((1, 11), (1, 12), "a + b")] and relayed["sel"] == sel
        assert await typist.receive_json_from() == {"type": "ack", "slug": SLUG, "seq": 2}

        await typist.send_json_to({"type": "cursor", "slug": SLUG, "seq": 2, "sel": [{"anchor": [0, 0], "head": [0, 0]}]})
        assert (await watcher.receive_json_from())["type"] == "cursor"

        # A watcher that missed something asks for the document again.
        await watcher.send_json_to({"type": "sync", "slug": SLUG})
        doc = await watcher.receive_json_from()
        assert doc["type"] == "doc" and doc["seq"] == 2 and doc["text"] == "def add(a, b):\n    return a + b\n"
        await typist.disconnect()
        await watcher.disconnect()

    run(scenario)


def test_a_reconnecting_candidate_learns_what_the_server_has(sockets: None, live: Interview, user: User) -> None:
    headers = _cookie_headers(Client(), user)

    async def scenario() -> None:
        first = communicator(candidate_path(live), headers)
        await first.connect()
        await first.receive_json_from()
        await first.send_json_to(reset(1, "abc"))
        await first.receive_json_from()
        await first.send_json_to(edit(2, [op((0, 3), (0, 3), "d")]))
        await first.receive_json_from()
        await first.disconnect()

        again = communicator(candidate_path(live), headers)
        await again.connect()
        hello = await again.receive_json_from()
        assert hello["docs"][SLUG]["seq"] == 2 and hello["docs"][SLUG]["text"] == "abcd"
        # Resending an edit the server already has is answered with its copy, not applied twice.
        await again.send_json_to(edit(2, [op((0, 3), (0, 3), "d")]))
        assert (await again.receive_json_from())["type"] == "resync"
        await again.disconnect()

    run(scenario)


def _refused(path: str, headers: list[tuple[bytes, bytes]]) -> tuple[dict[str, Any], int]:
    outcome: dict[str, Any] = {}

    async def scenario() -> None:
        socket = communicator(path, headers)
        connected, _ = await socket.connect()
        assert connected
        outcome["message"] = await socket.receive_json_from()
        closed = await socket.receive_output()
        assert closed["type"] == "websocket.close"
        outcome["code"] = closed["code"]
        await socket.disconnect()

    run(scenario)
    return outcome["message"], outcome["code"]


def test_another_coach_cannot_watch(sockets: None, live: Interview, other_coach: User) -> None:
    message, code = _refused(watch_path(live), _cookie_headers(Client(), other_coach))
    assert code == 4404 and message == {"type": "refused", "status": 404, "message": "No such interview."}


def test_the_candidate_cannot_watch_their_own_interview(sockets: None, live: Interview, user: User) -> None:
    assert _refused(watch_path(live), _cookie_headers(Client(), user))[1] == 4404


def test_another_candidate_cannot_send(sockets: None, live: Interview, other_user: User) -> None:
    assert _refused(candidate_path(live), _cookie_headers(Client(), other_user))[1] == 4404


def test_the_coach_cannot_send_as_the_candidate(sockets: None, live: Interview, coach: User) -> None:
    assert _refused(candidate_path(live), _cookie_headers(Client(), coach))[1] == 4404


def test_anonymous_sockets_are_refused(sockets: None, live: Interview) -> None:
    assert _refused(candidate_path(live), _cookie_headers(Client(), None))[1] == 4404
    assert _refused(watch_path(live), _cookie_headers(Client(), None))[1] == 4404


def test_an_ended_interview_refuses_the_candidate_and_locks_an_open_socket(sockets: None, live: Interview, user: User, coach: User) -> None:
    headers = _cookie_headers(Client(), user)

    async def scenario() -> None:
        typist = communicator(candidate_path(live), headers)
        await typist.connect()
        await typist.receive_json_from()
        await sync_to_async(interview_end, thread_sensitive=False)(live, coach)
        await typist.send_json_to(reset(1, "after the end"))
        locked = await typist.receive_json_from()
        assert locked["type"] == "locked" and "ended" in locked["message"]
        closed = await typist.receive_output()
        assert closed == {"type": "websocket.close", "code": 4409}

    run(scenario)
    message, code = _refused(candidate_path(live), headers)
    assert code == 4409 and message["type"] == "locked"


def test_a_bad_message_is_answered_and_the_socket_stays_open(sockets: None, live: Interview, user: User) -> None:
    headers = _cookie_headers(Client(), user)

    async def scenario() -> None:
        typist = communicator(candidate_path(live), headers)
        await typist.connect()
        await typist.receive_json_from()
        await typist.send_json_to({"type": "delete", "slug": SLUG, "seq": 1})
        answer = await typist.receive_json_from()
        assert answer["type"] == "refused" and answer["status"] == 400 and "Unknown message type" in answer["message"]
        await typist.send_json_to(reset(1, "still here"))
        assert await typist.receive_json_from() == {"type": "ack", "slug": SLUG, "seq": 1}
        await typist.disconnect()

    run(scenario)


def test_a_socket_from_another_sites_page_is_rejected_before_anything_else(sockets: None, live: Interview, coach: User) -> None:
    headers = _cookie_headers(Client(), coach, origin=(b"origin", b"https://evil.example"))

    async def scenario() -> None:
        socket = communicator(watch_path(live), headers)
        connected, _ = await socket.connect()
        assert not connected  # the origin validator closes the handshake; the session is never read

    run(scenario)


# --- The pages find their sockets ---------------------------------------------------------------


def test_the_pages_name_their_sockets_on_their_own_origin(live: Interview, coach: User, user: User) -> None:
    coach_client, candidate_client = Client(), Client()
    coach_client.force_login(coach)
    candidate_client.force_login(user)
    live_page = coach_client.get(f"/interviews/{live.pk}/live/")
    assert live_page.status_code == 200
    assert 'id="keys-status"' in live_page.content.decode() and "js/interview-keys.js" in live_page.content.decode()
    assert live_page.context["page_config"]["keysSocket"] == f"/ws/interviews/{live.pk}/keys/"
    candidate_page = candidate_client.get(f"/interviews/join/{live.token}/")
    assert candidate_page.status_code == 200 and "js/interview-keys.js" in candidate_page.content.decode()
    assert candidate_page.context["page_config"]["keysSocket"] == f"/ws/interviews/join/{live.token}/keys/"
