"""The interviewer's keystroke-level view: the candidate's edits, relayed as they are typed.

The candidate's page sends each CodeMirror change over a websocket
(web/interviews/consumers.py) as ops with a sequence number, plus the
cursor and selection; the interviewer's page applies the same ops to its
copy and draws the cursor. This module holds the rules, the sockets only
carry messages:

- who may do what: the candidate sends only while the interview is live
  (``services``' own checks, the ones ``snapshot_save`` applies); the
  interview's coach or staff may watch (``selectors.interview_get_for_coach``);
  anyone else is refused as if the interview did not exist;
- the current document of each challenge, kept in the store
  (web/interviews/keys_store.py) as ``{seq, text, sel, at}``: an edit is
  applied only if its ``seq`` is the stored one plus one, so the server
  never holds a text the candidate did not have, and a candidate that
  reconnects learns from ``seq`` which of its edits arrived;
- what a (re)joining side gets: every challenge's whole document at once.

The text is the editor's, so positions are CodeMirror's: ``[line, ch]``
with ``ch`` in UTF-16 code units. Every applied edit and reset is also kept
(``KeyEvent``): the replay shows the code keystroke by keystroke from them.
Autosaved snapshots stay the record of the interview (scorecard) and the
replay's fallback when sockets fail.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.utils import timezone

from web.errors import NotFound, error_answer
from web.interviews import selectors
from web.interviews.keys_store import Doc, doc_store
from web.interviews.models import Interview, KeyEvent
from web.interviews.services import InterviewError, NotInInterview, require_candidate, require_live, snapshot_text

MAX_OPS_PER_MESSAGE = 200
MAX_SELECTIONS = 20

User = AbstractBaseUser | AnonymousUser


class KeysMessageInvalid(InterviewError):
    """A message the page would never send (wrong shape or types); the socket answers with the reason."""


@dataclass(frozen=True)
class KeysSession:
    """One socket's interview, loaded once when it opens; its slugs never change."""

    interview: Interview
    slugs: tuple[str, ...]
    # {slug: challenge id}: where each applied message is recorded for the replay (KeyEvent).
    challenge_ids: Mapping[str, int] = field(default_factory=dict)


@dataclass
class KeysResult:
    """What a candidate's message led to: ``reply`` goes back to the candidate, ``relay`` to the watchers."""

    reply: dict[str, Any] | None = None
    relay: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def group_name(interview_id: int) -> str:
    """The channel-layer group of one interview's watchers."""
    return f"interview-keys-{interview_id}"


def candidate_socket_path(token: str) -> str:
    """Where the candidate's page opens its socket (web/interviews/routing.py), on the page's own origin."""
    return f"/ws/interviews/join/{token}/keys/"


def watch_socket_path(interview_id: int) -> str:
    """Where the interviewer's live view opens its socket."""
    return f"/ws/interviews/{interview_id}/keys/"


def _key(interview_id: int, slug: str) -> str:
    return f"mlprep:keys:{interview_id}:{slug}"


def _session(interview: Interview) -> KeysSession:
    challenges = selectors.interview_challenges(interview)
    return KeysSession(interview, tuple(c.slug for c in challenges), {c.slug: c.pk for c in challenges})


# --- Who may open a socket -------------------------------------------------------------


def keys_watch_open(interview_id: int, user: User) -> KeysSession:
    """The interviewer's socket: the interview's coach or staff, whatever its state; else NotFound."""
    interview = selectors.interview_get_for_coach(interview_id, user)
    if interview is None:
        raise NotFound("No such interview.")
    return _session(interview)


def keys_candidate_open(token: str, user: User) -> KeysSession:
    """The candidate's socket: the invited candidate, while the interview is live (InterviewLocked otherwise)."""
    interview = selectors.interview_get_for_candidate(token, user)
    if interview is None:
        raise NotFound("No such interview.")
    require_live(interview)
    return _session(interview)


# --- Documents ---------------------------------------------------------------------------


def _public(doc: Doc | None) -> dict[str, Any]:
    if doc is None:
        return {"seq": 0, "text": None, "sel": [], "at": None}
    return {"seq": doc["seq"], "text": doc["text"], "sel": doc.get("sel", []), "at": doc.get("at")}


def keys_documents(session: KeysSession) -> dict[str, dict[str, Any]]:
    """{slug: {seq, text, sel, at}} for every challenge (seq 0 and text None: nothing received yet)."""
    keys = [_key(session.interview.pk, slug) for slug in session.slugs]
    return {slug: _public(doc) for slug, doc in zip(session.slugs, doc_store().get_many(keys), strict=True)}


def keys_document(session: KeysSession, slug: str) -> dict[str, Any]:
    """One challenge's document, for a watcher that saw a gap in the sequence."""
    if slug not in session.slugs:
        raise NotInInterview(f"The challenge {slug!r} is not part of this interview.")
    return {"slug": slug, **keys_documents(session)[slug]}


# --- Positions and ops ---------------------------------------------------------------------


def _offset(lines: list[str], pos: Any) -> tuple[int, int]:
    """(line, index into that line's str) for a CodeMirror [line, ch]; ValueError if outside the text."""
    if not (isinstance(pos, list) and len(pos) == 2 and all(type(n) is int for n in pos)):
        raise ValueError("a position is [line, ch]")
    line, ch = pos
    if not 0 <= line < len(lines):
        raise ValueError("line outside the text")
    units = lines[line].encode("utf-16-le")
    if not 0 <= ch * 2 <= len(units):
        raise ValueError("ch outside the line")
    # ch counts UTF-16 code units (JavaScript strings); one that splits a surrogate pair fails to decode.
    return line, len(units[: ch * 2].decode("utf-16-le"))


def apply_ops(text: str, ops: list[Any]) -> str:
    """The text after CodeMirror's changes, each ``{"from": [l, ch], "to": [l, ch], "text": str}``, in order.

    ValueError if any op does not fit the text it applies to (the client's
    copy and this one differ: the caller asks for a resync).
    """
    for op in ops:
        if not isinstance(op, Mapping) or not isinstance(op.get("text"), str):
            raise ValueError("an op is {from, to, text}")
        lines = text.split("\n")
        (l1, c1), (l2, c2) = _offset(lines, op.get("from")), _offset(lines, op.get("to"))
        if (l1, c1) > (l2, c2):
            raise ValueError("from is after to")
        start = sum(len(s) + 1 for s in lines[:l1]) + c1
        end = sum(len(s) + 1 for s in lines[:l2]) + c2
        text = text[:start] + op["text"] + text[end:]
    return text


def _selections(raw: Any) -> list[dict[str, list[int]]]:
    """The cursor and selections, validated: [{anchor: [l, ch], head: [l, ch]}] (positions checked by shape only)."""
    if raw is None:
        return []
    if not isinstance(raw, list) or len(raw) > MAX_SELECTIONS:
        raise KeysMessageInvalid(f"sel must be a list of at most {MAX_SELECTIONS} {{anchor, head}} ranges.")
    out = []
    for r in raw:
        if not isinstance(r, Mapping):
            raise KeysMessageInvalid("Each selection is {anchor: [line, ch], head: [line, ch]}.")
        pair = {}
        for end in ("anchor", "head"):
            pos = r.get(end)
            if not (isinstance(pos, list) and len(pos) == 2 and all(type(n) is int and n >= 0 for n in pos)):
                raise KeysMessageInvalid("Each selection is {anchor: [line, ch], head: [line, ch]}.")
            pair[end] = list(pos)
        out.append(pair)
    return out


# --- The candidate's messages --------------------------------------------------------------


def keys_candidate_message(session: KeysSession, user: User, message: Any) -> KeysResult:
    """Apply one message from the candidate's socket: ``edit``, ``reset`` or ``cursor``.

    - ``{"type": "edit", "slug", "seq", "ops", "sel", "sent"}``: applied if
      ``seq`` is the stored one plus one; answered ``ack``, relayed to the
      watchers as it came (``sent`` is the client's clock, echoed for
      delay measurements);
    - ``{"type": "reset", "slug", "seq", "text", "sel"}``: the whole text,
      for a page that has no common base with the server (first contact, a
      lost store, a second tab); same sequence rule;
    - ``{"type": "cursor", "slug", "seq", "sel"}``: the cursor moved
      without an edit; kept if ``seq`` is the current one.

    A message out of sequence, or ops that do not fit the stored text, is
    answered ``resync`` with the server's ``seq`` and text; the page then
    sends a ``reset`` with its own text. The interview's rules come first:
    only its candidate, only while it is live (InterviewLocked after the end).
    """
    interview = session.interview
    require_candidate(interview, user)
    if not isinstance(message, Mapping):
        raise KeysMessageInvalid("Send a JSON object with a type.")
    kind, slug, seq = message.get("type"), message.get("slug"), message.get("seq")
    if kind not in {"edit", "reset", "cursor"}:
        raise KeysMessageInvalid(f"Unknown message type {kind!r}; send edit, reset or cursor.")
    if not isinstance(slug, str) or slug not in session.slugs:
        raise NotInInterview(f"The challenge {slug!r} is not part of this interview.")
    if type(seq) is not int or seq < 0:
        raise KeysMessageInvalid("seq must be a whole number.")
    sel = _selections(message.get("sel"))
    ops = message.get("ops")
    if kind == "edit" and not (isinstance(ops, list) and 0 < len(ops) <= MAX_OPS_PER_MESSAGE):
        raise KeysMessageInvalid(f"An edit carries 1 to {MAX_OPS_PER_MESSAGE} ops.")
    reset_text = message.get("text")
    if kind == "reset":
        if not isinstance(reset_text, str):
            raise KeysMessageInvalid("A reset carries the whole text.")
        reset_text = snapshot_text(reset_text)  # the autosave's rules: size, no NUL byte
    sent = message.get("sent")
    sent = sent if isinstance(sent, int | float) and not isinstance(sent, bool) else None
    require_live(interview)  # the coach may have ended it a moment ago: the server enforces the end

    now = timezone.now().isoformat()

    def change(doc: Doc | None) -> tuple[Doc | None, KeysResult]:
        current = doc["seq"] if doc else 0
        # "refused" names the message this answers: the page ignores answers to messages it sent before its last reset.
        resync = KeysResult(reply={"type": "resync", "slug": slug, "refused": seq, **_public(doc)})
        if kind == "cursor":
            if doc is None or seq != current:
                return None, KeysResult()  # a stale cursor: the next edit carries the right one
            return {**doc, "sel": sel}, KeysResult(relay={"type": "cursor", "slug": slug, "seq": seq, "sel": sel, "sent": sent})
        if seq != current + 1:
            return None, resync
        if kind == "reset":
            text = reset_text
            relay = {"type": "doc", "slug": slug, "seq": seq, "text": text, "sel": sel, "at": now, "sent": sent}
        else:
            if doc is None:
                return None, resync
            try:
                text = snapshot_text(apply_ops(doc["text"], ops))
            except ValueError:
                return None, resync
            relay = {"type": "edit", "slug": slug, "seq": seq, "ops": ops, "sel": sel, "at": now, "sent": sent}
        new = {"seq": seq, "text": text, "sel": sel, "at": now}
        return new, KeysResult(reply={"type": "ack", "slug": slug, "seq": seq}, relay=relay)

    result = doc_store().update(_key(interview.pk, slug), change)
    _record(session, slug, result.relay)
    return result


def _record(session: KeysSession, slug: str, relay: Mapping[str, Any] | None) -> None:
    """Keep an applied edit or reset for the replay (KeyEvent): the store holds only the current document."""
    if relay is None or relay.get("type") not in ("edit", "doc") or slug not in session.challenge_ids:
        return
    reset = relay["type"] == "doc"
    KeyEvent.objects.create(
        interview=session.interview, challenge_id=session.challenge_ids[slug], seq=relay["seq"],
        kind=KeyEvent.Kind.RESET if reset else KeyEvent.Kind.EDIT, ops=None if reset else relay["ops"],
        text=relay["text"] if reset else "", created_at=timezone.now(),
    )  # fmt: skip


def keys_watch_message(session: KeysSession, message: Any) -> dict[str, Any]:
    """The interviewer's page asks again for one document (``{"type": "sync", "slug"}``): the answer is the whole of it."""
    if not isinstance(message, Mapping) or message.get("type") != "sync":
        raise KeysMessageInvalid('The interviewer\'s socket takes {"type": "sync", "slug": ...} only.')
    return {"type": "doc", **keys_document(session, str(message.get("slug")))}


def refusal(exc: BaseException) -> tuple[dict[str, Any], int] | None:
    """A socket's answer to an error: the message and the close code, 4000 + the HTTP status a page would get.

    4404 not yours (or no such interview), 4409 not live, 4400 a bad message,
    4503 the database was busy. None for an error that is not ours (a bug).
    """
    answer = error_answer(exc)
    if answer is None:
        return None
    kind = "locked" if answer.status == 409 else "refused"
    return {"type": kind, "status": answer.status, "message": answer.message}, 4000 + answer.status
