"""The interviewer's runs, the timeline and the replay's inputs: web/interviews/replay.py, timeline.py, runs.py, replay_views.py.

Focus reports and notes at a moment (who may, when, how often), the one
selector of every moment (order, keys, content), the interviewer's whole
result of a run against the candidate's view of it, and the endpoints:
the interview's coach and staff get them, everyone else a 404.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from tests.fake_backend import FakeBackend, ok
from web.accounts.roles import coach_grant
from web.challenges.models import Challenge
from web.errors import ErrorAnswer, error_answer
from web.interviews import replay, runs, selectors, timeline
from web.interviews.models import FocusEvent, Interview, Snapshot, TimelineNote
from web.interviews.services import (
    InterviewError,
    InterviewLocked,
    interview_create,
    interview_end,
    interview_open,
    interview_submission_create,
    snapshot_save,
)
from web.submissions.models import HintReveal, Submission
from web.submissions.presenters import submission_payload
from web.submissions.services.reveal import hint_reveal

from .conftest import CORRECT

# Wrong on the public probe small (add(2, 3) observes 2), so a Run fails and unlocks the "sum" hints.
RETURNS_A = "def add(a, b):\n    return a\n"
# Wrong on the hidden probe positives: its check's own message names the expected value, which
# only the interviewer may read (the candidate gets the feedback policy's template).
HIDDEN_WRONG = "def add(a, b):\n    return a - b  # hidden-wrong\n"
HIDDEN_MESSAGE = "result[0]: expected 3, got 0"


@pytest.fixture
def interview(coach: User, user: User, challenge: Challenge) -> Interview:
    made = interview_create(coach, candidate_username="alice", challenges=[challenge], duration_minutes=30)
    return interview_open(made, user)


@pytest.fixture
def other_coach(db: Any) -> User:
    other = User.objects.create_user("otto", password="pw-otto-12345")
    coach_grant(other)
    return other


def as_user(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _failed_run(interview: Interview, user: User, fake: FakeBackend, capture: Any) -> Submission:
    fake.script(RETURNS_A, small=ok(2, stdout="printed by the run"))
    with capture(execute=True):
        run = interview_submission_create(interview, user, "add-two", RETURNS_A, "run")
    run.refresh_from_db()
    return run


def _failed_submit(interview: Interview, user: User, fake: FakeBackend, capture: Any) -> Submission:
    fake.script(HIDDEN_WRONG, positives=ok([0, 0, 0]))
    with capture(execute=True):
        submit = interview_submission_create(interview, user, "add-two", HIDDEN_WRONG, "submit")
    submit.refresh_from_db()
    return submit


def _shift(model: Any, pk: int, field: str, interview: Interview, seconds: float) -> None:
    """Put a row at a chosen moment: ``seconds`` after the interview's start."""
    model.objects.filter(pk=pk).update(**{field: interview.started_at + timedelta(seconds=seconds)})


# --- Focus reports -------------------------------------------------------------------------------


def test_focus_is_stored_as_transitions_only(interview: Interview, user: User) -> None:
    assert replay.focus_event_record(interview, user, state="regained", reason="window") is None  # never left: no moment
    lost = replay.focus_event_record(interview, user, state="lost", reason="tab")
    assert lost is not None and (lost.state, lost.reason) == ("lost", "tab")
    assert replay.focus_event_record(interview, user, state="lost", reason="window") is None  # still away
    back = replay.focus_event_record(interview, user, state="regained", reason="tab")
    assert back is not None and back.state == "regained"
    assert list(FocusEvent.objects.values_list("state", flat=True)) == ["lost", "regained"]


def test_focus_is_refused_for_others_before_the_start_and_after_the_end(
    interview: Interview, user: User, coach: User, other_user: User, challenge: Challenge
) -> None:
    for who in (coach, other_user):
        with pytest.raises(InterviewError, match="not your interview"):
            replay.focus_event_record(interview, who, state="lost", reason="tab")
    with pytest.raises(InterviewError, match="Unknown focus state 'gone'"):
        replay.focus_event_record(interview, user, state="gone", reason="tab")
    with pytest.raises(InterviewError, match="Unknown focus reason 'mouse'"):
        replay.focus_event_record(interview, user, state="lost", reason="mouse")
    waiting = interview_create(coach, candidate_username="alice", challenges=[challenge], duration_minutes=30)
    with pytest.raises(InterviewLocked, match="has not started"):
        replay.focus_event_record(waiting, user, state="lost", reason="tab")
    interview_end(interview, coach)
    with pytest.raises(InterviewLocked, match="interviewer ended"):
        replay.focus_event_record(interview, user, state="lost", reason="tab")
    assert not FocusEvent.objects.exists()


def test_focus_reports_are_rate_limited(interview: Interview, user: User) -> None:
    now = timezone.now()
    FocusEvent.objects.bulk_create(
        FocusEvent(interview=interview, state="lost" if i % 2 == 0 else "regained", reason="tab", created_at=now - timedelta(seconds=50 - i))
        for i in range(replay.FOCUS_EVENTS_PER_MINUTE)
    )
    with pytest.raises(replay.FocusRateLimited, match="too often") as caught:
        replay.focus_event_record(interview, user, state="lost", reason="tab")
    assert 1 <= caught.value.retry_after <= 11
    answer = error_answer(caught.value)
    assert isinstance(answer, ErrorAnswer) and answer.status == 429
    # A minute later the window has moved on: the next report is stored.
    FocusEvent.objects.update(created_at=now - timedelta(seconds=61))
    assert replay.focus_event_record(interview, user, state="lost", reason="tab") is not None


# --- Notes at a moment --------------------------------------------------------------------------


def test_the_coach_and_staff_take_notes_at_a_moment(interview: Interview, coach: User) -> None:
    note = replay.timeline_note_add(interview, coach, "  asks about broadcasting  ")
    assert note.text == "asks about broadcasting" and note.author == coach
    assert abs((note.created_at - timezone.now()).total_seconds()) < 60
    staff = User.objects.create_user("ops", password="pw-ops-12345", is_staff=True)
    assert replay.timeline_note_add(interview, staff, "second opinion").author == staff


def test_notes_are_refused_for_others_when_empty_or_long_and_outside_the_interview(
    interview: Interview, user: User, coach: User, other_coach: User, challenge: Challenge
) -> None:
    for who in (user, other_coach):
        with pytest.raises(InterviewError, match="Only the interview's coach"):
            replay.timeline_note_add(interview, who, "mine")
    with pytest.raises(InterviewError, match="Write the note first"):
        replay.timeline_note_add(interview, coach, "   ")
    with pytest.raises(InterviewError, match="limited to 500 characters"):
        replay.timeline_note_add(interview, coach, "x" * 501)
    waiting = interview_create(coach, candidate_username="alice", challenges=[challenge], duration_minutes=30)
    with pytest.raises(InterviewLocked, match="while the interview runs"):
        replay.timeline_note_add(waiting, coach, "too early")
    interview_end(interview, coach)
    with pytest.raises(InterviewLocked, match="Use the free notes"):
        replay.timeline_note_add(interview, coach, "too late")
    assert not TimelineNote.objects.exists()


# --- The timeline ----------------------------------------------------------------------------------


def test_the_timeline_lists_every_moment_in_order_with_stable_keys(
    interview: Interview, user: User, coach: User, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    snap = snapshot_save(interview, user, "add-two", "def add(a, b):\n    return 0\n").snapshot
    run = _failed_run(interview, user, fake_sandbox, django_capture_on_commit_callbacks)
    hint_reveal(user, run, "nudge")
    lost = replay.focus_event_record(interview, user, state="lost", reason="tab")
    back = replay.focus_event_record(interview, user, state="regained", reason="window")
    note = replay.timeline_note_add(interview, coach, "reads the failing probe")
    submit = _failed_submit(interview, user, fake_sandbox, django_capture_on_commit_callbacks)
    assert lost is not None and back is not None
    reveal = HintReveal.objects.get()
    # The clock started ten minutes ago, so every pinned moment below falls inside the interview.
    Interview.objects.filter(pk=interview.pk).update(started_at=timezone.now() - timedelta(minutes=10))
    interview.refresh_from_db()
    run_snapshot, submit_snapshot = Snapshot.objects.exclude(pk=snap.pk).order_by("id")
    # Pin each moment to its own second, in an order that is not the order of creation.
    for model, pk, field, seconds in [
        (Snapshot, snap.pk, "created_at", 10), (Submission, run.pk, "created_at", 20), (Snapshot, run_snapshot.pk, "created_at", 20),
        (HintReveal, reveal.pk, "revealed_at", 30), (FocusEvent, lost.pk, "created_at", 40), (FocusEvent, back.pk, "created_at", 95),
        (TimelineNote, note.pk, "created_at", 35), (Submission, submit.pk, "created_at", 100), (Snapshot, submit_snapshot.pk, "created_at", 100),
    ]:  # fmt: skip
        _shift(model, pk, field, interview, seconds)
    interview_end(interview, coach)

    events = timeline.interview_timeline(interview)
    assert [e["key"] for e in events] == [
        f"start:{interview.pk}", f"snapshot:{snap.pk}", f"snapshot:{run_snapshot.pk}", f"run:{run.pk}", f"hint:{reveal.pk}",
        f"note:{note.pk}", f"focus:{lost.pk}", f"focus:{back.pk}", f"snapshot:{submit_snapshot.pk}", f"submit:{submit.pk}",
        f"end:{interview.pk}",
    ]  # fmt: skip
    by_key = {e["key"]: e for e in events}
    failed_run = by_key[f"run:{run.pk}"]
    assert failed_run["kind"] == "run" and failed_run["verdict"] == "wrong_answer" and failed_run["submission"] == run.pk
    assert failed_run["challenge"] == "add-two" and failed_run["challenge_title"] == "Add two integers"
    assert failed_run["url"] == reverse("interview-run-detail", args=[interview.pk, run.pk])
    assert failed_run["offset"] == 20 and failed_run["clock"] == "00:20" and failed_run["label"].startswith(f"Run #{run.pk}: Wrong answer")
    assert by_key[f"submit:{submit.pk}"]["clock"] == "01:40" and by_key[f"submit:{submit.pk}"]["verdict"] == "partial"
    hint = by_key[f"hint:{reveal.pk}"]
    assert (hint["hint_id"], hint["tier"], hint["submission"]) == ("nudge", 1, run.pk)
    assert hint["label"] == f"Hint nudge revealed (tier 1, nudge) after #{run.pk}"
    assert (by_key[f"focus:{lost.pk}"]["state"], by_key[f"focus:{lost.pk}"]["label"]) == ("lost", "Left the interview: tab hidden")
    assert (by_key[f"focus:{back.pk}"]["state"], by_key[f"focus:{back.pk}"]["reason"]) == ("regained", "window")
    assert by_key[f"note:{note.pk}"]["label"] == "Note: reads the failing probe" and by_key[f"note:{note.pk}"]["author"] == "cora"
    assert by_key[f"end:{interview.pk}"]["label"] == "Ended by the interviewer"
    assert all(e["challenge"] is None for e in events if e["kind"] in ("start", "focus", "note", "end"))
    assert all("code" not in e for e in events)
    assert [e["kind"] for e in timeline.interview_timeline(interview, snapshots=False)] == [
        "start", "run", "hint", "note", "focus", "focus", "submit", "end",
    ]  # fmt: skip

    # The scorecard's timeline carries the same keys and the mm:ss of each moment.
    card = selectors.interview_scorecard(interview)
    assert [(e.kind, e.key, e.clock) for e in card.events if e.kind in ("focus", "note", "run", "submit")] == [
        ("run", f"run:{run.pk}", "00:20"), ("note", f"note:{note.pk}", "00:35"), ("focus", f"focus:{lost.pk}", "00:40"),
        ("focus", f"focus:{back.pk}", "01:35"), ("submit", f"submit:{submit.pk}", "01:40"),
    ]  # fmt: skip


def test_the_replay_data_spans_the_clock_and_names_each_challenges_code(interview: Interview, user: User, coach: User) -> None:
    snapshot_save(interview, user, "add-two", "x = 1\n")
    Interview.objects.filter(pk=interview.pk).update(started_at=timezone.now() - timedelta(minutes=5))
    interview.refresh_from_db()
    live = timeline.interview_replay(interview)
    assert live["state"] == "live" and 299 <= live["span"] <= 330 and live["idle_gap_seconds"] == timeline.IDLE_GAP_SECONDS
    assert live["challenges"] == [
        {"slug": "add-two", "title": "Add two integers", "code_url": reverse("interview-timeline", args=[interview.pk, "add-two"])}
    ]
    interview_end(interview, coach)
    ended = timeline.interview_replay(interview)
    assert ended["state"] == "ended" and ended["until"] == interview.ends_at().isoformat()


def test_clock_counts_minutes_past_the_hour() -> None:
    assert [timeline.clock(s) for s in (0, 59.9, 61, 4502, None)] == ["00:00", "00:59", "01:01", "75:02", ""]


# --- The interviewer's view of a run -----------------------------------------------------------------


def test_the_interviewer_gets_the_whole_result_the_candidate_gets_the_policys_view(
    interview: Interview, user: User, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    run = _failed_run(interview, user, fake_sandbox, django_capture_on_commit_callbacks)
    hint_reveal(user, run, "nudge")
    coach_run = runs.coach_submission_payload(interview, run)
    small = next(p for p in coach_run["probes"] if p["name"] == "small")
    assert coach_run["full"] is True and coach_run["verdict"] == "wrong_answer" and coach_run["hints"] == []
    assert (small["observation"], small["expected"], small["stdout"]) == (2, 5, "printed by the run") and small["diff"]
    hints = {h["id"]: h for h in coach_run["unlocked_hints"]}
    assert hints["nudge"]["revealed"] is True and hints["nudge"]["key"] == f"hint:{HintReveal.objects.get().pk}"
    assert hints["nudge"]["html"] == "<p>Look at what <code>add</code> <strong>returns</strong>.</p>"
    assert hints["concept"]["revealed"] is False and "<code>+</code>" in hints["concept"]["html"]  # the coach reads every hint

    submit = _failed_submit(interview, user, fake_sandbox, django_capture_on_commit_callbacks)
    coach_submit = runs.coach_submission_payload(interview, submit)
    candidate_submit = submission_payload(submit, set())
    hidden = next(p for p in coach_submit["probes"] if p["name"] == "positives")
    seen = next(p for p in candidate_submit["probes"] if p["name"] == "positives")
    assert hidden["message"] == HIDDEN_MESSAGE and hidden["details"] == {"failure": "value", "path": [0]}
    assert "observation" not in hidden and "expected" not in hidden  # a hidden probe keeps no values to show
    assert seen["message"] == "result[0]: the value is wrong" and "expected 3" not in str(candidate_submit)
    assert "full" not in candidate_submit  # the flag is the interviewer's payload's only


def test_a_running_submission_shows_every_finished_probe_with_its_status(
    interview: Interview, user: User, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    submit = _failed_submit(interview, user, fake_sandbox, django_capture_on_commit_callbacks)
    Submission.objects.filter(pk=submit.pk).update(
        status="running", live={"total": 3, "probes": [{"name": "positives", "outcome": "failed", "status": "error"}]}
    )
    submit.refresh_from_db()
    payload = runs.coach_submission_payload(interview, submit)
    assert payload["live"]["probes"] == [{"name": "positives", "outcome": "failed", "status": "error"}]
    assert payload["probes"] == [] and payload["done"] is False


def test_a_run_belongs_to_its_interview_only(
    interview: Interview, user: User, coach: User, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    run = _failed_run(interview, user, fake_sandbox, django_capture_on_commit_callbacks)
    other = interview_create(coach, candidate_username="alice", challenges=[challenge], duration_minutes=30)
    assert runs.interview_submission_get(interview, run.pk) == run
    assert runs.interview_submission_get(other, run.pk) is None
    outside = Submission.objects.create(user=user, challenge=challenge, version=challenge.current_version, kind="run", code="x = 1\n")
    assert runs.interview_submission_get(interview, outside.pk) is None


# --- Views ---------------------------------------------------------------------------------------------


def test_run_pages_open_for_the_coach_and_staff_and_are_404_for_everyone_else(
    interview: Interview, user: User, coach: User, other_coach: User, other_user: User,
    fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    submit = _failed_submit(interview, user, fake_sandbox, django_capture_on_commit_callbacks)
    page_url = reverse("interview-run-detail", args=[interview.pk, submit.pk])
    json_url = reverse("interview-run-status", args=[interview.pk, submit.pk])
    staff = User.objects.create_user("ops", password="pw-ops-12345", is_staff=True)
    for who in (coach, staff):
        page = as_user(who).get(page_url)
        assert page.status_code == 200 and 'id="run-payload"' in page.content.decode() and HIDDEN_MESSAGE in page.content.decode()
        data = as_user(who).get(json_url).json()
        assert data["id"] == submit.pk and data["url"] == json_url and data["full"] is True
    for who in (user, other_coach, other_user):
        for url in (page_url, json_url):
            response = as_user(who).get(url)
            assert response.status_code == 404, (who.username, url)
            assert "expected 3" not in response.content.decode()
    assert Client().get(page_url).status_code == 302 and Client().get(json_url).status_code == 401
    # A submission of the same candidate but not of this interview: not behind this interview's URL.
    outside = Submission.objects.create(user=user, challenge=submit.challenge, version=submit.version, kind="run", code="x = 1\n")
    assert as_user(coach).get(reverse("interview-run-detail", args=[interview.pk, outside.pk])).status_code == 404


def test_replay_json_and_notes_for_the_coach_only(interview: Interview, user: User, coach: User, other_coach: User) -> None:
    note_url = reverse("interview-note-add", args=[interview.pk])
    replay_url = reverse("interview-replay", args=[interview.pk])
    answer = as_user(coach).post(note_url, {"text": "good question"}, content_type="application/json")
    assert answer.status_code == 201 and answer.json()["key"] == f"note:{TimelineNote.objects.get().pk}"
    data = as_user(coach).get(replay_url).json()
    assert set(data) == {"state", "started_at", "until", "span", "idle_gap_seconds", "challenges", "events"}
    assert [e["kind"] for e in data["events"]] == ["start", "note"] and data["events"][1]["label"] == "Note: good question"
    for who in (user, other_coach):
        assert as_user(who).get(replay_url).status_code == 404
        assert as_user(who).post(note_url, {"text": "x"}, content_type="application/json").status_code == 404
    assert as_user(coach).post(note_url, "not json", content_type="application/json").status_code == 400
    assert as_user(coach).post(note_url, {"text": 3}, content_type="application/json").status_code == 400
    interview_end(interview, coach)
    late = as_user(coach).post(note_url, {"text": "after"}, content_type="application/json")
    assert late.status_code == 409 and "free notes" in late.json()["error"]
    assert TimelineNote.objects.count() == 1


def test_the_candidate_page_reports_focus_to_its_own_endpoint(interview: Interview, user: User, other_user: User, coach: User) -> None:
    page = as_user(user).get(reverse("interview-candidate", args=[interview.token])).content.decode()
    focus_url = reverse("interview-focus", args=[interview.token])
    assert f'"focusUrl": "{focus_url}"' in page and "interview-focus.js" in page and 'id="focus-notice"' in page
    lost = as_user(user).post(focus_url, {"state": "lost", "reason": "tab"}, content_type="application/json")
    assert lost.status_code == 200 and lost.json() == {"stored": True, "key": f"focus:{FocusEvent.objects.get().pk}"}
    again = as_user(user).post(focus_url, {"state": "lost", "reason": "window"}, content_type="application/json")
    assert again.json() == {"stored": False, "key": None}
    assert as_user(other_user).post(focus_url, {"state": "regained", "reason": "tab"}, content_type="application/json").status_code == 404
    assert as_user(user).post(focus_url, {"state": "away"}, content_type="application/json").status_code == 400
    interview_end(interview, coach)
    assert as_user(user).post(focus_url, {"state": "regained", "reason": "tab"}, content_type="application/json").status_code == 409
    assert FocusEvent.objects.count() == 1


def test_live_view_and_scorecard_show_the_replay_hint_markdown_and_run_links(
    interview: Interview, user: User, coach: User, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    run = _failed_run(interview, user, fake_sandbox, django_capture_on_commit_callbacks)
    hint_reveal(user, run, "nudge")
    replay.timeline_note_add(interview, coach, "NOTE-AT-A-MOMENT")
    replay.focus_event_record(interview, user, state="lost", reason="tab")
    client = as_user(coach)
    live = client.get(reverse("interview-live", args=[interview.pk])).content.decode()
    assert 'id="replay"' in live and 'id="moment-note-form"' in live and "interview-replay.js" in live
    assert "scrubber" not in live  # the old slider is gone: the latest code is shown once
    hint = client.get(reverse("interview-live-state", args=[interview.pk])).json()["challenges"][0]["hints"][0]
    assert hint["html"] == "<p>Look at what <code>add</code> <strong>returns</strong>.</p>"
    interview_end(interview, coach)
    card = client.get(reverse("interview-scorecard", args=[interview.pk])).content.decode()
    assert "<code>add</code> <strong>returns</strong>" in card and "`add`" not in card
    assert "NOTE-AT-A-MOMENT" in card and "Left the interview: tab hidden" in card
    assert f'href="{reverse("interview-run-detail", args=[interview.pk, run.pk])}"' in card
    assert f'data-key="run:{run.pk}"' in card and 'id="replay"' in card
    assert "NOTE-AT-A-MOMENT" not in as_user(user).get(reverse("interview-candidate", args=[interview.token])).content.decode()


def test_snapshot_save_still_feeds_the_code_timeline(interview: Interview, user: User, coach: User) -> None:
    snapshot_save(interview, user, "add-two", CORRECT)
    data = as_user(coach).get(reverse("interview-replay", args=[interview.pk])).json()
    code = as_user(coach).get(data["challenges"][0]["code_url"]).json()
    assert [e["key"] for e in data["events"] if e["kind"] == "snapshot"] == [f"snapshot:{s['id']}" for s in code["snapshots"]]
