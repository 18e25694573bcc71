"""The candidate's Cancel (web/submissions/services/cancel.py, issue 29): queued ends at once, running within seconds.

The worker's path runs the real grader on the fake backend: the candidate's
Cancel lands while the job "runs" (the fake's ``during``), the worker's
cancel watch passes it to the sandbox, and the submission ends cancelled,
nothing scored. The real sandboxes' side (the kill) is
tests/sandbox/test_session.py's.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from tests.fake_backend import FakeBackend
from web.challenges.models import Challenge
from web.submissions.errors import CancelRefused
from web.submissions.models import Status, Submission, Verdict
from web.submissions.services import grading
from web.submissions.services.cancel import CANCELLED_MESSAGE, submission_cancel
from web.submissions.services.grading import submission_grade

SLOW = "def add(a, b):\n    return a + b  # slow\n"


def queued(user: User, challenge: Challenge, code: str = SLOW, kind: str = "submit") -> Submission:
    return Submission.objects.create(user=user, challenge=challenge, version=challenge.current_version, kind=kind, code=code)


def test_a_queued_submission_is_cancelled_at_once_and_a_worker_leaves_it(user: User, challenge: Challenge, fake_sandbox: FakeBackend) -> None:
    submission = submission_cancel(user, queued(user, challenge))
    assert (submission.status, submission.verdict, submission.score, submission.message) == (Status.DONE, Verdict.CANCELLED, None, CANCELLED_MESSAGE)
    assert submission_grade(submission.pk).state == "already_done"
    assert fake_sandbox.jobs == []  # never graded


@pytest.mark.django_db(transaction=True)  # the cancel watch has its own connection: it must see committed rows
def test_a_running_grading_is_stopped_by_the_cancel_and_stores_nothing_scored(
    user: User, challenge: Challenge, fake_sandbox: FakeBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grading, "CANCEL_POLL_SECONDS", 0.02)
    submission = queued(user, challenge)

    def candidate_cancels_while_it_runs() -> None:
        running = Submission.objects.get(pk=submission.pk)
        assert running.status == Status.RUNNING
        assert submission_cancel(user, running).cancel_requested
        time.sleep(1.0)  # fifty looks of the worker's cancel watch

    fake_sandbox.script(SLOW, during=candidate_cancels_while_it_runs)
    assert submission_grade(submission.pk).state == "cancelled"
    submission.refresh_from_db()
    assert (submission.status, submission.verdict, submission.score, submission.probes, submission.hints) == (
        Status.DONE, Verdict.CANCELLED, None, [], []
    )  # fmt: skip


def test_only_the_owner_may_cancel_and_only_before_it_ends(user: User, other_user: User, challenge: Challenge) -> None:
    submission = queued(user, challenge)
    with pytest.raises(CancelRefused, match="not your submission"):
        submission_cancel(other_user, submission)
    submission_cancel(user, submission)
    with pytest.raises(CancelRefused, match="already finished"):
        submission_cancel(user, submission)


def test_the_payload_offers_cancel_while_it_waits_and_the_endpoint_answers_the_new_state(
    alice: Client, user: User, other_user: User, challenge: Challenge
) -> None:
    submission = queued(user, challenge)
    status = alice.get(reverse("submission-status", args=[submission.pk])).json()
    assert status["cancel_url"] == reverse("submission-cancel", args=[submission.pk]) and status["cancelling"] is False

    Submission.objects.filter(pk=submission.pk).update(status=Status.RUNNING)
    answer = alice.post(status["cancel_url"])
    assert answer.status_code == 200
    assert answer.json()["cancel_url"] is None and answer.json()["cancelling"] is True  # the worker stops it next
    assert alice.get(status["cancel_url"]).status_code == 405

    Submission.objects.filter(pk=submission.pk).update(status=Status.DONE, verdict=Verdict.CANCELLED)
    again = alice.post(status["cancel_url"])
    assert again.status_code == 409 and "already finished" in again.json()["error"]
    done = alice.get(reverse("submission-status", args=[submission.pk])).json()
    assert done["cancel_url"] is None and done["cancelling"] is False and done["verdict_label"] == "Cancelled"

    mallory = Client()
    mallory.force_login(other_user)
    assert mallory.post(status["cancel_url"]).status_code == 404


def test_the_api_cancels_a_queued_submission(user: User, challenge: Challenge) -> None:
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(user)
    submission = queued(user, challenge)
    answer = api.post(reverse("api-cancel", args=[submission.pk]))
    assert answer.status_code == 200 and answer.json()["verdict"] == "cancelled" and answer.json()["done"] is True


def test_a_cancelled_grading_says_nothing_of_the_typical_time(user: User, challenge: Challenge, settings: Any) -> None:
    from web.submissions.waiting import UNTYPICAL

    assert Verdict.CANCELLED in UNTYPICAL
