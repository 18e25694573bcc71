"""One sliding-window rate limit over rows the database already keeps: runs and submits, autosaves, focus reports.

Each limited action leaves a row with a creation time (a Submission, a
Snapshot, a FocusEvent), so the count is of those rows, not of a cache
counter: every web process shares the database, a Redis outage can neither
lift nor stick a limit, and a refused request leaves nothing to count. Two
requests racing at the limit may both pass: these are abuse limits, not exact
quotas. Logins, sign-ups and password resets leave no row until they succeed
and are counted in the cache instead (web/accounts/throttle.py).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from django.db.models import QuerySet

WINDOW_SECONDS = 60


def window_wait(rows: QuerySet, limit: int, now: datetime, *, field: str = "created_at", seconds: int = WINDOW_SECONDS) -> int | None:
    """Whole seconds until one more action fits, when ``rows`` (the actor's rows of this action) already hold ``limit``
    created within the last ``seconds``; None when one more fits now."""
    recent = list(rows.filter(**{f"{field}__gt": now - timedelta(seconds=seconds)}).order_by(f"-{field}").values_list(field, flat=True)[:limit])
    if len(recent) < limit:
        return None
    # The oldest of the last ``limit`` leaves the window first; then one more fits.
    return max(1, math.ceil((recent[-1] + timedelta(seconds=seconds) - now).total_seconds()))
