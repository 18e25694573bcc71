"""Mock interview pages and their JSON endpoints: check access, call one service or selector, respond.

Coach side (the interview's coach, or staff): the list, the form, the live
view and its poll, a challenge's autosave timeline, the assessment, the
early end, the scorecard. Candidate side, reached only through the private
link and only by the invited candidate: the interview page, its clock poll,
autosave, run and submit. Whoever else asks gets a 404 (a candidate asking
for a coach page gets 403, like every coach page). Refusals are raised and
answered by web/errors.py: ``{"error": message}`` for the JSON endpoints.
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
from web.errors import Forbidden, LoginRequired, NotFound, Refused
from web.interviews import keys, presenters, selectors, services
from web.interviews.forms import InterviewCreateForm
from web.interviews.models import Criterion, Interview, Recommendation, State
from web.submissions.models import Kind
from web.submissions.request_code import code_from_request


def _json_login(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            raise LoginRequired("Log in first.", login_url=reverse("login"))
        return view(request, *args, **kwargs)

    return wrapper


def _json_coach(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            raise LoginRequired("Log in first.", login_url=reverse("login"))
        if not is_coach(request.user):
            raise Forbidden("Coaches only.")
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
        "keysSocket": keys.watch_socket_path(interview.pk),
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
        raise NotFound(f"The challenge {slug!r} is not part of this interview.")
    after = request.GET.get("after", "0")
    if not after.isdigit():
        raise Refused(f"after must be a snapshot id (a whole number), not {after!r}.")
    return JsonResponse({"slug": slug, "snapshots": selectors.snapshot_timeline(interview, challenge, after_id=int(after))})


@_json_coach
@require_POST
def interview_assess(request: HttpRequest, interview_id: int) -> JsonResponse:
    """JSON body: any of {"notes": str, "rubric": {criterion: {"score": 1-4, "comment": str}}, "recommendation": str}."""
    interview = _coach_interview(request, interview_id)
    try:
        data = json.loads(request.body or b"{}")
    except ValueError:
        raise Refused("The request body is not valid JSON.") from None
    if not isinstance(data, dict) or set(data) - {"notes", "rubric", "recommendation"}:
        raise Refused('Send a JSON object with any of "notes", "rubric", "recommendation".')
    rubric = data.get("rubric")
    if rubric is not None and not isinstance(rubric, dict):
        raise Refused('"rubric" must be an object: {criterion: {"score": 1-4, "comment": "..."}}.')
    recommendation = data.get("recommendation")
    if recommendation is not None and not isinstance(recommendation, str):
        raise Refused('"recommendation" must be text.')
    services.interview_assess(interview, request.user, notes=data.get("notes"), rubric=rubric, recommendation=recommendation)
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
            raise  # answered as JSON by web/errors.py
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
    return JsonResponse(selectors.interview_candidate_state(_candidate_interview_json(request, token)))


def _candidate_interview_json(request: HttpRequest, token: str) -> Interview:
    """The candidate's interview for a JSON endpoint: NotFound (a JSON 404) for anyone else."""
    interview = selectors.interview_get_for_candidate(token, request.user)
    if interview is None:
        raise NotFound("No such interview.")
    return interview


def _create(request: HttpRequest, token: str, slug: str, kind: str) -> JsonResponse:
    interview = _candidate_interview_json(request, token)
    submission = services.interview_submission_create(interview, request.user, slug, code_from_request(request), kind)
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
    interview = _candidate_interview_json(request, token)
    saved = services.snapshot_save(interview, request.user, slug, code_from_request(request))
    return JsonResponse({"saved": saved.created, "id": saved.snapshot.pk, "at": saved.snapshot.created_at.isoformat()})
