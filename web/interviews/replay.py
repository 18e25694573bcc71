"""State changes behind the replay: the candidate's focus reports and the interviewer's timestamped notes.

Both are moments on the interview's timeline (``web/interviews/timeline.py``
reads them back with everything else). The candidate's page reports when it
stops being visible and focused and when it is both again
(``focus_event_record``); the interviewer adds a note "at this moment"
(``timeline_note_add``). Both are refused outside the running interview, a
note before the clock started or after the end has no moment to belong to,
and both answer only to their own side: focus to the invited candidate,
notes to the interview's coach (or staff). Refusals are the interview
errors of ``services`` (their class decides the HTTP answer).
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from web.errors import Throttled
from web.interviews.models import FocusEvent, FocusReason, FocusState, Interview, TimelineNote
from web.interviews.services import InterviewError, InterviewLocked, may_run, require_candidate, require_live
from web.ratelimit import window_wait

# A tab switch is one report and coming back another; 30 a minute is a candidate
# flicking between windows every four seconds. Faster is a script: 429, no rows.
FOCUS_EVENTS_PER_MINUTE = 30
NOTE_MAX_CHARS = 500


class FocusRateLimited(InterviewError, Throttled):
    """Focus reports come faster than FOCUS_EVENTS_PER_MINUTE."""


def focus_event_record(interview: Interview, user: AbstractBaseUser, *, state: str, reason: str) -> FocusEvent | None:
    """Store that the candidate's page was left ("lost") or came back ("regained").

    The same state twice in a row (a second tab reporting, a page reloaded
    while away) stores nothing and returns None: the timeline shows
    transitions only.
    """
    require_candidate(interview, user)
    if state not in FocusState.values:
        raise InterviewError(f"Unknown focus state {state!r}; use one of {', '.join(FocusState.values)}.")
    if reason not in FocusReason.values:
        raise InterviewError(f"Unknown focus reason {reason!r}; use one of {', '.join(FocusReason.values)}.")
    require_live(interview)
    now = timezone.now()
    wait = window_wait(FocusEvent.objects.filter(interview=interview), FOCUS_EVENTS_PER_MINUTE, now)
    if wait is not None:
        raise FocusRateLimited(f"Focus reported too often ({FOCUS_EVENTS_PER_MINUTE} a minute); try again in {wait} s.", wait)
    last = FocusEvent.objects.filter(interview=interview).order_by("-created_at", "-id").values_list("state", flat=True).first()
    if last == state or (last is None and state == FocusState.REGAINED):
        return None  # no change (and coming back before ever leaving is no moment)
    return FocusEvent.objects.create(interview=interview, state=state, reason=reason, created_at=now)


def timeline_note_add(interview: Interview, user: AbstractBaseUser, text: str) -> TimelineNote:
    """The interviewer's note at this moment of the running interview."""
    if not may_run(interview, user):
        raise InterviewError("Only the interview's coach can take notes on it.")
    if not isinstance(text, str) or not text.strip():
        raise InterviewError("Write the note first.")
    text = text.strip()
    if len(text) > NOTE_MAX_CHARS:
        raise InterviewError(
            f"A note at a moment is limited to {NOTE_MAX_CHARS} characters; these are {len(text)}. Longer notes go in the free notes."
        )
    try:
        require_live(interview)
    except InterviewLocked:
        raise InterviewLocked("Notes at a moment are taken while the interview runs; it has not started or is over. Use the free notes.") from None
    return TimelineNote.objects.create(interview=interview, author=user, text=text, created_at=timezone.now())
