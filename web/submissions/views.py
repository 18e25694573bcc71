"""JSON endpoints behind the challenge page: run/submit, poll status, reveal a hint, regrade.

Each view checks access, calls one service or selector and answers JSON.
Anonymous callers get 401; another user's submission is a 404, the same as
one that does not exist, so ids cannot be probed. Errors are
``{"error": message}`` with the message meant for the candidate.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from web.challenges.selectors import challenge_get_visible
from web.submissions import services
from web.submissions.models import Kind
from web.submissions.presenters import submission_payload
from web.submissions.request_code import BadRequestBody, code_from_request
from web.submissions.selectors import hint_revealed_ids, submission_get_owned


def _error(message: str, status: int, **extra: Any) -> JsonResponse:
    return JsonResponse({"error": message, **extra}, status=status)


def _login_required(request: HttpRequest) -> JsonResponse | None:
    if request.user.is_authenticated:
        return None
    return _error("Log in to run or submit code.", 401, login_url=reverse("login"))


def _create(request: HttpRequest, slug: str, kind: str) -> JsonResponse:
    if (denied := _login_required(request)) is not None:
        return denied
    challenge = challenge_get_visible(slug, user=request.user)
    if challenge is None:
        return _error(f"No challenge {slug!r}.", 404)
    try:
        code = code_from_request(request)
    except BadRequestBody as exc:
        return _error(str(exc), 400)
    try:
        submission = services.submission_create(request.user, challenge, code, kind)
    except services.RateLimitExceeded as exc:
        response = _error(str(exc), exc.status_code, retry_after=exc.retry_after)
        response["Retry-After"] = str(exc.retry_after)
        return response
    except services.SubmissionRejected as exc:
        return _error(str(exc), exc.status_code)
    return JsonResponse(
        {"id": submission.pk, "kind": submission.kind, "status": submission.status,
         "url": reverse("submission-status", args=[submission.pk])},
        status=202,
    )  # fmt: skip


@require_POST
def challenge_run(request: HttpRequest, slug: str) -> JsonResponse:
    return _create(request, slug, Kind.RUN)


@require_POST
def challenge_submit(request: HttpRequest, slug: str) -> JsonResponse:
    return _create(request, slug, Kind.SUBMIT)


@require_GET
def submission_status(request: HttpRequest, pk: int) -> JsonResponse:
    if (denied := _login_required(request)) is not None:
        return denied
    submission = submission_get_owned(pk, request.user)
    if submission is None:
        return _error("No such submission.", 404)
    revealed = hint_revealed_ids(request.user, submission.challenge_id)
    return JsonResponse(submission_payload(submission, revealed))


@require_POST
def submission_hint_reveal(request: HttpRequest, pk: int, hint_id: str) -> JsonResponse:
    if (denied := _login_required(request)) is not None:
        return denied
    submission = submission_get_owned(pk, request.user)
    if submission is None:
        return _error("No such submission.", 404)
    try:
        services.hint_reveal(request.user, submission, hint_id)
    except services.HintUnavailable as exc:
        return _error(str(exc), 409)
    # The whole result again: revealing one hint may make the next revealable.
    revealed = hint_revealed_ids(request.user, submission.challenge_id)
    return JsonResponse(submission_payload(submission, revealed))


@require_POST
def submission_regrade(request: HttpRequest, pk: int) -> JsonResponse:
    """The candidate's regrade of a submission the platform failed to grade (internal_error)."""
    if (denied := _login_required(request)) is not None:
        return denied
    submission = submission_get_owned(pk, request.user)
    if submission is None:
        return _error("No such submission.", 404)
    try:
        submission = services.submission_regrade_own(request.user, submission)
    except services.SubmissionRejected as exc:
        return _error(str(exc), exc.status_code)
    revealed = hint_revealed_ids(request.user, submission.challenge_id)
    return JsonResponse(submission_payload(submission, revealed), status=202)
