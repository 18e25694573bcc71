"""web/submissions/waiting.py: the typical grading time on the challenge page, and a queued submission's place in line."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from web.challenges.models import Challenge
from web.submissions.models import Status, Submission
from web.submissions.waiting import MIN_GRADINGS, queue_ahead, typical_grading


def _submission(user: User, challenge: Challenge, *, kind: str = "submit", status: str = Status.QUEUED, seconds: float | None = None) -> Submission:
    assert challenge.current_version is not None
    row = Submission.objects.create(user=user, challenge=challenge, version=challenge.current_version, kind=kind, code="x = 1\n", status=status)
    if seconds is not None:
        Submission.objects.filter(pk=row.pk).update(finished_at=row.created_at + timedelta(seconds=seconds), status=Status.DONE)
        row.refresh_from_db()
    return row


def test_the_typical_time_is_the_median_of_recent_gradings_per_kind(challenge: Challenge, user: User) -> None:
    assert typical_grading(challenge) == {}
    for seconds in (4.0, 6.0, 30.0):
        _submission(user, challenge, seconds=seconds)
    for seconds in (2.0, 3.0):  # too few runs to say anything
        _submission(user, challenge, kind="run", seconds=seconds)
    typical = typical_grading(challenge)
    assert set(typical) == {"submit"} and typical["submit"].seconds == 6.0 and typical["submit"].count == MIN_GRADINGS


def test_time_outs_and_platform_faults_do_not_make_the_typical_time(challenge: Challenge, user: User) -> None:
    for seconds in (1.0, 1.0, 2.0):
        _submission(user, challenge, seconds=seconds)
    for verdict in ("time_limit", "time_limit", "internal_error", "time_limit"):
        Submission.objects.filter(pk=_submission(user, challenge, seconds=120.0).pk).update(verdict=verdict)
    typical = typical_grading(challenge)["submit"]
    assert (typical.seconds, typical.count) == (1.0, 3)  # not 120 s: an endless loop waits out every limit


def test_the_challenge_page_says_the_typical_time_once_it_is_known(challenge: Challenge, user: User, client: Client) -> None:
    url = reverse("challenge-detail", args=[challenge.slug])
    client.force_login(user)
    assert 'id="typical-wait"' not in client.get(url).content.decode()
    for seconds in (5.0, 7.0, 9.0):
        _submission(user, challenge, seconds=seconds)
    page = client.get(url).content.decode()
    assert 'id="typical-wait"' in page and "about 7 s for a Submit" in page


def test_a_grading_faster_than_half_a_second_is_not_said_as_0_s(challenge: Challenge, user: User, client: Client) -> None:
    client.force_login(user)
    for seconds in (0.3, 0.4, 0.45):
        _submission(user, challenge, seconds=seconds)
    for seconds in (0.5, 0.6, 1.4):
        _submission(user, challenge, kind="run", seconds=seconds)
    page = client.get(reverse("challenge-detail", args=[challenge.slug])).content.decode()
    assert "about 1 s for a Run, under a second for a Submit" in page and "about 0 s" not in page


def test_a_queued_submission_knows_how_many_are_ahead_of_it(challenge: Challenge, user: User, other_user: User, settings: Any) -> None:
    first = _submission(other_user, challenge)
    _submission(other_user, challenge, status=Status.RUNNING)  # holds a worker, not a place in line
    mine = _submission(user, challenge)
    assert queue_ahead(first) == 0 and queue_ahead(mine) == 1
    done = _submission(user, challenge, seconds=3.0)
    assert queue_ahead(done) is None
    # Routed to a queue of its own, the runtime waits in that line: the default queue's submissions are not ahead of it.
    settings.GRADING_QUEUES = {"torch": "torch"}
    assert queue_ahead(mine) == 1  # python stays on the default queue
    settings.GRADING_QUEUES = {"python": "py"}
    assert queue_ahead(mine) == 1  # the whole line moved with it


def test_the_status_json_carries_the_place_in_line_while_queued(challenge: Challenge, user: User, other_user: User, client: Client) -> None:
    _submission(other_user, challenge)
    mine = _submission(user, challenge)
    client.force_login(user)
    body = client.get(reverse("submission-status", args=[mine.pk])).json()
    assert body["status"] == "queued" and body["queue_ahead"] == 1
