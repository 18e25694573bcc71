"""Session settings, server side: web/interviews/session_settings.py, services.interview_validate, the create form.

Every refusal of the create form at once; the hint policy enforced where
reveals are made (web/submissions/services/reveal.py asks the interviews'
guard); the penalty arithmetic the live view and the scorecard show; and the
hidden-probe detail of the candidate's payload (summary, or full as the
interviewer sees it) through ``submission_payload``'s explicit parameter.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from tests.fake_backend import FakeBackend
from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir
from web.interviews.models import HiddenFeedback, HintPolicy, Interview
from web.interviews.services import InterviewInvalid, interview_create, interview_end, interview_open, interview_validate
from web.interviews.session_settings import score_line
from web.submissions.errors import HintsSwitchedOff
from web.submissions.models import HintReveal, Kind, Status, Submission, Verdict
from web.submissions.presenters import submission_payload
from web.submissions.services.intake import submission_create
from web.submissions.services.reveal import hint_reveal

from .conftest import CORRECT, SUM_WRONG


@pytest.fixture
def second_challenge(challenge: Challenge, package_root: Path) -> Challenge:
    """A copy of add-two under another slug (add-three), for interviews of two challenges."""
    source, copy = package_root / "basics" / "add-two", package_root / "basics" / "add-three"
    shutil.copytree(source, copy)
    (copy / "challenge.toml").write_text((source / "challenge.toml").read_text().replace('slug = "add-two"', 'slug = "add-three"'))
    assert challenge_sync_from_dir(package_root).ok
    return Challenge.objects.select_related("current_version").get(slug="add-three")


def as_user(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def make(coach: User, challenge: Challenge, **settings: Any) -> Interview:
    interview = interview_create(coach, candidate_username="alice", challenges=[challenge], duration_minutes=30, **settings)
    return interview


def submit(client: Client, interview: Interview, code: str, capture: Any, kind: str = "submit") -> dict[str, Any]:
    with capture(execute=True):
        answer = client.post(reverse(f"interview-{kind}", args=[interview.token, "add-two"]), code, content_type="text/plain")
    assert answer.status_code == 202, answer.content
    return answer.json()


# --- Every refusal at once ---------------------------------------------------------------------


def test_validation_collects_every_refusal_by_field(coach: User, user: User, challenge: Challenge) -> None:
    with pytest.raises(InterviewInvalid) as caught:
        interview_validate(
            coach, candidate_username="nobody", challenges=[], duration_minutes=5, hint_policy=HintPolicy.PENALTY, hint_penalty=0,
            hidden_feedback="everything",
        )  # fmt: skip
    errors = caught.value.errors
    assert set(errors) == {"candidate", "challenges", "duration_minutes", "hint_penalty", "hidden_feedback"}
    assert errors["candidate"] == ["No active user 'nobody'; the candidate must have an account."]
    assert errors["challenges"] == ["Choose at least one challenge."]
    assert "between 10 and 180" in errors["duration_minutes"][0]
    assert not Interview.objects.exists()


def test_a_valid_interview_passes_validation_and_keeps_its_settings(coach: User, user: User, challenge: Challenge) -> None:
    interview = make(coach, challenge, hint_policy=HintPolicy.PENALTY, hint_penalty=15, hidden_feedback=HiddenFeedback.FULL)
    interview.refresh_from_db()
    assert (interview.hint_policy, interview.hint_penalty, interview.hidden_feedback) == ("penalty", 15, "full")


def test_the_form_reports_candidate_challenges_and_duration_together(coach: User, user: User, challenge: Challenge) -> None:
    response = as_user(coach).post(reverse("interview-create"), {"candidate": "nobody", "duration_minutes": "5", "hint_policy": "on_request"})
    html = response.content.decode()
    assert response.status_code == 200
    for message in ("No active user &#x27;nobody&#x27;", "Choose at least one challenge.", "The duration must be between 10 and 180 minutes."):
        assert message in html
    assert "3 fields to fix" in html
    assert not Interview.objects.exists()


def test_a_field_that_fails_to_parse_is_reported_beside_the_service_refusals(coach: User, user: User, challenge: Challenge) -> None:
    response = as_user(coach).post(reverse("interview-create"), {"candidate": "", "challenges": ["add-two", "no-such"], "duration_minutes": "lots"})
    html = response.content.decode()
    assert "Enter a whole number." in html and "Name the candidate: their username." in html and "No published challenge: no-such." in html
    # The duration's own parse error only: the service's "give the duration" would say the same twice.
    assert "Give the duration" not in html
    assert not Interview.objects.exists()


def test_the_form_keeps_the_order_given_by_the_positions(coach: User, user: User, challenge: Challenge, second_challenge: Challenge) -> None:
    data = {
        "candidate": "alice", "duration_minutes": "40", "challenges": ["add-two", "add-three"],
        "position-add-two": "2", "position-add-three": "1", "minutes-add-three": "15", "hint_policy": "off", "hidden_feedback": "full",
    }  # fmt: skip
    response = as_user(coach).post(reverse("interview-create"), data)
    interview = Interview.objects.get()
    assert response.status_code == 302
    items = list(interview.items.order_by("position").values_list("challenge__slug", "minutes"))
    assert items == [("add-three", 15), ("add-two", None)]
    assert (interview.hint_policy, interview.hidden_feedback) == ("off", "full")


# --- The penalty arithmetic ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("best", "hints", "policy", "score", "text"),
    [
        (100.0, 1, "penalty", 90.0, "100 - 10 for 1 hint = 90"),
        (87.5, 2, "penalty", 67.5, "87.5 - 20 for 2 hints = 67.5"),
        (30.0, 4, "penalty", 0.0, "30 - 40 for 4 hints = 0"),  # never below zero
        (100.0, 0, "penalty", 100.0, "100"),
        (100.0, 3, "on_request", 100.0, "100"),  # hints free: the grader's score
        (None, 1, "penalty", None, "no submit yet; 10 for 1 hint to take off"),
    ],
)
def test_score_line_takes_the_penalty_off_the_best_score(best: float | None, hints: int, policy: str, score: float | None, text: str) -> None:
    line = score_line(best, hints, policy, 10)
    assert (line.score, line.text) == (score, text)


def test_the_live_view_and_the_scorecard_show_the_penalised_score(
    coach: User, user: User, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    interview = make(coach, challenge, hint_policy=HintPolicy.PENALTY, hint_penalty=10)
    candidate = as_user(user)
    candidate.get(reverse("interview-candidate", args=[interview.token]))
    wrong = submit(candidate, interview, SUM_WRONG, django_capture_on_commit_callbacks)
    polled = candidate.get(wrong["url"]).json()
    assert polled["hint_policy"]["policy"] == "penalty" and "costs 10 points" in polled["hint_policy"]["text"]
    revealed = candidate.post(polled["hints"][0]["reveal_url"])
    assert revealed.status_code == 200 and revealed.json()["hints"][0]["shown"] is True
    right = submit(candidate, interview, CORRECT, django_capture_on_commit_callbacks)
    assert Submission.objects.get(pk=right["id"]).score == 100.0  # the grader's score is untouched

    coach_client = as_user(coach)
    state = coach_client.get(reverse("interview-live-state", args=[interview.pk])).json()
    row = state["challenges"][0]
    assert (row["score_line"], row["counted_score"]) == ("100 - 10 for 1 hint = 90", 90.0)
    assert state["settings"]["hint_policy"] == "penalty" and state["settings"]["hint_penalty"] == 10
    live = coach_client.get(reverse("interview-live", args=[interview.pk])).content.decode()
    assert 'data-hint-policy="penalty"' in live and "10 points per hint" in live
    card = coach_client.get(reverse("interview-scorecard", args=[interview.pk])).content.decode()
    assert "100 - 10 for 1 hint = 90" in card and "Summary (as in practice)" in card


# --- Hints off, enforced where reveals are made ----------------------------------------------------


def test_with_hints_off_the_page_offers_none_and_every_reveal_is_refused(
    coach: User, user: User, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    interview = make(coach, challenge, hint_policy=HintPolicy.OFF)
    candidate = as_user(user)
    page = candidate.get(reverse("interview-candidate", args=[interview.token])).content.decode()
    assert 'data-hint-policy="off"' in page and "Hints are off in this interview." in page
    answer = submit(candidate, interview, SUM_WRONG, django_capture_on_commit_callbacks)
    submission = Submission.objects.get(pk=answer["id"])
    assert [h["id"] for h in submission.hints] == ["nudge", "concept", "near"]  # unlocked in the stored result
    assert candidate.get(answer["url"]).json()["hints"] == []
    # The service itself, the interview's endpoint and the practice endpoint all refuse.
    with pytest.raises(HintsSwitchedOff, match="switched off"):
        hint_reveal(user, submission, "nudge")
    forced = candidate.post(reverse("interview-hint-reveal", args=[interview.token, submission.pk, "nudge"]))
    assert forced.status_code == 403 and forced.json()["error"] == "Hints are switched off in this mock interview."
    assert candidate.post(reverse("submission-hint-reveal", args=[submission.pk, "nudge"])).status_code == 403
    assert not HintReveal.objects.exists()


def test_hints_off_closes_the_practice_page_for_the_interview_challenges_while_it_runs(
    coach: User, user: User, challenge: Challenge, second_challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    interview = make(coach, challenge, hint_policy=HintPolicy.OFF)
    with django_capture_on_commit_callbacks(execute=True):
        practice = submission_create(user, challenge, SUM_WRONG, Kind.SUBMIT)
        other = submission_create(user, second_challenge, SUM_WRONG, Kind.SUBMIT)
    practice.refresh_from_db()
    other.refresh_from_db()
    # Scheduled, not started: practice is still practice.
    assert hint_reveal(user, practice, "nudge").id == "nudge"
    HintReveal.objects.all().delete()
    interview_open(interview, user)
    with pytest.raises(HintsSwitchedOff, match="until your mock interview ends"):
        hint_reveal(user, practice, "nudge")
    assert hint_reveal(user, other, "nudge").id == "nudge"  # not one of the interview's challenges
    interview_end(interview, coach)
    assert hint_reveal(user, practice, "nudge").id == "nudge"  # over: practice again


def test_hints_on_request_reveal_through_the_interview(
    coach: User, user: User, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    interview = make(coach, challenge)
    candidate = as_user(user)
    candidate.get(reverse("interview-candidate", args=[interview.token]))
    answer = submit(candidate, interview, SUM_WRONG, django_capture_on_commit_callbacks)
    hints = candidate.get(answer["url"]).json()["hints"]
    assert hints[0]["reveal_url"] == reverse("interview-hint-reveal", args=[interview.token, answer["id"], "nudge"])
    revealed = candidate.post(hints[0]["reveal_url"]).json()
    assert "returns" in revealed["hints"][0]["html"] and revealed["url"] == answer["url"]
    assert HintReveal.objects.get().submission_id == answer["id"]


# --- Hidden-probe detail ------------------------------------------------------------------------


@pytest.fixture
def hidden_failure(user: User, challenge: Challenge) -> Submission:
    """A graded Submit whose hidden probe failed: the stored result names the expected value and the output."""
    assert challenge.current_version is not None
    probe = {
        "name": "positives", "category": "correctness", "weight": 2.0, "passed": False, "status": "wrong_answer",
        "message": "expected [3, 30, 15], got [0, 0, 0]", "description": "Positive integers.", "duration_ms": 4,
        "observation": [0, 0, 0], "expected": [3, 30, 15], "stdout": "printed-by-candidate",
        "details": {"kind": "values"},
    }  # fmt: skip
    return Submission.objects.create(
        user=user, challenge=challenge, version=challenge.current_version, kind=Kind.SUBMIT, code="x", status=Status.DONE,
        verdict=Verdict.WRONG_ANSWER, score=0.0, probes=[probe], message="0 of 1 probes passed",
    )  # fmt: skip


def test_the_payload_summarises_hidden_probes_by_default_and_shows_them_whole_when_asked(hidden_failure: Submission) -> None:
    summary = submission_payload(hidden_failure, set())
    full = submission_payload(hidden_failure, set(), hidden_probes="full")
    assert summary == submission_payload(hidden_failure, set(), hidden_probes="summary")
    text = json.dumps(summary)
    assert "[3, 30, 15]" not in text and "printed-by-candidate" not in text and summary["probe_details"] == "summary"
    probe = full["probes"][0]
    assert (probe["expected"], probe["observation"], probe["stdout"]) == ([3, 30, 15], [0, 0, 0], "printed-by-candidate")
    assert probe["message"] == "expected [3, 30, 15], got [0, 0, 0]" and full["probe_details"] == "full"
    with pytest.raises(ValueError, match="summary' or 'full"):
        submission_payload(hidden_failure, set(), hidden_probes="everything")  # type: ignore[arg-type]


def test_the_interview_status_uses_the_session_setting_and_the_plain_status_stays_summary(
    coach: User, user: User, challenge: Challenge, hidden_failure: Submission
) -> None:
    from web.interviews.models import InterviewSubmission

    full = make(coach, challenge, hidden_feedback=HiddenFeedback.FULL)
    InterviewSubmission.objects.create(interview=full, submission=hidden_failure)
    candidate = as_user(user)
    shown = candidate.get(reverse("interview-submission-status", args=[full.token, hidden_failure.pk])).json()
    assert shown["probes"][0]["expected"] == [3, 30, 15]
    plain = json.dumps(candidate.get(reverse("submission-status", args=[hidden_failure.pk])).json())
    assert "[3, 30, 15]" not in plain and "printed-by-candidate" not in plain
    # A summary session's candidate sees the policy's view under the private link too.
    Interview.objects.filter(pk=full.pk).update(hidden_feedback=HiddenFeedback.SUMMARY)
    summary = json.dumps(candidate.get(reverse("interview-submission-status", args=[full.token, hidden_failure.pk])).json())
    assert "[3, 30, 15]" not in summary
    # Not the candidate's interview submission: a 404, as for one that does not exist.
    other = Client()
    other.force_login(coach)
    assert other.get(reverse("interview-submission-status", args=[full.token, hidden_failure.pk])).status_code == 404
