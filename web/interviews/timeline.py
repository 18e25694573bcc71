"""The whole timeline of one interview, every kind of moment in one ordered list: what the replay plays and citations name.

Read-only, like selectors.py, and as trusted as its caller: the views hand
it only an interview that ``selectors.interview_get_for_coach`` returned.
Moments come from the interview's own rows: its start and end, the
candidate's autosaves (``Snapshot``), the Runs and Submits linked to it,
the hints its candidate revealed (until the end), the candidate's focus
reports (``FocusEvent``) and the interviewer's notes at a moment
(``TimelineNote``). Code is never part of an event (the replay fetches each
snapshot's code once, from the per-challenge timeline).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.urls import reverse
from django.utils import timezone

from web.interviews import selectors
from web.interviews.models import FocusEvent, Interview, Snapshot, State, TimelineNote
from web.submissions.models import HintReveal, Status, Submission

#: The replay skips a stretch with no moment in it longer than this (the page says so).
IDLE_GAP_SECONDS = 10

#: Kinds, in the order the timeline lists moments that share a timestamp.
KINDS = ("start", "snapshot", "run", "submit", "hint", "focus", "note", "end")
_RANK = {kind: i for i, kind in enumerate(KINDS)}
_TIER = {1: "nudge", 2: "concept", 3: "near-solution"}


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


def _submission_label(s: Submission) -> str:
    kind = s.get_kind_display()
    if s.status != Status.DONE:
        return f"{kind} #{s.pk}: {s.get_status_display().lower()}"
    result = s.get_verdict_display() if s.verdict else "done"
    return f"{kind} #{s.pk}: {result}" + (f", score {s.score:.1f}" if s.score is not None else "")


def interview_timeline(interview: Interview, *, snapshots: bool = True) -> list[dict[str, Any]]:
    """Every moment of the interview, oldest first (ties: start, snapshot, run, submit, hint, focus, note, end; then id).

    Each event is a dict:

    - ``key``: stable, ``"<kind>:<id>"``, the id being the row's primary key in
      its own table: ``"start:<interview id>"``, ``"snapshot:<Snapshot id>"``,
      ``"run:<Submission id>"``, ``"submit:<Submission id>"``,
      ``"hint:<HintReveal id>"``, ``"focus:<FocusEvent id>"``,
      ``"note:<TimelineNote id>"``, ``"end:<interview id>"``. A key names the
      same moment for as long as the row exists, so a citation can store it.
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
    titles = {c.pk: (c.slug, c.title) for c in selectors.interview_challenges(interview)}

    def about(challenge_id: int) -> dict[str, Any]:
        slug, title = titles.get(challenge_id, (None, None))
        return {"challenge": slug, "challenge_title": title}

    events: list[dict[str, Any]] = []
    if interview.started_at:
        events.append(_event(interview, "start", interview.pk, interview.started_at, "The candidate opened the interview; the clock started"))
    if snapshots:
        rows = Snapshot.objects.filter(interview=interview).only("id", "challenge_id", "created_at")
        for snap in rows:
            events.append(_event(interview, "snapshot", snap.pk, snap.created_at, "Autosave", **about(snap.challenge_id)))
    for s in selectors.interview_submissions(interview):
        events.append(_event(
            interview, s.kind, s.pk, s.created_at, _submission_label(s), **about(s.challenge_id),
            submission=s.pk, status=s.status, verdict=(s.verdict or None) if s.status == Status.DONE else None,
            verdict_label=s.get_verdict_display() if s.status == Status.DONE and s.verdict else None,
            score=s.score if s.status == Status.DONE else None,
            url=reverse("interview-run-detail", args=[interview.pk, s.pk]),
        ))  # fmt: skip
    reveal: HintReveal
    for reveal in selectors.interview_hint_reveals(interview):
        tier = f"tier {reveal.tier}, {_TIER[reveal.tier]}" if reveal.tier in _TIER else f"tier {reveal.tier}"
        events.append(_event(
            interview, "hint", reveal.pk, reveal.revealed_at, f"Hint {reveal.hint_id} revealed ({tier})",
            **about(reveal.challenge_id), submission=reveal.submission_id, hint_id=reveal.hint_id, tier=reveal.tier,
        ))  # fmt: skip
    for focus in FocusEvent.objects.filter(interview=interview):
        label = (
            ("Left the interview: tab hidden" if focus.reason == "tab" else "Left the interview: window lost focus")
            if focus.state == "lost"
            else ("Back on the interview: tab shown" if focus.reason == "tab" else "Back on the interview: window focused")
        )
        events.append(_event(interview, "focus", focus.pk, focus.created_at, label, state=focus.state, reason=focus.reason))
    for note in TimelineNote.objects.filter(interview=interview).select_related("author"):
        events.append(_event(interview, "note", note.pk, note.created_at, note.text, author=note.author.get_username()))
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
