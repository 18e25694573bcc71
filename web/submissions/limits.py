"""Per-user rate limits on runs and submits, checked by ``services.intake.submission_create``.

A user may start SUBMISSIONS_RUNS_PER_MINUTE runs and
SUBMISSIONS_SUBMITS_PER_MINUTE submits in any 60 seconds (a sliding window).
The count is of the user's Submission rows, not of a cache counter: the
database is already shared by every web process, a Redis outage cannot lift
or stick the limit, and a refused request leaves nothing to count. Two
requests racing at the limit may both pass; this is an abuse limit, not an
exact quota, and SUBMISSIONS_MAX_PENDING bounds what waits for the graders.

Because the check is in the service, the challenge page's JSON endpoints and
the API (which answers 429 with Retry-After) give the same refusal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from web.submissions.models import Kind, Submission

WINDOW_SECONDS = 60


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
    now = timezone.now()
    recent = list(
        Submission.objects.filter(user=user, kind=kind, created_at__gt=now - timedelta(seconds=WINDOW_SECONDS))
        .order_by("-created_at")
        .values_list("created_at", flat=True)[:limit]
    )
    if len(recent) < limit:
        return None
    # The oldest of the last `limit` leaves the window first; then one more fits.
    frees_at = recent[-1] + timedelta(seconds=WINDOW_SECONDS)
    wait = max(1, math.ceil((frees_at - now).total_seconds()))
    action = "run code" if kind == Kind.RUN else "submit"
    return RateLimited(f"You can {action} {limit} times per minute; try again in {wait} s.", wait)
