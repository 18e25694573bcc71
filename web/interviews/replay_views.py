"""The interviewer's run pages, the replay's data and notes at a moment; the candidate's focus reports.

Thin like views.py: check access, call one service or selector, respond.
Everything here that the interviewer sees answers 404 to anyone else who
is logged in, the candidate and other coaches alike (not 403: whether an
interview or a run exists is theirs to know only if it is theirs), and asks
an anonymous visitor to log in. The focus endpoint is the candidate's,
reached through the private link like autosave.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from web.errors import NotFound, Refused
from web.interviews import replay, runs, selectors, timeline
from web.interviews.models import Interview
from web.interviews.views import _candidate_interview_json, _json_login


def _coach_interview_json(request: HttpRequest, interview_id: int) -> Interview:
    interview = selectors.interview_get_for_coach(interview_id, request.user)
    if interview is None:
        raise NotFound("No such interview.")
    return interview


def _json_body(request: HttpRequest) -> dict[str, Any]:
    try:
        data = json.loads(request.body or b"{}")
    except ValueError:
        raise Refused("The request body is not valid JSON.") from None
    if not isinstance(data, dict):
        raise Refused("Send a JSON object.")
    return data


@login_required
@require_GET
def interview_run_detail(request: HttpRequest, interview_id: int, pk: int) -> HttpResponse:
    """One Run or Submit of the interview with its whole result (the interviewer's page)."""
    interview = selectors.interview_get_for_coach(interview_id, request.user)
    submission = runs.interview_submission_get(interview, pk) if interview is not None else None
    if interview is None or submission is None:
        raise Http404("No such run in this interview.")
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


@_json_login
@require_GET
def interview_run_status(request: HttpRequest, interview_id: int, pk: int) -> JsonResponse:
    interview = _coach_interview_json(request, interview_id)
    submission = runs.interview_submission_get(interview, pk)
    if submission is None:
        raise NotFound("No such run in this interview.")
    return JsonResponse(runs.coach_submission_payload(interview, submission))


@_json_login
@require_GET
def interview_replay(request: HttpRequest, interview_id: int) -> JsonResponse:
    """The replay's data: the span of the clock, the challenges and every moment (web/interviews/timeline.py)."""
    return JsonResponse(timeline.interview_replay(_coach_interview_json(request, interview_id)))


@_json_login
@require_POST
def interview_note_add(request: HttpRequest, interview_id: int) -> JsonResponse:
    """JSON body {"text": str}: a note at this moment of the running interview."""
    interview = _coach_interview_json(request, interview_id)
    text = _json_body(request).get("text")
    if not isinstance(text, str):
        raise Refused('Send {"text": "..."}.')
    note = replay.timeline_note_add(interview, request.user, text)
    return JsonResponse({"key": f"note:{note.pk}", "id": note.pk, "text": note.text, "at": note.created_at.isoformat()}, status=201)


@_json_login
@require_POST
def interview_focus(request: HttpRequest, token: str) -> JsonResponse:
    """JSON body {"state": "lost"|"regained", "reason": "tab"|"window"} from the candidate's page."""
    interview = _candidate_interview_json(request, token)
    data = _json_body(request)
    state, reason = data.get("state"), data.get("reason")
    if not isinstance(state, str) or not isinstance(reason, str):
        raise Refused('Send {"state": "lost" or "regained", "reason": "tab" or "window"}.')
    event = replay.focus_event_record(interview, request.user, state=state, reason=reason)
    return JsonResponse({"stored": event is not None, "key": f"focus:{event.pk}" if event else None})
