"""Per-user rate limits on runs and submits, checked by ``services.intake.submission_create``.

A user may start SUBMISSIONS_RUNS_PER_MINUTE runs and
SUBMISSIONS_SUBMITS_PER_MINUTE submits in any 60 seconds, counted on their
Submission rows (web/ratelimit.py: why rows, not a cache counter);
SUBMISSIONS_MAX_PENDING bounds what waits for the graders.
A submission the platform failed to grade (internal_error) is not counted:
the platform's fault never costs the candidate a try.

Because the check is in the service, the challenge page's JSON endpoints and
the API (which answers 429 with Retry-After) give the same refusal.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from web.ratelimit import window_wait
from web.submissions.models import CHARGED, Kind, Submission


@dataclass(frozen=True)
class RateLimited:
    """Why a run or submit is refused now; ``message`` is for the candidate."""

    message: str
    retry_after: int  # whole seconds until one more is allowed


def per_minute(kind: str) -> int:
    return int(settings.SUBMISSIONS_RUNS_PER_MINUTE if kind == Kind.RUN else settings.SUBMISSIONS_SUBMITS_PER_MINUTE)


def rate_limited(user: AbstractBaseUser, kind: str) -> RateLimited | None:
    """The refusal if the user has used up this minute's runs (or submits), else None."""
    limit = per_minute(kind)
    wait = window_wait(Submission.objects.filter(CHARGED, user=user, kind=kind), limit, timezone.now())
    if wait is None:
        return None
    action = "run code" if kind == Kind.RUN else "submit"
    return RateLimited(f"You can {action} {limit} times per minute; try again in {wait} s.", wait)
