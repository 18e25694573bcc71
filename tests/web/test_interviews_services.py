"""Mock interview services and selectors: web/interviews/services.py and selectors.py.

The clock (starts on the candidate's first visit, ends at the deadline or
early), the server-side lock, autosave limits, the timeline, the rubric and
the scorecard. Grading itself does not matter here: the in-memory sandbox (``fake_sandbox``) answers.
"""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from tests.fake_backend import FakeBackend, ok
from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir
from web.errors import ErrorAnswer, error_answer
from web.interviews import selectors, services
from web.interviews.models import Interview, InterviewSubmission, RubricScore, Snapshot, State
from web.interviews.services import (
    InterviewError,
    InterviewLocked,
    NotInInterview,
    SnapshotRateLimited,
    interview_assess,
    interview_create,
    interview_end,
    interview_open,
    interview_submission_create,
    snapshot_save,
)
from web.submissions.errors import RateLimitExceeded, SubmissionRejected
from web.submissions.models import HintReveal, Status, Submission
from web.submissions.services.grading import submission_grade
from web.submissions.services.intake import MAX_CODE_BYTES
from web.submissions.services.reveal import hint_reveal

from .conftest import ALL_SUM_HINTS, CORRECT

CODE = CORRECT
# Wrong on the public probe (small: add(2, 3) observes 2): the "sum" hints unlock.
RETURNS_A = "def add(a, b):\n    return a\n"


@pytest.fixture
def interview(coach: User, user: User, challenge: Challenge) -> Interview:
    return interview_create(coach, candidate_username="alice", challenges=[challenge], duration_minutes=30)


@pytest.fixture
def second_challenge(challenge: Challenge, package_root: Path) -> Challenge:
    """A copy of add-two under another slug, for interviews of two challenges."""
    source = package_root / "basics" / "add-two"
    copy = package_root / "basics" / "add-three"
    shutil.copytree(source, copy)
    (copy / "challenge.toml").write_text((source / "challenge.toml").read_text().replace('slug = "add-two"', 'slug = "add-three"'))
    assert challenge_sync_from_dir(package_root).ok
    return Challenge.objects.select_related("current_version").get(slug="add-three")


def started(interview: Interview, user: User, *, minutes_ago: float = 0) -> Interview:
    interview_open(interview, user)
    if minutes_ago:
        Interview.objects.filter(pk=interview.pk).update(started_at=timezone.now() - timedelta(minutes=minutes_ago))
        interview.refresh_from_db()
    return interview


# --- Create ---------------------------------------------------------------------------------


def test_create_makes_a_scheduled_interview_with_an_unguessable_token(interview: Interview, challenge: Challenge) -> None:
    assert interview.state(timezone.now()) == State.SCHEDULED
    assert len(interview.token) >= 40
    assert selectors.interview_challenges(interview) == [challenge]
    assert interview.remaining_seconds(timezone.now()) == 30 * 60


def test_two_interviews_get_different_tokens(coach: User, user: User, challenge: Challenge) -> None:
    tokens = {interview_create(coach, candidate_username="alice", challenges=[challenge], duration_minutes=30).token for _ in range(3)}
    assert len(tokens) == 3


def test_create_keeps_the_order_given(coach: User, user: User, challenge: Challenge, second_challenge: Challenge) -> None:
    other = second_challenge
    made = interview_create(coach, candidate_username="alice", challenges=[other, challenge], duration_minutes=30)
    assert selectors.interview_challenges(made) == [other, challenge]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"candidate_username": "nobody"}, "No active user 'nobody'"),
        ({"candidate_username": ""}, "Name the candidate"),
        ({"candidate_username": "cora"}, "cannot interview yourself"),
        ({"duration_minutes": 5}, "between 10 and 180 minutes"),
        ({"duration_minutes": 181}, "between 10 and 180 minutes"),
        ({"challenges": []}, "at least one challenge"),
    ],
)
def test_create_refuses_bad_input_naming_the_problem(coach: User, user: User, challenge: Challenge, kwargs: dict[str, Any], message: str) -> None:
    values: dict[str, Any] = {"candidate_username": "alice", "challenges": [challenge], "duration_minutes": 30, **kwargs}
    with pytest.raises(InterviewError, match=message):
        interview_create(coach, **values)
    assert not Interview.objects.exists()


def test_create_refuses_duplicates_unpublished_challenges_and_non_coaches(coach: User, user: User, other_user: User, challenge: Challenge) -> None:
    with pytest.raises(InterviewError, match="appears twice"):
        interview_create(coach, candidate_username="alice", challenges=[challenge, challenge], duration_minutes=30)
    with pytest.raises(InterviewError, match="Only coaches"):
        interview_create(other_user, candidate_username="alice", challenges=[challenge], duration_minutes=30)
    Challenge.objects.filter(pk=challenge.pk).update(published=False)
    challenge.refresh_from_db()
    with pytest.raises(InterviewError, match=r"Not published.*add-two"):
        interview_create(coach, candidate_username="alice", challenges=[challenge], duration_minutes=30)


# --- The clock ----------------------------------------------------------------------------


def test_the_clock_starts_on_the_candidates_first_visit_only(interview: Interview, user: User) -> None:
    interview_open(interview, user)
    first = interview.started_at
    assert first is not None and interview.state(timezone.now()) == State.LIVE
    interview_open(interview, user)
    assert Interview.objects.get(pk=interview.pk).started_at == first


def test_someone_else_opening_does_not_start_the_clock(interview: Interview, other_user: User, coach: User) -> None:
    for stranger in (other_user, coach):
        with pytest.raises(InterviewError, match="not your interview"):
            interview_open(interview, stranger)
    assert Interview.objects.get(pk=interview.pk).started_at is None


def test_remaining_time_counts_from_the_start(interview: Interview, user: User) -> None:
    started(interview, user, minutes_ago=10)
    remaining = interview.remaining_seconds(timezone.now())
    assert 19 * 60 <= remaining <= 20 * 60
    started(interview, user, minutes_ago=31)
    assert interview.state(timezone.now()) == State.ENDED and interview.remaining_seconds(timezone.now()) == 0


def test_the_coach_ends_early_and_cannot_end_twice(interview: Interview, user: User, coach: User, other_user: User) -> None:
    started(interview, user)
    with pytest.raises(InterviewError, match="Only the interview's coach"):
        interview_end(interview, other_user)
    interview_end(interview, coach)
    assert interview.state(timezone.now()) == State.ENDED
    with pytest.raises(InterviewLocked, match="already ended"):
        interview_end(interview, coach)


def test_an_interview_ended_before_it_started_never_starts(interview: Interview, user: User, coach: User) -> None:
    interview_end(interview, coach)
    interview_open(interview, user)
    interview.refresh_from_db()
    assert interview.started_at is None and interview.state(timezone.now()) == State.ENDED


# --- Runs and submits: submission_create's rules plus the clock ---------------------------------


def test_a_submit_during_the_interview_is_a_linked_graded_submission(
    interview: Interview, user: User, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    started(interview, user)
    with django_capture_on_commit_callbacks(execute=True):
        submission = interview_submission_create(interview, user, "add-two", CODE, "submit")
    submission.refresh_from_db()
    assert submission.status == Status.DONE and submission.score == 100.0
    assert InterviewSubmission.objects.get(submission=submission).interview == interview
    assert len(fake_sandbox.runs_of(CODE)) == 1
    # The code sent is on the timeline too.
    assert [s["code"] for s in selectors.snapshot_timeline(interview, submission.challenge)] == [CODE]


def test_runs_and_submits_are_refused_before_the_start_and_after_the_end(
    interview: Interview, user: User, coach: User, fake_sandbox: FakeBackend
) -> None:
    with pytest.raises(InterviewLocked, match="not started"):
        interview_submission_create(interview, user, "add-two", CODE, "run")
    started(interview, user, minutes_ago=31)
    with pytest.raises(InterviewLocked, match="Time is up"):
        interview_submission_create(interview, user, "add-two", CODE, "submit")
    assert not Submission.objects.exists()


def test_an_early_end_locks_at_once_with_its_own_message(interview: Interview, user: User, coach: User) -> None:
    started(interview, user)
    stale_copy = Interview.objects.get(pk=interview.pk)  # loaded before the end, as a request would have
    interview_end(interview, coach)
    with pytest.raises(InterviewLocked, match="interviewer ended"):
        interview_submission_create(stale_copy, user, "add-two", CODE, "submit")
    with pytest.raises(InterviewLocked):
        snapshot_save(stale_copy, user, "add-two", CODE)
    assert not Submission.objects.exists() and not Snapshot.objects.exists()


def test_submission_rules_still_apply_in_an_interview(interview: Interview, user: User, settings: Any) -> None:
    started(interview, user)
    with pytest.raises(SubmissionRejected, match="empty"):
        interview_submission_create(interview, user, "add-two", "", "submit")
    settings.SUBMISSIONS_SUBMITS_PER_MINUTE = 1
    interview_submission_create(interview, user, "add-two", CODE, "submit")
    with pytest.raises(RateLimitExceeded):
        interview_submission_create(interview, user, "add-two", CODE, "submit")
    assert InterviewSubmission.objects.count() == 1


def test_only_the_candidate_and_only_the_interviews_challenges(interview: Interview, user: User, other_user: User) -> None:
    started(interview, user)
    with pytest.raises(InterviewError, match="not your interview"):
        interview_submission_create(interview, other_user, "add-two", CODE, "submit")
    with pytest.raises(NotInInterview, match="'other' is not part"):
        interview_submission_create(interview, user, "other", CODE, "submit")


def test_a_submission_queued_before_the_end_is_graded_after_it(
    interview: Interview, user: User, coach: User, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    started(interview, user)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        submission = interview_submission_create(interview, user, "add-two", CODE, "submit")
    interview_end(interview, coach)
    assert len(callbacks) == 1
    assert submission_grade(submission.pk).state == "graded"
    live = selectors.interview_live_state(interview)
    row = live["challenges"][0]["submissions"][0]
    assert live["state"] == "ended" and row["done"] and row["score"] == 100.0


# --- Autosave ------------------------------------------------------------------------------


def test_autosave_stores_changes_only(interview: Interview, user: User, challenge: Challenge) -> None:
    started(interview, user)
    first = snapshot_save(interview, user, "add-two", "a = 1\n")
    again = snapshot_save(interview, user, "add-two", "a = 1\n")
    changed = snapshot_save(interview, user, "add-two", "a = 2\n")
    assert first.created and not again.created and again.snapshot.pk == first.snapshot.pk and changed.created
    assert [s["code"] for s in selectors.snapshot_timeline(interview, challenge)] == ["a = 1\n", "a = 2\n"]
    assert selectors.latest_snapshots(interview)[challenge.pk].code == "a = 2\n"


def test_autosave_accepts_an_empty_editor_and_refuses_what_is_too_large_or_binary(interview: Interview, user: User) -> None:
    started(interview, user)
    assert snapshot_save(interview, user, "add-two", "").created
    with pytest.raises(InterviewError, match=f"limit is {MAX_CODE_BYTES // 1024} KiB"):
        snapshot_save(interview, user, "add-two", "x" * (MAX_CODE_BYTES + 1))
    with pytest.raises(InterviewError, match="not valid UTF-8"):
        snapshot_save(interview, user, "add-two", b"\xff\xfe")
    with pytest.raises(InterviewError, match="NUL"):
        snapshot_save(interview, user, "add-two", "a\x00")
    assert Snapshot.objects.count() == 1


def test_autosave_rate_limit_refuses_a_flood_with_retry_after(interview: Interview, user: User) -> None:
    started(interview, user)
    for i in range(services.SNAPSHOTS_PER_MINUTE):
        snapshot_save(interview, user, "add-two", f"a = {i}\n")
    with pytest.raises(SnapshotRateLimited) as refused:
        snapshot_save(interview, user, "add-two", "a = 'one too many'\n")
    assert error_answer(refused.value) == ErrorAnswer(
        429, {"error": str(refused.value), "retry_after": refused.value.retry_after}, {"Retry-After": str(refused.value.retry_after)}
    )
    assert 1 <= refused.value.retry_after <= 61
    assert not snapshot_save(interview, user, "add-two", f"a = {services.SNAPSHOTS_PER_MINUTE - 1}\n").created  # unchanged: fine
    assert Snapshot.objects.count() == services.SNAPSHOTS_PER_MINUTE
    # A minute later the window is free again.
    Snapshot.objects.update(created_at=timezone.now() - timedelta(seconds=61))
    assert snapshot_save(interview, user, "add-two", "a = 'later'\n").created


# --- Assessment ----------------------------------------------------------------------------


def test_assess_stores_notes_rubric_and_recommendation(interview: Interview, coach: User) -> None:
    interview_assess(
        interview, coach, notes="Found the bug fast.",
        rubric={"correctness": {"score": 4, "comment": "all green"}, "numerics": {"score": "2", "comment": ""}},
        recommendation="yes",
    )  # fmt: skip
    interview_assess(interview, coach, rubric={"correctness": {"score": 3, "comment": "one slip"}})
    interview.refresh_from_db()
    assert interview.notes == "Found the bug fast." and interview.recommendation == "yes"
    assert selectors.interview_rubric(interview) == {
        "correctness": {"score": 3, "comment": "one slip"},
        "numerics": {"score": 2, "comment": ""},
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rubric": {"correctness": {"score": 5}}}, "from 1 to 4, not 5"),
        ({"rubric": {"correctness": {"score": 0}}}, "from 1 to 4, not 0"),
        ({"rubric": {"correctness": {"score": True}}}, "from 1 to 4"),
        ({"rubric": {"correctness": {}}}, "from 1 to 4, not None"),
        ({"rubric": {"charisma": {"score": 3}}}, "Unknown rubric criterion 'charisma'"),
        ({"rubric": {"debugging": 3}}, "Rubric debugging: send"),
        ({"rubric": {"debugging": {"score": 3, "comment": "x" * 501}}}, "limited to 500"),
        ({"recommendation": "maybe"}, "Unknown recommendation 'maybe'"),
        ({"notes": "x" * 20_001}, "limited to 20000"),
    ],
)
def test_assess_refuses_bad_values_and_changes_nothing(interview: Interview, coach: User, kwargs: dict[str, Any], message: str) -> None:
    values: dict[str, Any] = {"notes": "should not be saved", **kwargs}
    with pytest.raises(InterviewError, match=message):
        interview_assess(interview, coach, **values)
    interview.refresh_from_db()
    assert interview.notes == "" and not RubricScore.objects.exists()


def test_only_the_coach_or_staff_assess(interview: Interview, user: User, other_user: User) -> None:
    for who in (user, other_user):
        with pytest.raises(InterviewError, match="Only the interview's coach"):
            interview_assess(interview, who, notes="mine now")
    staff = User.objects.create_user("ops", password="pw-ops-12345", is_staff=True)
    interview_assess(interview, staff, recommendation="strong_no")
    assert Interview.objects.get(pk=interview.pk).recommendation == "strong_no"


# --- Live state and scorecard ------------------------------------------------------------------


def test_live_state_and_scorecard_show_code_runs_submits_hints_and_rubric(
    interview: Interview, user: User, coach: User, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    started(interview, user)
    # A hint the candidate saw before the interview is not one they used in it.
    HintReveal.objects.create(user=user, challenge=challenge, hint_id="old", tier=1, revealed_at=timezone.now() - timedelta(days=1))
    snapshot_save(interview, user, "add-two", "def add(a, b):\n    return 0\n")
    fake_sandbox.script(RETURNS_A, small=ok(2))
    with django_capture_on_commit_callbacks(execute=True):
        run = interview_submission_create(interview, user, "add-two", RETURNS_A, "run")
    run.refresh_from_db()
    hint_reveal(user, run, "nudge")
    hint_reveal(user, run, "concept")
    with django_capture_on_commit_callbacks(execute=True):
        interview_submission_create(interview, user, "add-two", CODE, "submit")
    interview_assess(
        interview, coach, notes="Good debugging.", rubric={"debugging": {"score": 4, "comment": "methodical"}}, recommendation="strong_yes"
    )

    live = selectors.interview_live_state(interview)
    row = live["challenges"][0]
    assert live["state"] == "live" and 0 < live["remaining_seconds"] <= 1800
    assert row["latest_code"] == CODE and row["snapshot_count"] == 3
    assert [(s["kind"], s["verdict"], s["score"]) for s in row["submissions"]] == [("run", "wrong_answer", 0.0), ("submit", "accepted", 100.0)]
    assert [h["hint_id"] for h in row["hints"]] == ["nudge", "concept"]
    assert row["hints"][1]["text"] == ALL_SUM_HINTS[1]["text"]
    assert "notes" not in str(selectors.interview_candidate_state(interview))

    interview_end(interview, coach)
    card = selectors.interview_scorecard(interview)
    summary = card.challenges[0]
    assert (summary.best, summary.runs, summary.submits, summary.hints, summary.snapshots) == (100.0, 1, 1, 2, 3)
    assert summary.final_code == CODE
    kinds = [e.kind for e in card.events]
    assert kinds[0] == "started" and kinds[-1] == "ended"
    assert kinds.count("run") == 1 and kinds.count("submit") == 1 and kinds.count("hint") == 2 and kinds.count("snapshots") == 1
    assert "Ended by the interviewer" in card.events[-1].text
    assert {r.criterion: (r.score, r.comment) for r in card.rubric}["debugging"] == (4, "methodical")
    assert [r.score for r in card.rubric if r.criterion != "debugging"] == [None, None, None]
    assert card.ended_at is not None


def _failed_run_in(interview: Interview, user: User, fake_sandbox: FakeBackend, capture: Any) -> Submission:
    """The interview started, and one Run of add-two graded wrong (its failing probe unlocks the "sum" hints)."""
    started(interview, user)
    fake_sandbox.script(RETURNS_A, small=ok(2))
    with capture(execute=True):
        run = interview_submission_create(interview, user, "add-two", RETURNS_A, "run")
    run.refresh_from_db()
    return run


def test_a_hint_revealed_after_the_end_is_not_counted_as_used(
    interview: Interview, user: User, coach: User, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    run = _failed_run_in(interview, user, fake_sandbox, django_capture_on_commit_callbacks)
    hint_reveal(user, run, "nudge")
    interview_end(interview, coach)
    hint_reveal(user, run, "concept")  # the challenge page's reveal stays open after the interview

    card = selectors.interview_scorecard(interview)
    assert card.challenges[0].hints == 1  # the hint asked for during the interview, not the later one
    assert [h["hint_id"] for h in selectors.interview_live_state(interview)["challenges"][0]["hints"]] == ["nudge"]


def test_hints_the_result_unlocked_but_nobody_asked_for_are_not_used(
    interview: Interview, user: User, coach: User, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    run = _failed_run_in(interview, user, fake_sandbox, django_capture_on_commit_callbacks)
    assert run.hints  # the failing probe unlocked some
    interview_end(interview, coach)
    assert selectors.interview_scorecard(interview).challenges[0].hints == 0


def test_candidate_lists_show_only_unfinished_interviews(interview: Interview, user: User, coach: User, challenge: Challenge) -> None:
    done = interview_create(coach, candidate_username="alice", challenges=[challenge], duration_minutes=10)
    interview_end(done, coach)
    assert selectors.interviews_for_candidate(user) == [interview]
    assert list(selectors.interviews_for_coach(coach)) == [done, interview]


def test_the_candidate_is_told_who_ended_it_even_before_the_clock_started(interview: Interview, user: User, coach: User) -> None:
    interview_end(interview, coach)  # the candidate never opened the link
    state = selectors.interview_candidate_state(interview)
    assert state["state"] == "ended" and state["message"] == "The interviewer ended the interview."
    with pytest.raises(InterviewError, match="The interviewer ended the interview"):
        snapshot_save(interview, user, "add-two", CODE)


def test_the_latest_snapshot_per_challenge_is_the_newest_by_time(interview: Interview, user: User, challenge: Challenge) -> None:
    started(interview, user)
    snapshot_save(interview, user, "add-two", "x = 1\n")
    snapshot_save(interview, user, "add-two", "x = 2\n")
    assert {cid: s.code for cid, s in selectors.latest_snapshots(interview).items()} == {challenge.pk: "x = 2\n"}
