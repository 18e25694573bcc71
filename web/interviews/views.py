"""Mock interview pages and their JSON endpoints: check access, call one service or selector, respond.

Coach side (the interview's coach, or staff): the list, the form, the live
view and its poll, a challenge's autosave timeline, the assessment, the
early end, the scorecard. Candidate side, reached only through the private
link and only by the invited candidate: the interview page, its clock poll,
autosave, run and submit. Whoever else asks gets a 404 (a candidate asking
for a coach page gets 403, like every coach page). JSON errors are
``{"error": message}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from web.accounts.roles import coach_required, is_coach
from web.challenges.selectors import challenge_list
from web.interviews import presenters, selectors, services
from web.interviews.forms import InterviewCreateForm
from web.interviews.models import Criterion, Interview, Recommendation, State
from web.submissions.models import Kind
from web.submissions.request_code import BadRequestBody, code_from_request
from web.submissions.services import RateLimitExceeded, SubmissionRejected


def _error(message: str, status: int, **extra: Any) -> JsonResponse:
    return JsonResponse({"error": message, **extra}, status=status)


def _json_login(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return _error("Log in first.", 401, login_url=reverse("login"))
        return view(request, *args, **kwargs)

    return wrapper


def _json_coach(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return _error("Log in first.", 401, login_url=reverse("login"))
        if not is_coach(request.user):
            return _error("Coaches only.", 403)
        return view(request, *args, **kwargs)

    return wrapper


def _coach_interview(request: HttpRequest, interview_id: int) -> Interview:
    interview = selectors.interview_get_for_coach(interview_id, request.user)
    if interview is None:
        raise Http404("No such interview.")
    return interview


def _candidate_interview(request: HttpRequest, token: str) -> Interview:
    interview = selectors.interview_get_for_candidate(token, request.user)
    if interview is None:
        raise Http404("No such interview.")
    return interview


# --- Coach pages -----------------------------------------------------------------------------


@coach_required
@require_GET
def interview_list(request: HttpRequest) -> HttpResponse:
    interviews = list(selectors.interviews_for_coach(request.user))
    now = timezone.now()
    rows = [{"interview": i, "state": i.state(now)} for i in interviews]
    return render(request, "interviews/list.html", {"rows": rows})


@coach_required
@require_http_methods(["GET", "POST"])
def interview_create(request: HttpRequest) -> HttpResponse:
    form = InterviewCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            interview = services.interview_create(
                request.user,
                candidate_username=form.cleaned_data["candidate"],
                challenges=form.cleaned_data["challenges"],
                duration_minutes=form.cleaned_data["duration_minutes"],
            )
        except services.InterviewError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("interview-live", interview_id=interview.pk)
    return render(request, "interviews/create.html", {"form": form, "available": challenge_list(user=None)})


@coach_required
@require_GET
def interview_live(request: HttpRequest, interview_id: int) -> HttpResponse:
    interview = _coach_interview(request, interview_id)
    config = {
        "stateUrl": reverse("interview-live-state", args=[interview.pk]),
        "assessUrl": reverse("interview-assess", args=[interview.pk]),
        "endUrl": reverse("interview-end", args=[interview.pk]),
        "scorecardUrl": reverse("interview-scorecard", args=[interview.pk]),
        "rubric": selectors.interview_rubric(interview),
    }
    return render(
        request,
        "interviews/live.html",
        {
            "interview": interview,
            "link": request.build_absolute_uri(reverse("interview-candidate", args=[interview.token])),
            "challenges": selectors.interview_challenges(interview),
            "criteria": Criterion.choices,
            "recommendations": Recommendation.choices,
            "scores": range(1, 5),
            "rubric": selectors.interview_rubric(interview),
            "page_config": config,
        },
    )


@_json_coach
@require_GET
def interview_live_state(request: HttpRequest, interview_id: int) -> JsonResponse:
    interview = _coach_interview(request, interview_id)
    return JsonResponse(selectors.interview_live_state(interview))


@_json_coach
@require_GET
def interview_timeline(request: HttpRequest, interview_id: int, slug: str) -> JsonResponse:
    interview = _coach_interview(request, interview_id)
    challenge = next((c for c in selectors.interview_challenges(interview) if c.slug == slug), None)
    if challenge is None:
        return _error(f"The challenge {slug!r} is not part of this interview.", 404)
    after = request.GET.get("after", "0")
    if not after.isdigit():
        return _error(f"after must be a snapshot id (a whole number), not {after!r}.", 400)
    return JsonResponse({"slug": slug, "snapshots": selectors.snapshot_timeline(interview, challenge, after_id=int(after))})


@_json_coach
@require_POST
def interview_assess(request: HttpRequest, interview_id: int) -> JsonResponse:
    """JSON body: any of {"notes": str, "rubric": {criterion: {"score": 1-4, "comment": str}}, "recommendation": str}."""
    interview = _coach_interview(request, interview_id)
    try:
        data = json.loads(request.body or b"{}")
    except ValueError:
        return _error("The request body is not valid JSON.", 400)
    if not isinstance(data, dict) or set(data) - {"notes", "rubric", "recommendation"}:
        return _error('Send a JSON object with any of "notes", "rubric", "recommendation".', 400)
    rubric = data.get("rubric")
    if rubric is not None and not isinstance(rubric, dict):
        return _error('"rubric" must be an object: {criterion: {"score": 1-4, "comment": "..."}}.', 400)
    recommendation = data.get("recommendation")
    if recommendation is not None and not isinstance(recommendation, str):
        return _error('"recommendation" must be text.', 400)
    try:
        services.interview_assess(interview, request.user, notes=data.get("notes"), rubric=rubric, recommendation=recommendation)
    except services.InterviewError as exc:
        return _error(str(exc), exc.status_code)
    return JsonResponse({"saved": True, "rubric": selectors.interview_rubric(interview), "recommendation": interview.recommendation})


@coach_required
@require_POST
def interview_end(request: HttpRequest, interview_id: int) -> HttpResponse:
    interview = _coach_interview(request, interview_id)
    wants_json = "application/json" in request.headers.get("Accept", "")
    try:
        services.interview_end(interview, request.user)
    except services.InterviewError as exc:
        if wants_json:
            return _error(str(exc), exc.status_code)
        messages.info(request, str(exc))
    if wants_json:
        return JsonResponse({"state": interview.state(timezone.now()), "scorecard_url": reverse("interview-scorecard", args=[interview.pk])})
    return redirect("interview-scorecard", interview_id=interview.pk)


@coach_required
@require_GET
def interview_scorecard(request: HttpRequest, interview_id: int) -> HttpResponse:
    interview = _coach_interview(request, interview_id)
    card = selectors.interview_scorecard(interview)
    return render(request, "interviews/scorecard.html", {"card": card, "interview": interview, "state": interview.state(timezone.now())})


# --- Candidate pages -------------------------------------------------------------------------


@login_required
@require_GET
def interview_mine(request: HttpRequest) -> HttpResponse:
    now = timezone.now()
    rows = [{"interview": i, "state": i.state(now)} for i in selectors.interviews_for_candidate(request.user)]
    return render(request, "interviews/mine.html", {"rows": rows})


@login_required
@require_GET
def interview_candidate(request: HttpRequest, token: str) -> HttpResponse:
    interview = _candidate_interview(request, token)
    services.interview_open(interview, request.user)
    items, config = presenters.candidate_page(interview)
    context = {"interview": interview, "items": items, "page_config": config, "locked": config["state"] != State.LIVE}
    return render(request, "interviews/candidate.html", context)


@_json_login
@require_GET
def interview_candidate_state(request: HttpRequest, token: str) -> JsonResponse:
    interview = selectors.interview_get_for_candidate(token, request.user)
    if interview is None:
        return _error("No such interview.", 404)
    return JsonResponse(selectors.interview_candidate_state(interview))


class _Refused(Exception):
    """A candidate request refused before any service ran; carries the answer."""

    def __init__(self, response: JsonResponse) -> None:
        super().__init__(response.status_code)
        self.response = response


def _candidate_post(request: HttpRequest, token: str) -> tuple[Interview, str | bytes]:
    """The candidate's interview and the code they sent, or _Refused."""
    interview = selectors.interview_get_for_candidate(token, request.user)
    if interview is None:
        raise _Refused(_error("No such interview.", 404))
    try:
        return interview, code_from_request(request)
    except BadRequestBody as exc:
        raise _Refused(_error(str(exc), 400)) from None


def _with_retry_after(message: str, status: int, retry_after: int) -> JsonResponse:
    response = _error(message, status, retry_after=retry_after)
    response["Retry-After"] = str(retry_after)
    return response


def _create(request: HttpRequest, token: str, slug: str, kind: str) -> JsonResponse:
    try:
        interview, code = _candidate_post(request, token)
    except _Refused as refused:
        return refused.response
    try:
        submission = services.interview_submission_create(interview, request.user, slug, code, kind)
    except RateLimitExceeded as exc:
        return _with_retry_after(str(exc), exc.status_code, exc.retry_after)
    except (SubmissionRejected, services.InterviewError) as exc:
        return _error(str(exc), exc.status_code)
    return JsonResponse(
        {"id": submission.pk, "kind": submission.kind, "status": submission.status, "url": reverse("submission-status", args=[submission.pk])},
        status=202,
    )


@_json_login
@require_POST
def interview_run(request: HttpRequest, token: str, slug: str) -> JsonResponse:
    return _create(request, token, slug, Kind.RUN)


@_json_login
@require_POST
def interview_submit(request: HttpRequest, token: str, slug: str) -> JsonResponse:
    return _create(request, token, slug, Kind.SUBMIT)


@_json_login
@require_POST
def interview_autosave(request: HttpRequest, token: str, slug: str) -> JsonResponse:
    try:
        interview, code = _candidate_post(request, token)
    except _Refused as refused:
        return refused.response
    try:
        saved = services.snapshot_save(interview, request.user, slug, code)
    except services.SnapshotRateLimited as exc:
        return _with_retry_after(str(exc), exc.status_code, exc.retry_after)
    except services.InterviewError as exc:
        return _error(str(exc), exc.status_code)
    return JsonResponse({"saved": saved.created, "id": saved.snapshot.pk, "at": saved.snapshot.created_at.isoformat()})
