"""Take a run or submit: check the code and the request, save it queued, queue its grading after commit.

The first step of a submission (see the package's docstring for the rest).
Every refusal is a ``SubmissionRejected`` (web/submissions/errors.py) whose
message is for the candidate; the page, the API and the mock interview all
come through ``submission_create``, so they refuse alike.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from grader.errors import InvalidSubmission
from grader.grade import MAX_CODE_BYTES as MAX_CODE_BYTES  # re-exported for the views
from grader.grade import decode_submission
from web.challenges.models import Challenge
from web.config.logs import submission_context
from web.submissions.errors import RateLimitExceeded, SubmissionRejected, TooManyPending
from web.submissions.limits import rate_limited
from web.submissions.models import Kind, Status, Submission
from web.submissions.services.dispatch import enqueue

logger = logging.getLogger(__name__)


def code_clean(raw: str | bytes, *, allow_empty: bool = False) -> str:
    """The code as text, or SubmissionRejected saying what is wrong with it.

    The grader's own rules (UTF-8, not empty, size, no NUL byte), applied
    before the submission is saved so that a bad paste is never queued.
    ``allow_empty`` drops "not empty" only (the interview's autosave).
    """
    try:
        return decode_submission(raw, allow_empty=allow_empty).decode("utf-8")
    except InvalidSubmission as exc:
        raise SubmissionRejected(str(exc)) from None


def pending_count(user: AbstractBaseUser) -> int:
    """The user's submissions not yet graded, leaving out any stuck for longer than a grading can take."""
    recent = timezone.now() - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    return Submission.objects.filter(user=user, created_at__gte=recent).exclude(status=Status.DONE).count()


def require_room(user: AbstractBaseUser) -> None:
    """TooManyPending if the user already has SUBMISSIONS_MAX_PENDING gradings waiting."""
    if (pending := pending_count(user)) >= settings.SUBMISSIONS_MAX_PENDING:
        raise TooManyPending(f"You already have {pending} runs waiting to be graded; wait for one to finish.")


def submission_create(user: AbstractBaseUser, challenge: Challenge, code: str | bytes, kind: str) -> Submission:
    """Save a queued submission on the challenge's current version and queue its grading."""
    if kind not in Kind.values:
        raise SubmissionRejected(f"Unknown kind {kind!r}; use run or submit.")
    text = code_clean(code)
    version = challenge.current_version
    if version is None or not challenge.published:
        raise SubmissionRejected("This challenge is not open for submissions.")
    if (limited := rate_limited(user, kind)) is not None:
        raise RateLimitExceeded(limited.message, limited.retry_after)
    require_room(user)

    with transaction.atomic():
        submission = Submission.objects.create(user=user, challenge=challenge, version=version, kind=kind, code=text, status=Status.QUEUED)
        # After commit: the worker must find the row when the task arrives.
        transaction.on_commit(partial(enqueue, submission.pk))
    with submission_context(submission.pk):
        logger.info("submission saved", extra={"event": "submission.created", "kind": kind, "challenge": challenge.slug, "user_id": user.pk})
    return submission
