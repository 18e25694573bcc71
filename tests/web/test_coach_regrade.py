"""The coach's regrade page (web/coach/views.py:regrade, web/coach/forms.py): preview, regrade, refusals.

Grading is the real grader on the conftest's in-memory sandbox (eager Celery):
the test is about which submissions go back to the queue and what the coach is told.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from tests.fake_backend import FakeBackend
from web.challenges.models import Challenge, ChallengeVersion
from web.interviews.models import Interview, InterviewSubmission
from web.submissions.models import Status, Submission, Verdict

from .conftest import CORRECT, SUM_WRONG, reads_no_package_files


def done(challenge: Challenge, user: User, *, verdict: str = Verdict.INTERNAL_ERROR, age_hours: float = 0, **fields: Any) -> Submission:
    sub = Submission.objects.create(
        user=user, challenge=challenge, version=fields.pop("version", challenge.current_version), kind="submit", code=fields.pop("code", CORRECT),
        status=Status.DONE, verdict=verdict, score=None if verdict == Verdict.INTERNAL_ERROR else 0.0, **fields,
    )  # fmt: skip
    Submission.objects.filter(pk=sub.pk).update(created_at=timezone.now() - timedelta(hours=age_hours))
    return sub


def log_in(client: Client, coach: User) -> None:
    # Staff: every submission is theirs to regrade. What a coach by group may regrade is tested on its own below.
    User.objects.filter(pk=coach.pk).update(is_staff=True)
    client.force_login(coach)


def test_preview_lists_what_matches_and_changes_nothing(client: Client, coach: User, challenge: Challenge, user: User) -> None:
    log_in(client, coach)
    failed = done(challenge, user)
    old = done(challenge, user, age_hours=5)
    queued = Submission.objects.create(user=user, challenge=challenge, version=challenge.current_version, kind="run", code="x\n")

    page = client.get(reverse("coach-regrade"), {"ids": f"#{failed.pk}, {old.pk} {queued.pk}"})

    html = page.content.decode()
    assert page.status_code == 200 and 'data-count="2"' in html  # the queued one is being graded anyway
    assert f'data-submission="{failed.pk}"' in html and f'data-submission="{old.pk}"' in html
    assert 'id="regrade-confirm"' in html
    assert Submission.objects.filter(status=Status.DONE).count() == 2


def test_regrade_by_time_queues_only_those_and_reports_them(
    client: Client, coach: User, challenge: Challenge, user: User, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    log_in(client, coach)
    recent = done(challenge, user, age_hours=1)
    old = done(challenge, user, age_hours=30, code=SUM_WRONG)
    since = (timezone.localtime() - timedelta(hours=2)).strftime("%Y-%m-%d %H:%M")

    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(reverse("coach-regrade"), {"since": since, "regrade": "1"}, follow=True)

    assert answer.redirect_chain[-1][0] == reverse("coach-grading")
    assert f"Regrading 1 submission(s): #{recent.pk}." in answer.content.decode()
    recent.refresh_from_db()
    old.refresh_from_db()
    assert (recent.verdict, recent.score) == ("accepted", 100.0) and old.verdict == Verdict.INTERNAL_ERROR
    assert len(fake_sandbox.runs_of(CORRECT)) == 1 and fake_sandbox.runs_of(SUM_WRONG) == []


def test_regrade_on_the_current_version_moves_submissions_to_it(
    client: Client, coach: User, challenge: Challenge, user: User, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    log_in(client, coach)
    current = challenge.current_version
    older = ChallengeVersion.objects.create(
        challenge=challenge, version="0" * 64, files=current.files, statement="s", starter_code="", runtime=current.runtime
    )
    sub = done(challenge, user, verdict=Verdict.WRONG_ANSWER, version=older)

    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("coach-regrade"), {"version": older.pk, "on_current_version": "on", "regrade": "1"})

    sub.refresh_from_db()
    assert sub.version_id == current.pk and sub.verdict == "accepted"
    assert len(fake_sandbox.runs_of(CORRECT)) == 1


def test_bad_criteria_are_named_and_nothing_is_regraded(client: Client, coach: User, challenge: Challenge, user: User) -> None:
    log_in(client, coach)
    sub = done(challenge, user)
    for data, message in [
        ({"regrade": "1"}, "Name what to regrade: submission numbers, a version or a time."),
        ({"ids": "12 abc", "regrade": "1"}, "Not a submission number: abc."),
        ({"since": "yesterday", "regrade": "1"}, "Enter a valid date/time."),
        ({"version": "999999", "regrade": "1"}, "Select a valid choice."),
    ]:
        response = client.post(reverse("coach-regrade"), data)
        assert response.status_code == 200 and message in response.content.decode(), message
    assert Submission.objects.get(pk=sub.pk).verdict == Verdict.INTERNAL_ERROR


def test_the_dashboard_links_each_failure_to_the_regrade_page(client: Client, coach: User, challenge: Challenge, user: User, settings: Any) -> None:
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:9/0"  # the dashboard reports the broker; it need not be up here
    log_in(client, coach)
    failed = done(challenge, user)
    Submission.objects.filter(pk=failed.pk).update(finished_at=timezone.now())
    html = client.get(reverse("coach-grading")).content.decode()
    assert f'href="{reverse("coach-regrade")}?ids={failed.pk}"' in html


def test_candidates_and_visitors_cannot_regrade(client: Client, coach: User, challenge: Challenge, user: User) -> None:
    sub = done(challenge, user)
    anonymous = client.post(reverse("coach-regrade"), {"ids": str(sub.pk), "regrade": "1"})
    assert anonymous.status_code == 302 and anonymous["Location"].startswith(reverse("login"))
    client.force_login(user)
    assert client.post(reverse("coach-regrade"), {"ids": str(sub.pk), "regrade": "1"}).status_code == 403
    assert client.get(reverse("coach-regrade")).status_code == 403
    assert Submission.objects.get(pk=sub.pk).status == Status.DONE


def test_the_preview_reads_no_package_files(client: Client, coach: User, challenge: Challenge, user: User) -> None:
    log_in(client, coach)
    rows = [done(challenge, user) for _ in range(3)]
    # However many rows: the session, the user, the coach checks, the form's versions, the count, the rows joined.
    with reads_no_package_files(max_queries=7):
        page = client.get(reverse("coach-regrade"), {"ids": " ".join(str(s.pk) for s in rows)})
    assert page.status_code == 200 and 'data-count="3"' in page.content.decode()
    assert challenge.current_version.short_version in page.content.decode()


def test_a_coach_regrades_only_their_challenges_and_interviews(client: Client, coach: User, challenge: Challenge, user: User) -> None:
    client.force_login(coach)  # a coach by group, not staff
    other = done(challenge, user)
    in_interview = done(challenge, user)
    interview = Interview.objects.create(coach=coach, candidate=user, token="regrade-scope", duration_minutes=30)
    InterviewSubmission.objects.create(interview=interview, submission=in_interview)

    def matched(**criteria: str) -> set[int]:
        html = client.get(reverse("coach-regrade"), criteria).content.decode()
        return {sub.pk for sub in (other, in_interview) if f'data-submission="{sub.pk}"' in html}

    # Another coach's candidate on a challenge this coach did not write: not theirs; their interview's: theirs.
    assert matched(ids=f"{other.pk} {in_interview.pk}") == {in_interview.pk}
    assert "the challenges you wrote and of the interviews you ran" in client.get(reverse("coach-regrade")).content.decode()
    client.post(reverse("coach-regrade"), {"ids": f"{other.pk} {in_interview.pk}", "regrade": "1"})
    assert Submission.objects.get(pk=other.pk).status == Status.DONE  # never reset
    # The challenge's author may regrade all of its submissions.
    Challenge.objects.filter(pk=challenge.pk).update(author=coach)
    Submission.objects.filter(pk=in_interview.pk).update(status=Status.DONE)
    assert matched(ids=f"{other.pk} {in_interview.pk}") == {other.pk, in_interview.pk}
