"""The Learn page: open after an accepted Submit or giving up (recorded), shut during an unfinished interview.

web/challenges/learn.py decides who may open it; grader/learn.py builds what it shows (the package's learn.md,
each shipped wrong solution's why and its diff against the reference).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir
from web.submissions.models import GiveUp, Status, Submission

LESSON = "# Why it works\n\nAdding is **commutative**; the reference simply returns `a + b`.\n"
WRONG = "def add(a, b):\n    return a - b\n"
BROWSER = "text/html,application/xhtml+xml"


@pytest.fixture
def lesson_challenge(db: Any, package_root: Path, package_dir: Path, settings: Any) -> Challenge:
    """add-two with a lesson and one shipped wrong solution."""
    (package_dir / "learn.md").write_text(LESSON)
    (package_dir / "solutions").mkdir()
    (package_dir / "solutions" / "subtracts.py").write_text(WRONG)
    (package_dir / "solutions" / "expected.toml").write_text(
        '[subtracts]\nverdict = "wrong_answer"\nwhy = "Subtracts instead of adding: every probe with b != 0 catches it."\n'
    )
    settings.CHALLENGES_DIR = package_root
    assert challenge_sync_from_dir(package_root).ok
    return Challenge.objects.select_related("current_version").get(slug="add-two")


def learn(client: Client, slug: str = "add-two") -> Any:
    return client.get(reverse("challenge-learn", args=[slug]), HTTP_ACCEPT=BROWSER)


def accepted(user: User, challenge: Challenge) -> Submission:
    version = challenge.current_version
    return Submission.objects.create(
        user=user, challenge=challenge, version=version, kind="submit", code="x", status=Status.DONE, verdict="accepted", score=100.0
    )


def test_it_is_shut_until_solved_and_then_shows_the_lesson_and_each_mistake_with_its_diff(
    client: Client, user: User, lesson_challenge: Challenge
) -> None:
    client.force_login(user)
    shut = learn(client)
    assert shut.status_code == 403 and "opens once you have solved the challenge" in shut.content.decode()
    assert 'id="give-up"' in client.get(reverse("challenge-detail", args=["add-two"])).content.decode()
    Submission.objects.create(  # a Run that passes does not open it: only a Submit does
        user=user, challenge=lesson_challenge, version=lesson_challenge.current_version, kind="run", code="x", status=Status.DONE, verdict="accepted"
    )
    assert learn(client).status_code == 403
    accepted(user, lesson_challenge)
    page = learn(client).content.decode()
    assert "<strong>commutative</strong>" in page and "You solved this challenge." in page
    assert 'data-solution="subtracts"' in page and "Subtracts instead of adding" in page
    assert '<span class="diff-del">-    return a + b</span>' in page and '<span class="diff-add">+    return a - b</span>' in page
    assert 'id="reference"' in page and "return a + b" in page
    assert 'id="learn-link"' in client.get(reverse("challenge-detail", args=["add-two"])).content.decode()


def test_giving_up_is_recorded_once_and_opens_it(client: Client, user: User, lesson_challenge: Challenge) -> None:
    client.force_login(user)
    assert client.get(reverse("challenge-give-up", args=["add-two"])).status_code == 405  # a button, not a link
    response = client.post(reverse("challenge-give-up", args=["add-two"]))
    assert response.status_code == 302 and response["Location"] == reverse("challenge-learn", args=["add-two"])
    first = GiveUp.objects.get(user=user, challenge=lesson_challenge).created_at
    client.post(reverse("challenge-give-up", args=["add-two"]))
    assert GiveUp.objects.filter(user=user).count() == 1 and GiveUp.objects.get(user=user).created_at == first
    assert "You gave up on this challenge" in learn(client).content.decode()
    assert "· gave up" in client.get(reverse("catalogue")).content.decode()  # progress says so


def test_it_stays_shut_during_an_unfinished_interview_even_when_solved(
    client: Client, user: User, coach: User, lesson_challenge: Challenge
) -> None:
    from web.interviews.services import interview_create

    accepted(user, lesson_challenge)
    interview = interview_create(coach, candidate_username="alice", challenges=[lesson_challenge], duration_minutes=30)
    client.force_login(user)
    shut = learn(client)
    assert shut.status_code == 403 and "part of your interview" in shut.content.decode()
    refused = client.post(reverse("challenge-give-up", args=["add-two"]), HTTP_ACCEPT="application/json")
    assert refused.status_code == 409 and not GiveUp.objects.exists()
    page = client.get(reverse("challenge-detail", args=["add-two"])).content.decode()
    assert 'id="give-up"' not in page and 'id="learn-link"' not in page
    # Live, then over: it opens again once the interview has ended.
    type(interview).objects.filter(pk=interview.pk).update(started_at=timezone.now() - timedelta(minutes=40))
    assert learn(client).status_code == 200


def test_a_coach_may_always_open_it_and_a_missing_lesson_says_so(client: Client, coach: User, challenge: Challenge) -> None:
    client.force_login(coach)
    page = learn(client).content.decode()
    assert "Open to you as a coach." in page and 'id="lesson-missing"' in page and "ships no wrong solutions" in page


def test_anonymous_visitors_are_sent_to_log_in(client: Client, challenge: Challenge) -> None:
    response = client.get(reverse("challenge-learn", args=["add-two"]))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
