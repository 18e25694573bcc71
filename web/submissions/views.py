"""JSON endpoints behind the challenge page: run/submit, poll status, reveal a hint, regrade.

Each view checks access, calls one service or selector and answers JSON.
Anonymous callers get 401; another user's submission is a 404, the same as
one that does not exist, so ids cannot be probed. A refusal is raised, never
built here: web/errors.py answers every one as ``{"error": message}`` with
the message meant for the candidate (and Retry-After for a rate limit).
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from web.challenges.selectors import challenge_get_visible
from web.errors import LoginRequired, NotFound
from web.submissions.models import Kind, Submission
from web.submissions.presenters import submission_payload
from web.submissions.request_code import code_from_request
from web.submissions.selectors import hint_revealed_ids, submission_get_owned
from web.submissions.services.cancel import submission_cancel as submission_cancel_own
from web.submissions.services.drafts import draft_save
from web.submissions.services.intake import submission_create
from web.submissions.services.regrade import submission_regrade_own
from web.submissions.services.reveal import hint_reveal


def _require_login(request: HttpRequest) -> None:
    if not request.user.is_authenticated:
        raise LoginRequired("Log in to run or submit code.", login_url=reverse("login"))


def _owned(request: HttpRequest, pk: int) -> Submission:
    _require_login(request)
    submission = submission_get_owned(pk, request.user)
    if submission is None:
        raise NotFound("No such submission.")
    return submission


def _create(request: HttpRequest, slug: str, kind: str) -> JsonResponse:
    _require_login(request)
    challenge = challenge_get_visible(slug, user=request.user)
    if challenge is None:
        raise NotFound(f"No challenge {slug!r}.")
    submission = submission_create(request.user, challenge, code_from_request(request), kind)
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


@require_POST
def challenge_draft(request: HttpRequest, slug: str) -> JsonResponse:
    """Autosave: the editor's code as the user's draft of the challenge (web/submissions/services/drafts.py)."""
    _require_login(request)
    challenge = challenge_get_visible(slug, user=request.user)
    if challenge is None:
        raise NotFound(f"No challenge {slug!r}.")
    draft = draft_save(request.user, challenge, code_from_request(request))
    return JsonResponse({"saved_at": draft.updated_at.isoformat()})


@require_GET
def submission_status(request: HttpRequest, pk: int) -> JsonResponse:
    submission = _owned(request, pk)
    revealed = hint_revealed_ids(request.user, submission.challenge_id)
    return JsonResponse(submission_payload(submission, revealed))


@require_POST
def submission_hint_reveal(request: HttpRequest, pk: int, hint_id: str) -> JsonResponse:
    submission = _owned(request, pk)
    hint_reveal(request.user, submission, hint_id)
    # The whole result again: revealing one hint may make the next revealable.
    revealed = hint_revealed_ids(request.user, submission.challenge_id)
    return JsonResponse(submission_payload(submission, revealed))


@require_POST
def submission_cancel(request: HttpRequest, pk: int) -> JsonResponse:
    """The candidate's Cancel of their queued or running submission (services/cancel.py)."""
    submission = submission_cancel_own(request.user, _owned(request, pk))
    revealed = hint_revealed_ids(request.user, submission.challenge_id)
    return JsonResponse(submission_payload(submission, revealed))


@require_POST
def submission_regrade(request: HttpRequest, pk: int) -> JsonResponse:
    """The candidate's regrade of a submission the platform failed to grade (internal_error)."""
    submission = submission_regrade_own(request.user, _owned(request, pk))
    revealed = hint_revealed_ids(request.user, submission.challenge_id)
    return JsonResponse(submission_payload(submission, revealed), status=202)
