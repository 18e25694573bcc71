"""Per-challenge figures for coaches: web/interviews/stats.py, the statistics page and the picker.

Typical solve time (median to the first accepted Submit, from an interview's
start or a practice candidate's first submission; the difficulty's figure
when there are fewer than MIN_SOLVES solves), and over ended interviews:
sessions, solve rate, median time, the most failed hidden probes.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from web.challenges.models import Challenge
from web.interviews.models import Interview, InterviewSubmission
from web.interviews.services import interview_create
from web.interviews.stats import FALLBACK_MINUTES, MIN_SOLVES, challenge_stats
from web.submissions.models import Kind, Status, Submission, Verdict

T0 = timezone.now() - timedelta(days=2)


def submission(
    user: User, challenge: Challenge, at: datetime, *, verdict: str = Verdict.ACCEPTED, kind: str = Kind.SUBMIT, **extra: Any
) -> Submission:
    s = Submission.objects.create(
        user=user, challenge=challenge, version=challenge.current_version, kind=kind, code="x", status=Status.DONE,
        verdict=verdict, score=100.0 if verdict == Verdict.ACCEPTED else 0.0, **extra,
    )  # fmt: skip
    Submission.objects.filter(pk=s.pk).update(created_at=at)
    return s


def practice_solve(name: str, challenge: Challenge, minutes: float) -> None:
    """A candidate's first practice Run, then an accepted Submit ``minutes`` later."""
    user = User.objects.create_user(name)
    submission(user, challenge, T0, verdict=Verdict.WRONG_ANSWER, kind=Kind.RUN)
    submission(user, challenge, T0 + timedelta(minutes=minutes))


def ended_interview(coach: User, candidate: User, challenges: list[Challenge], *, started: datetime) -> Interview:
    interview = interview_create(coach, candidate_username=candidate.username, challenges=challenges, duration_minutes=60)
    Interview.objects.filter(pk=interview.pk).update(started_at=started, ended_at=started + timedelta(minutes=50))
    interview.refresh_from_db()
    return interview


def in_interview(interview: Interview, s: Submission) -> Submission:
    InterviewSubmission.objects.create(interview=interview, submission=s)
    return s


def failed(*names: str) -> list[dict[str, Any]]:
    return [{"name": n, "passed": False} for n in names] + [{"name": "ok-probe", "passed": True}]


def test_too_few_solves_fall_back_on_the_difficulty_figure_and_say_so(catalogue: dict[str, Challenge]) -> None:
    practice_solve("p1", catalogue["add-two"], 12)
    stats = {s.challenge.slug: s for s in challenge_stats()}
    typical = stats["add-two"].typical
    assert not typical.measured and typical.solves == 1 and typical.minutes == FALLBACK_MINUTES["easy"]
    assert typical.text == f"about {FALLBACK_MINUTES['easy']} min (only 1 solve; the usual figure for easy)"
    assert stats["mul-two"].typical.text.startswith(f"about {FALLBACK_MINUTES['easy']} min (no solves yet")


def test_enough_solves_give_the_median_from_practice_and_interviews(coach: User, catalogue: dict[str, Challenge]) -> None:
    add_two = catalogue["add-two"]
    for i, minutes in enumerate([10, 14, 40, 8]):
        practice_solve(f"p{i}", add_two, minutes)
    # Accepted on the first submission: says nothing of how long it took, so it is not a sample.
    submission(User.objects.create_user("lucky"), add_two, T0)
    assert not challenge_stats([add_two])[0].typical.measured
    candidate = User.objects.create_user("cand")
    interview = ended_interview(coach, candidate, [add_two], started=T0)
    in_interview(interview, submission(candidate, add_two, T0 + timedelta(minutes=20)))
    typical = challenge_stats([add_two])[0].typical
    assert MIN_SOLVES == 5 and typical.measured and typical.solves == 5
    assert typical.minutes == 14 and typical.text == "typically 14 min (median of 5 solves)"


def test_interview_statistics_over_ended_sessions(coach: User, catalogue: dict[str, Challenge]) -> None:
    add_two, mul_two = catalogue["add-two"], catalogue["mul-two"]
    people = [User.objects.create_user(f"c{i}") for i in range(4)]
    first = ended_interview(coach, people[0], [add_two, mul_two], started=T0)
    in_interview(first, submission(people[0], add_two, T0 + timedelta(minutes=5), verdict=Verdict.PARTIAL, probes=failed("positives")))
    in_interview(first, submission(people[0], add_two, T0 + timedelta(minutes=9)))
    in_interview(first, submission(people[0], add_two, T0 + timedelta(minutes=30)))  # a later accept: the first one counts
    in_interview(first, submission(people[0], mul_two, T0 + timedelta(minutes=40), verdict=Verdict.WRONG_ANSWER, probes=failed("negatives")))
    second = ended_interview(coach, people[1], [add_two], started=T0)
    in_interview(second, submission(people[1], add_two, T0 + timedelta(minutes=21)))
    third = ended_interview(coach, people[2], [add_two], started=T0)
    both = failed("positives", "negatives")
    in_interview(third, submission(people[2], add_two, T0 + timedelta(minutes=3), verdict=Verdict.WRONG_ANSWER, probes=both))
    # Still running: not a past session.
    running = interview_create(coach, candidate_username=people[3].username, challenges=[add_two], duration_minutes=60)
    Interview.objects.filter(pk=running.pk).update(started_at=timezone.now())

    stats = {s.challenge.slug: s for s in challenge_stats()}
    two = stats["add-two"]
    assert (two.sessions, two.solved, two.median_minutes) == (3, 2, 15.0)
    assert two.solve_rate_text == "67% of 3 sessions"
    assert two.failed_probes == [("positives", 2), ("negatives", 1)]
    mul = stats["mul-two"]
    assert (mul.sessions, mul.solved, mul.median_minutes, mul.failed_probes) == (1, 0, None, [("negatives", 1)])
    assert stats["add-again"].sessions == 0 and stats["add-again"].solve_rate is None


def test_the_statistics_page_and_the_picker_show_the_figures(coach: User, catalogue: dict[str, Challenge]) -> None:
    add_two = catalogue["add-two"]
    candidate = User.objects.create_user("cand")
    interview = ended_interview(coach, candidate, [add_two], started=T0)
    in_interview(interview, submission(candidate, add_two, T0 + timedelta(minutes=3), verdict=Verdict.WRONG_ANSWER, probes=failed("positives")))
    client = Client()
    client.force_login(coach)
    page = client.get(reverse("interview-statistics")).content.decode()
    assert 'data-slug="add-two"' in page and "<code>positives</code> (1)" in page and "0% (0 of 1)" in page
    picker = client.get(reverse("interview-create")).content.decode()
    assert "solved in 0% of 1 session" in picker and "About 15 min (no solves yet; the usual figure for easy)" in picker
    assert "most failed: <code>positives</code>" in picker


@pytest.mark.parametrize("name", ["interview-statistics"])
def test_statistics_are_for_coaches(name: str, user: User, catalogue: dict[str, Challenge]) -> None:
    client = Client()
    assert client.get(reverse(name)).status_code == 302
    client.force_login(user)
    assert client.get(reverse(name)).status_code == 403
