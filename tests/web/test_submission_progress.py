"""web/submissions/progress.py: states, best scores, last attempts, the score series and the history's filters."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.http import QueryDict
from django.test.utils import CaptureQueriesContext

from tests.web.progress_world import make
from web.challenges.models import Challenge
from web.submissions import progress
from web.submissions.models import Status, Verdict


def rows(overview: progress.Progress) -> dict[str, progress.ChallengeProgress]:
    return {row.challenge.slug: row for track in overview.tracks for row in track.challenges}


# --- states -----------------------------------------------------------------------------------------


def test_states_follow_accepted_submits_not_runs(catalogue: dict[str, Challenge], user: User) -> None:
    make(user, catalogue["add-two"], verdict=Verdict.ACCEPTED, score=100.0)
    # A Run that passes every public probe is practice: attempted, not solved.
    make(user, catalogue["add-again"], kind="run", verdict=Verdict.ACCEPTED, score=100.0)
    by_slug = rows(progress.progress_for(user))
    assert by_slug["add-two"].state == progress.SOLVED
    assert by_slug["add-again"].state == progress.ATTEMPTED
    assert by_slug["mul-two"].state == progress.NOT_STARTED
    assert by_slug["mul-two"].last is None and by_slug["mul-two"].best_score is None


def test_a_challenge_stays_solved_after_a_later_wrong_submit(catalogue: dict[str, Challenge], user: User) -> None:
    make(user, catalogue["add-two"], verdict=Verdict.ACCEPTED, score=100.0)
    make(user, catalogue["add-two"], verdict=Verdict.WRONG_ANSWER, score=20.0)
    row = rows(progress.progress_for(user))["add-two"]
    assert row.state == progress.SOLVED
    assert row.last is not None and row.last.verdict == Verdict.WRONG_ANSWER


def test_a_queued_or_failed_submission_is_an_attempt(catalogue: dict[str, Challenge], user: User) -> None:
    make(user, catalogue["add-two"], status=Status.QUEUED)
    make(user, catalogue["mul-two"], verdict=Verdict.INTERNAL_ERROR, score=None)
    by_slug = rows(progress.progress_for(user))
    assert by_slug["add-two"].state == progress.ATTEMPTED
    assert by_slug["add-two"].last is not None and by_slug["add-two"].last.verdict_label == "Grading…"
    assert by_slug["mul-two"].state == progress.ATTEMPTED and by_slug["mul-two"].best_score is None


# --- best score, counts, last attempt ------------------------------------------------------------------


def test_best_score_is_the_best_graded_submit_and_runs_do_not_count(catalogue: dict[str, Challenge], user: User) -> None:
    make(user, catalogue["add-two"], score=40.0)
    make(user, catalogue["add-two"], verdict=Verdict.PARTIAL, score=75.5)
    make(user, catalogue["add-two"], verdict=Verdict.PARTIAL, score=60.0)
    make(user, catalogue["add-two"], kind="run", verdict=Verdict.ACCEPTED, score=100.0)
    # The platform's failures are not the candidate's tries (issue 28).
    make(user, catalogue["add-two"], verdict=Verdict.INTERNAL_ERROR, score=None)
    make(user, catalogue["add-two"], kind="run", verdict=Verdict.INTERNAL_ERROR, score=None)
    row = rows(progress.progress_for(user))["add-two"]
    assert row.best_score == 75.5
    assert (row.submits, row.runs) == (3, 1)
    # The best Submit's categories, not the newest one's.
    assert row.categories == {"correctness": {"score": 75.5, "passed": 1, "total": 1}}


def test_the_last_attempt_is_the_newest_run_or_submit(catalogue: dict[str, Challenge], user: User) -> None:
    make(user, catalogue["add-two"], score=40.0)
    newest = make(user, catalogue["add-two"], kind="run", verdict=Verdict.RUNTIME_ERROR, score=0.0)
    last = rows(progress.progress_for(user))["add-two"].last
    assert last is not None
    assert (last.id, last.kind, last.verdict, last.created_at) == (newest.pk, "run", Verdict.RUNTIME_ERROR, newest.created_at)
    assert last.verdict_label == "Runtime error"


def test_tracks_summarise_solved_over_total(catalogue: dict[str, Challenge], user: User) -> None:
    make(user, catalogue["add-two"], verdict=Verdict.ACCEPTED, score=100.0)
    make(user, catalogue["mul-two"], score=10.0)
    overview = progress.progress_for(user)
    tracks = {t.slug: t for t in overview.tracks}
    assert (tracks["basics"].solved, tracks["basics"].attempted, tracks["basics"].total) == (1, 0, 2)
    assert (tracks["more"].solved, tracks["more"].attempted, tracks["more"].total) == (0, 1, 1)
    assert (overview.solved, overview.attempted, overview.total) == (1, 1, 3)
    assert tracks["basics"].percent_solved == 50


def test_unpublished_challenges_are_not_listed(catalogue: dict[str, Challenge], user: User) -> None:
    Challenge.objects.filter(slug="mul-two").update(published=False)
    assert "mul-two" not in rows(progress.progress_for(user))


# --- another user's data ----------------------------------------------------------------------------------


def test_another_users_submissions_never_count(catalogue: dict[str, Challenge], user: User, other_user: User) -> None:
    make(other_user, catalogue["add-two"], verdict=Verdict.ACCEPTED, score=100.0)
    make(other_user, catalogue["mul-two"], kind="run")
    assert {r.state for r in rows(progress.progress_for(user)).values()} == {progress.NOT_STARTED}
    assert progress.challenge_marks(user) == {}
    assert progress.score_series(user) == []
    assert list(progress.submission_history_all(user)) == []
    assert progress.history_choices(user)["challenges"] == []


def test_anonymous_visitors_get_no_marks(catalogue: dict[str, Challenge], user: User) -> None:
    from django.contrib.auth.models import AnonymousUser

    make(user, catalogue["add-two"], verdict=Verdict.ACCEPTED, score=100.0)
    assert progress.challenge_marks(AnonymousUser()) == {}


# --- marks ------------------------------------------------------------------------------------------------


def test_marks_name_state_and_best_score_in_one_query(catalogue: dict[str, Challenge], user: User) -> None:
    make(user, catalogue["add-two"], verdict=Verdict.ACCEPTED, score=100.0)
    make(user, catalogue["add-two"], score=30.0)
    make(user, catalogue["mul-two"], kind="run")
    with CaptureQueriesContext(connection) as queries:
        marks = progress.challenge_marks(user)
    assert len(queries) == 1
    assert marks == {
        catalogue["add-two"].pk: progress.Mark(progress.SOLVED, 100.0),
        catalogue["mul-two"].pk: progress.Mark(progress.ATTEMPTED, None),
    }
    narrowed = progress.challenge_marks(user, [catalogue["mul-two"]])
    assert set(narrowed) == {catalogue["mul-two"].pk}


def test_progress_takes_the_same_queries_for_many_submissions_as_for_one(catalogue: dict[str, Challenge], user: User) -> None:
    make(user, catalogue["add-two"], score=10.0)
    with CaptureQueriesContext(connection) as few:
        progress.progress_for(user)
    for slug in ("add-two", "add-again", "mul-two"):
        for score in (20.0, 50.0, 100.0):
            make(user, catalogue[slug], verdict=Verdict.ACCEPTED if score == 100.0 else Verdict.PARTIAL, score=score)
        make(user, catalogue[slug], kind="run")
    with CaptureQueriesContext(connection) as many:
        overview = progress.progress_for(user)
    assert len(many) == len(few) <= 4
    assert overview.solved == 3


# --- mock interviews ----------------------------------------------------------------------------------------


def test_a_submit_made_in_a_mock_interview_counts_as_the_candidates_attempt(catalogue: dict[str, Challenge], user: User, coach: User) -> None:
    from web.interviews.models import InterviewSubmission
    from web.interviews.services import interview_create, interview_open

    interview = interview_create(coach, candidate_username=user.username, challenges=[catalogue["add-two"]], duration_minutes=30)
    interview = interview_open(interview, user)
    submission = make(user, catalogue["add-two"], verdict=Verdict.ACCEPTED, score=100.0)
    InterviewSubmission.objects.create(interview=interview, submission=submission)
    assert rows(progress.progress_for(user))["add-two"].state == progress.SOLVED
    assert [s.pk for s in progress.submission_history_all(user)] == [submission.pk]
    # ...and never the coach's, who ran the interview.
    assert progress.challenge_marks(coach) == {}


# --- the score series ------------------------------------------------------------------------------------------


def test_score_series_lists_graded_submits_per_challenge_in_order(catalogue: dict[str, Challenge], user: User) -> None:
    a1 = make(user, catalogue["add-two"], score=20.0)
    m1 = make(user, catalogue["mul-two"], verdict=Verdict.PARTIAL, score=50.0)
    make(user, catalogue["add-two"], kind="run", score=100.0)  # a Run: not charted
    make(user, catalogue["add-two"], status=Status.QUEUED)  # not graded yet: not charted
    a2 = make(user, catalogue["add-two"], verdict=Verdict.ACCEPTED, score=100.0)
    series = progress.score_series(user)
    assert [(s["slug"], s["track"]) for s in series] == [("add-two", "basics"), ("mul-two", "more")]
    assert [(p["attempt"], p["score"], p["id"]) for p in series[0]["points"]] == [(1, 20.0, a1.pk), (2, 100.0, a2.pk)]
    assert series[0]["points"][1]["verdict"] == "accepted"
    assert [p["id"] for p in series[1]["points"]] == [m1.pk]


# --- the history's filters ---------------------------------------------------------------------------------------


def test_history_is_newest_first_and_filters_combine(catalogue: dict[str, Challenge], user: User) -> None:
    s1 = make(user, catalogue["add-two"], score=20.0)
    r1 = make(user, catalogue["add-two"], kind="run", verdict=Verdict.ACCEPTED, score=100.0)
    s2 = make(user, catalogue["mul-two"], verdict=Verdict.ACCEPTED, score=100.0)
    q1 = make(user, catalogue["add-again"], status=Status.QUEUED)

    def ids(**params: str) -> list[int]:
        return [s.pk for s in progress.submission_history_all(user, progress.history_filters(params))]

    assert ids() == [q1.pk, s2.pk, r1.pk, s1.pk]
    assert ids(challenge="add-two") == [r1.pk, s1.pk]
    assert ids(track="more") == [s2.pk]
    assert ids(kind="run") == [r1.pk]
    assert ids(verdict="accepted") == [s2.pk, r1.pk]
    assert ids(verdict="accepted", kind="submit") == [s2.pk]
    assert ids(track="basics", kind="submit") == [q1.pk, s1.pk]
    assert ids(challenge="no-such") == []


def test_history_filters_drop_unknown_values_or_refuse_them_when_strict() -> None:
    query = QueryDict("kind=walk&verdict=accepted&challenge=%20add-two%20&track=")
    filters = progress.history_filters(query)
    assert filters == progress.HistoryFilters(challenge="add-two", verdict="accepted")
    assert filters.active and not progress.HistoryFilters().active
    with pytest.raises(progress.FilterError, match="kind must be one of: run, submit"):
        progress.history_filters(query, strict=True)


def test_history_choices_are_what_the_user_submitted_to(catalogue: dict[str, Challenge], user: User) -> None:
    make(user, catalogue["mul-two"])
    make(user, catalogue["mul-two"], kind="run")
    make(user, catalogue["add-two"])
    choices = progress.history_choices(user)
    assert choices["challenges"] == [("add-two", "Add two integers"), ("mul-two", "Multiply two")]
    assert choices["tracks"] == [("basics", "basics"), ("more", "more")]
    assert ("submit", "Submit") in choices["kinds"] and ("accepted", "Accepted") in choices["verdicts"]
