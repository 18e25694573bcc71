"""Per-user rate limits (web/submissions/limits.py) through the page's JSON endpoints and the API.

The limit lives in submission_create, so both doors refuse alike: 429, a
message with the limit and the wait, a Retry-After header, nothing saved.
"""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from tests.fake_backend import FakeBackend
from web.challenges.models import Challenge
from web.submissions.limits import rate_limited
from web.submissions.models import Submission

from .conftest import CORRECT

CODE = CORRECT


@pytest.fixture
def limits(settings: Any) -> None:
    settings.SUBMISSIONS_RUNS_PER_MINUTE = 3
    settings.SUBMISSIONS_SUBMITS_PER_MINUTE = 2
    settings.SUBMISSIONS_MAX_PENDING = 100  # nothing is graded here (no commit): only the rate limit may refuse


def page_post(client: Client, kind: str) -> Any:
    return client.post(reverse(f"challenge-{kind}", args=["add-two"]), data=CODE, content_type="text/plain")


def api_post(client: Client, kind: str) -> Any:
    return client.post(reverse("api-submit", args=["add-two"]), data={"kind": kind, "code": CODE}, content_type="application/json")


def test_the_page_refuses_the_fourth_run_in_a_minute(alice: Client, challenge: Challenge, fake_sandbox: FakeBackend, limits: None) -> None:
    assert [page_post(alice, "run").status_code for _ in range(3)] == [202, 202, 202]
    refused = page_post(alice, "run")
    assert refused.status_code == 429
    message = refused.json()["error"]
    assert message.startswith("You can run code 3 times per minute; try again in ") and message.endswith(" s.")
    wait = int(message.split("try again in ")[1].split(" ")[0])
    assert 1 <= wait <= 60 and refused["Retry-After"] == str(wait) and refused.json()["retry_after"] == wait
    assert Submission.objects.count() == 3
    # Runs and submits are counted apart.
    assert page_post(alice, "submit").status_code == 202


def test_the_api_refuses_with_429_and_retry_after(client: Client, challenge: Challenge, fake_sandbox: FakeBackend, user: User, limits: None) -> None:
    out = StringIO()
    call_command("api_token", user.username, stdout=out)
    client.defaults["HTTP_AUTHORIZATION"] = f"Token {out.getvalue().strip()}"
    assert [api_post(client, "submit").status_code for _ in range(2)] == [202, 202]
    refused = api_post(client, "submit")
    assert refused.status_code == 429
    assert refused.json()["error"].startswith("You can submit 2 times per minute; try again in ")
    assert 1 <= int(refused["Retry-After"]) <= 60 and refused.json()["retry_after"] == int(refused["Retry-After"])  # as on the page
    assert Submission.objects.filter(kind="submit").count() == 2


def test_page_and_api_share_one_count(
    client: Client, alice: Client, challenge: Challenge, fake_sandbox: FakeBackend, user: User, limits: None
) -> None:
    assert page_post(alice, "submit").status_code == 202
    assert api_post(alice, "submit").status_code == 202
    assert page_post(alice, "submit").status_code == 429
    assert api_post(alice, "submit").status_code == 429


def test_the_window_slides_and_users_are_counted_apart(
    alice: Client, challenge: Challenge, fake_sandbox: FakeBackend, user: User, other_user: User, limits: None
) -> None:
    for _ in range(2):
        assert page_post(alice, "submit").status_code == 202
    assert rate_limited(user, "submit") is not None
    assert rate_limited(other_user, "submit") is None  # Mallory has her own minute

    oldest = Submission.objects.order_by("created_at").first()
    assert oldest is not None
    Submission.objects.filter(pk=oldest.pk).update(created_at=oldest.created_at - timedelta(seconds=61))
    assert rate_limited(user, "submit") is None
    assert page_post(alice, "submit").status_code == 202


def test_the_wait_is_until_the_oldest_counted_one_leaves_the_window(
    challenge: Challenge, fake_sandbox: FakeBackend, user: User, limits: None
) -> None:
    from web.submissions.services.intake import submission_create

    first = submission_create(user, challenge, CODE, "submit")
    submission_create(user, challenge, CODE, "submit")
    Submission.objects.filter(pk=first.pk).update(created_at=first.created_at - timedelta(seconds=50))
    limited = rate_limited(user, "submit")
    assert limited is not None and limited.retry_after in (10, 11)


def test_submissions_the_platform_failed_to_grade_are_not_counted(
    alice: Client, challenge: Challenge, fake_sandbox: FakeBackend, limits: None
) -> None:
    assert [page_post(alice, "submit").status_code for _ in range(2)] == [202, 202]
    assert page_post(alice, "submit").status_code == 429
    # Both ended internal_error (the platform gave up): the candidate gets their tries back.
    Submission.objects.filter(kind="submit").update(status="done", verdict="internal_error")
    assert page_post(alice, "submit").status_code == 202
