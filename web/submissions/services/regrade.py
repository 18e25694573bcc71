"""Grade finished submissions again, in place: coaches after an incident or a fixed package, candidates after a platform failure.

Coaches choose submissions (``submissions_for_regrade``: admin actions, the
coach page, ``manage.py regrade_submissions``) and ``submissions_regrade``
resets them to queued; a candidate may regrade their own submission the
platform failed to grade (``submission_regrade_own``). ``attempts_base``
moves up to ``attempts`` on each reset, so the fencing token keeps rising
and the attempt cap counts from the regrade.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from web.challenges.models import ChallengeVersion
from web.config.logs import submission_context
from web.submissions.errors import RegradeRefused
from web.submissions.models import Status, Submission, Verdict
from web.submissions.services.dispatch import enqueue
from web.submissions.services.intake import require_room

logger = logging.getLogger(__name__)


def submissions_for_regrade(
    *, ids: list[int] | None = None, version: ChallengeVersion | None = None, since: Any = None, by: AbstractBaseUser | None = None
) -> QuerySet[Submission]:
    """Finished submissions matching every criterion given (ids, graded on a version, created since a time).

    ``by``, the coach who asks: unless staff, only the submissions of the
    challenges they wrote and of the interviews they ran (a coach has no
    business with other coaches' candidates). None: an operator (the
    admin's actions, ``manage.py regrade_submissions``), every submission.
    """
    if ids is None and version is None and since is None:
        raise ValueError("name submissions to regrade: ids, a version or a time")
    rows = Submission.objects.filter(status=Status.DONE)
    if by is not None and not getattr(by, "is_staff", False):
        rows = rows.filter(Q(challenge__author=by) | Q(interview_link__interview__coach=by))
    if ids is not None:
        rows = rows.filter(pk__in=ids)
    if version is not None:
        rows = rows.filter(version=version)
    if since is not None:
        rows = rows.filter(created_at__gte=since)
    return rows.order_by("created_at", "pk")


def submissions_regrade(rows: QuerySet[Submission], *, on_current_version: bool = False) -> list[int]:
    """Grade finished submissions again, in place: back to queued, result cleared; their ids.

    The same code on the same version (a platform incident, a fixed grader),
    or with ``on_current_version`` on its challenge's current version (a
    fixed package). A submission not done (still queued or running) is left
    alone: it is being graded anyway. Each one is one conditional UPDATE, so
    a regrade racing another changes each submission once.
    """
    regraded: list[int] = []
    now = timezone.now()
    with transaction.atomic():
        # Only the fields a reset needs: the code stays where it is.
        for submission in rows.select_related("challenge").only("pk", "verdict", "score", "challenge__current_version_id"):
            fields: dict[str, Any] = {
                "status": Status.QUEUED, "verdict": "", "score": None, "categories": {}, "probes": [], "hints": [],
                "message": "", "timings": {}, "started_at": None, "heartbeat_at": None, "finished_at": None, "queued_at": now,
                "attempts_base": F("attempts"),
            }  # fmt: skip
            if on_current_version and submission.challenge.current_version_id:
                fields["version_id"] = submission.challenge.current_version_id
            if Submission.objects.filter(pk=submission.pk, status=Status.DONE).update(**fields):
                with submission_context(submission.pk):
                    logger.info(
                        "regrade requested",
                        extra={"event": "submission.regrade", "previous_verdict": submission.verdict, "previous_score": submission.score},
                    )
                regraded.append(submission.pk)
                transaction.on_commit(partial(enqueue, submission.pk))
    return regraded


def submission_regrade_own(user: AbstractBaseUser, submission: Submission) -> Submission:
    """A candidate's regrade of their submission that the platform failed to grade (internal_error)."""
    if submission.user_id != user.pk:
        raise RegradeRefused("This is not your submission.")
    if submission.status != Status.DONE or submission.verdict != Verdict.INTERNAL_ERROR:
        raise RegradeRefused("Only a submission the platform failed to grade can be regraded; run or submit your code again instead.")
    require_room(user)
    submissions_regrade(Submission.objects.filter(pk=submission.pk))
    submission.refresh_from_db()
    return submission
