"""The whole timeline of one interview, every kind of moment in one ordered list: what the replay plays and citations name.

Read-only, like selectors.py, and as trusted as its caller: the views hand
it only an interview that ``selectors.interview_get_for_coach`` returned.
Its moments are web/interviews/events.py's (the candidate's autosaves, the
Runs and Submits linked to the interview, the hints revealed until the end,
the focus reports and the interviewer's notes at a moment, the same the
citations name), between the interview's start and end. Code is never part
of an event (the replay fetches each snapshot's code once, from the
per-challenge timeline).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.urls import reverse
from django.utils import timezone

from web.interviews import selectors
from web.interviews.events import KINDS, Moment, interview_events, moment_kinds
from web.interviews.models import Interview, State

#: The replay skips a stretch with no moment in it longer than this (the page says so).
IDLE_GAP_SECONDS = 10

_RANK = {kind: i for i, kind in enumerate(KINDS)}


def clock(seconds: float | None) -> str:
    """mm:ss since the start (minutes go past 59: 75:02); "" when there is no start to count from."""
    if seconds is None:
        return ""
    whole = max(0, int(seconds))
    return f"{whole // 60:02d}:{whole % 60:02d}"


def offset_since_start(interview: Interview, at: datetime) -> float | None:
    return max(0.0, (at - interview.started_at).total_seconds()) if interview.started_at else None


def _event(interview: Interview, kind: str, row_id: int, at: datetime, label: str, **extra: Any) -> dict[str, Any]:
    offset = offset_since_start(interview, at)
    return {
        "key": f"{kind}:{row_id}", "id": row_id, "kind": kind, "at": at.isoformat(),
        "offset": offset, "clock": clock(offset), "label": label,
        "challenge": None, "challenge_title": None, "submission": None, "verdict": None, "url": None,
        **extra,
    }  # fmt: skip


def _from_moment(interview: Interview, m: Moment) -> dict[str, Any]:
    extra: dict[str, Any] = {"challenge": m.challenge_slug or None, "challenge_title": m.challenge or None, "submission": m.submission_id}
    if m.kind in ("run", "submit"):
        extra |= {"status": m.status, "verdict": m.verdict, "verdict_label": m.verdict_label, "score": m.score, "url": m.url}
    return _event(interview, m.kind, m.row_id, m.at, m.label, **extra, **m.extra)


def interview_timeline(interview: Interview, *, snapshots: bool = True) -> list[dict[str, Any]]:
    """Every moment of the interview (web/interviews/events.py) between its start and end, oldest first (ties:
    start, snapshot, run, submit, hint, focus, note, end; then id).

    Each event is a dict:

    - ``key``: the moment's stable ``"<kind>:<id>"``, and ``"start:<interview
      id>"``, ``"end:<interview id>"`` for the clock's start and end.
    - ``id``, ``kind`` (one of :data:`KINDS`), ``at`` (ISO 8601), ``offset``
      (seconds since the clock started, None before it did) and ``clock``
      (the offset as mm:ss), ``label`` (one line of plain text).
    - ``challenge`` (slug) and ``challenge_title`` for snapshots, runs,
      submits and hints (None for the rest); ``submission`` (id) for runs,
      submits and hints; ``verdict`` for a graded run or submit (None while
      it is queued or running); ``url``: the coach's page of a run or submit.
    - per kind: runs and submits add ``status``, ``verdict_label``, ``score``;
      hints add ``hint_id`` and ``tier``; focus adds ``state`` ("lost" or
      "regained") and ``reason`` ("tab" or "window"); notes add ``author``.

    ``snapshots=False`` leaves the autosaves out (a long interview has hundreds).
    """
    kinds = [k for k in moment_kinds() if snapshots or k != "snapshot"]
    events: list[dict[str, Any]] = []
    if interview.started_at:
        events.append(_event(interview, "start", interview.pk, interview.started_at, "The candidate opened the interview; the clock started"))
    events += [_from_moment(interview, m) for m in interview_events(interview, kinds)]
    end = interview.ends_at()
    if end is not None and interview.state(timezone.now()) == State.ENDED:
        label = "Ended by the interviewer" if interview.ended_by_coach else "Time ran out"
        events.append(_event(interview, "end", interview.pk, end, label))
    events.sort(key=lambda e: (datetime.fromisoformat(e["at"]), _RANK[e["kind"]], e["id"]))
    return events


def interview_replay(interview: Interview) -> dict[str, Any]:
    """The replay's data: the clock's span, the challenges (with their code timelines' URLs) and every moment."""
    now = timezone.now()
    state = interview.state(now)
    end = interview.ends_at() if state == State.ENDED else now
    return {
        "state": state,
        "started_at": interview.started_at.isoformat() if interview.started_at else None,
        "until": end.isoformat() if interview.started_at and end else None,
        "span": offset_since_start(interview, end) if interview.started_at and end else 0,
        "idle_gap_seconds": IDLE_GAP_SECONDS,
        "challenges": [
            {"slug": c.slug, "title": c.title, "code_url": reverse("interview-timeline", args=[interview.pk, c.slug])}
            for c in selectors.interview_challenges(interview)
        ],
        "events": interview_timeline(interview),
    }
