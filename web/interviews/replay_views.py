"""The interviewer's run pages, the replay's data and notes at a moment; the candidate's focus reports.

Thin like views.py: check access, call one service or selector, respond.
Everything here that the interviewer sees answers 404 to anyone else who
is logged in, the candidate and other coaches alike (not 403: whether an
interview or a run exists is theirs to know only if it is theirs), and asks
an anonymous visitor to log in. The focus endpoint is the candidate's,
reached through the private link like autosave.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from web.errors import NotFound, Refused
from web.interviews import replay, runs, selectors, timeline
from web.interviews.access import candidate_interview, coach_interview, json_login, json_object


@login_required
@require_GET
def interview_run_detail(request: HttpRequest, interview_id: int, pk: int) -> HttpResponse:
    """One Run or Submit of the interview with its whole result (the interviewer's page)."""
    interview = selectors.interview_get_for_coach(interview_id, request.user)
    submission = runs.interview_submission_get(interview, pk) if interview is not None else None
    if interview is None or submission is None:
        raise NotFound("No such run in this interview.")
    payload = runs.coach_submission_payload(interview, submission)
    context = {
        "interview": interview,
        "submission": submission,
        "payload": payload,
        "code": submission.code,
        "live_url": reverse("interview-live", args=[interview.pk]),
        "scorecard_url": reverse("interview-scorecard", args=[interview.pk]),
    }
    return render(request, "interviews/run.html", context)


@json_login
@require_GET
def interview_run_status(request: HttpRequest, interview_id: int, pk: int) -> JsonResponse:
    interview = coach_interview(request, interview_id)
    submission = runs.interview_submission_get(interview, pk)
    if submission is None:
        raise NotFound("No such run in this interview.")
    return JsonResponse(runs.coach_submission_payload(interview, submission))


@json_login
@require_GET
def interview_replay(request: HttpRequest, interview_id: int) -> JsonResponse:
    """The replay's data: the span of the clock, the challenges and every moment (web/interviews/timeline.py)."""
    return JsonResponse(timeline.interview_replay(coach_interview(request, interview_id)))


@json_login
@require_POST
def interview_note_add(request: HttpRequest, interview_id: int) -> JsonResponse:
    """JSON body {"text": str}: a note at this moment of the running interview."""
    interview = coach_interview(request, interview_id)
    text = json_object(request).get("text")
    if not isinstance(text, str):
        raise Refused('Send {"text": "..."}.')
    note = replay.timeline_note_add(interview, request.user, text)
    return JsonResponse({"key": f"note:{note.pk}", "id": note.pk, "text": note.text, "at": note.created_at.isoformat()}, status=201)


@json_login
@require_POST
def interview_focus(request: HttpRequest, token: str) -> JsonResponse:
    """JSON body {"state": "lost"|"regained", "reason": "tab"|"window"} from the candidate's page."""
    interview = candidate_interview(request, token)
    data = json_object(request)
    state, reason = data.get("state"), data.get("reason")
    if not isinstance(state, str) or not isinstance(reason, str):
        raise Refused('Send {"state": "lost" or "regained", "reason": "tab" or "window"}.')
    event = replay.focus_event_record(interview, request.user, state=state, reason=reason)
    return JsonResponse({"stored": event is not None, "key": f"focus:{event.pk}" if event else None})
