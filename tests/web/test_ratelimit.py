"""web/ratelimit.py: the one sliding window over rows, as runs, autosaves and focus reports use it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone

from web.challenges.models import Challenge
from web.ratelimit import window_wait
from web.submissions.models import Submission


def test_the_wait_is_until_the_oldest_of_the_last_limit_rows_leaves_the_window(user: User, challenge: Challenge, db: Any) -> None:
    now = timezone.now()
    for age in (50.5, 20, 5):
        row = Submission.objects.create(user=user, challenge=challenge, version=challenge.current_version, kind="run", code="x = 1\n")
        Submission.objects.filter(pk=row.pk).update(created_at=now - timedelta(seconds=age))
    rows = Submission.objects.filter(user=user)
    assert window_wait(rows, 4, now) is None  # three in the window, four allowed
    assert window_wait(rows, 3, now) == 10  # the one 50.5 s old leaves in 9.5 s: whole seconds, rounded up
    assert window_wait(rows, 2, now) == 40  # the last two: the older of them (20 s) leaves in 40 s
    assert window_wait(rows, 3, now + timedelta(seconds=10)) is None  # it has left
