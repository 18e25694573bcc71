"""Read-only submission queries: one's own submissions, history, revealed hints.

Ownership is enforced here: a user only ever gets their own submissions, and
a miss (someone else's id or no such id) looks the same to the caller.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from web.challenges.models import Challenge
from web.submissions.models import HintReveal, Submission


def submission_get_owned(submission_id: int, user: AbstractBaseUser) -> Submission | None:
    if not user.is_authenticated:
        return None
    # Polled every second or two while a grading runs: neither the code nor the
    # package's files (a version shows as its short hash) are needed for it.
    return Submission.objects.select_related("challenge", "version").defer("code", "version__files").filter(pk=submission_id, user=user).first()


def submission_history(user: AbstractBaseUser, challenge: Challenge, *, limit: int = 20) -> QuerySet[Submission]:
    return (
        Submission.objects.filter(user=user, challenge=challenge)
        # A history row is kind, time, status, verdict, score: not the code, the result or the version.
        .defer("code", "probes", "hints", "categories", "timings")
        .order_by("-created_at", "-id")[:limit]
    )


def hint_revealed_ids(user: AbstractBaseUser, challenge_id: int) -> set[str]:
    return set(HintReveal.objects.filter(user=user, challenge_id=challenge_id).values_list("hint_id", flat=True))
