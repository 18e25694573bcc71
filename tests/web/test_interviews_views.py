"""Mock interview pages and JSON endpoints: web/interviews/views.py.

Who gets what (the coach, staff, the candidate, another candidate, anonymous
visitors), the JSON shapes the pages rely on, and the lock as the server
enforces it. The security table in test_security.py checks CSRF and foreign
ids for every URL; these tests pin the behaviour of each.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from tests.fake_backend import FakeBackend, ok
from web.accounts.roles import coach_grant
from web.challenges.models import Challenge
from web.interviews import services
from web.interviews.models import Interview, RubricScore, Snapshot
from web.interviews.services import interview_assess, interview_create, interview_end
from web.submissions.models import Submission

from .conftest import CORRECT, reads_no_package_files

CODE = CORRECT
NOTES_SECRET = "PRIVATE-NOTE-4e1b"


@pytest.fixture
def interview(coach: User, user: User, challenge: Challenge) -> Interview:
    made = interview_create(coach, candidate_username="alice", challenges=[challenge], duration_minutes=30)
    interview_assess(made, coach, notes=NOTES_SECRET, rubric={"communication": {"score": 2, "comment": "terse"}}, recommendation="no")
    return made


def as_user(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def join_url(interview: Interview, name: str = "interview-candidate", slug: str | None = None) -> str:
    args = [interview.token] + ([slug] if slug else [])
    return reverse(name, args=args)


# --- Creating -----------------------------------------------------------------------------------


def test_a_coach_creates_an_interview_through_the_form(coach: User, user: User, challenge: Challenge) -> None:
    client = as_user(coach)
    form = client.get(reverse("interview-create"))
    assert form.status_code == 200 and 'data-slug="add-two"' in form.content.decode()
    response = client.post(reverse("interview-create"), {"candidate": "alice", "challenges": "add-two", "duration_minutes": "45"})
    interview = Interview.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("interview-live", args=[interview.pk])
    assert (interview.candidate, interview.coach, interview.duration_minutes) == (user, coach, 45)
    listing = client.get(reverse("interview-list")).content.decode()
    assert f'data-interview="{interview.pk}" data-state="scheduled"' in listing


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"candidate": "nobody", "challenges": "add-two", "duration_minutes": "30"}, "No active user &#x27;nobody&#x27;"),
        ({"candidate": "alice", "challenges": ["add-two", "no-such"], "duration_minutes": "30"}, "No published challenge: no-such."),
        ({"candidate": "alice", "challenges": "add-two", "duration_minutes": "5"}, "The duration must be between 10 and 180 minutes."),
    ],
)
def test_the_form_names_what_is_wrong(coach: User, user: User, challenge: Challenge, data: dict[str, str], message: str) -> None:
    response = as_user(coach).post(reverse("interview-create"), data)
    assert response.status_code == 200 and message in response.content.decode()
    assert not Interview.objects.exists()


def test_candidates_cannot_create_or_list_interviews(user: User, challenge: Challenge) -> None:
    client = as_user(user)
    assert client.get(reverse("interview-list")).status_code == 403
    assert client.post(reverse("interview-create"), {"candidate": "alice", "challenges": "add-two", "duration_minutes": "30"}).status_code == 403
    assert not Interview.objects.exists()


# --- The candidate's side -------------------------------------------------------------------------


def test_the_candidate_opens_the_link_and_the_clock_starts(interview: Interview, user: User) -> None:
    client = as_user(user)
    page = client.get(join_url(interview))
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="countdown"' in html and 'data-state="live"' in html
    assert 'id="statement-add-two"' in html and "def add" in html
    assert NOTES_SECRET not in html and "terse" not in html and "Recommendation" not in html
    interview.refresh_from_db()
    assert interview.started_at is not None
    state = client.get(join_url(interview, "interview-candidate-state")).json()
    assert state["state"] == "live" and 1790 <= state["remaining_seconds"] <= 1800 and state["message"] == ""
    assert set(state) == {"state", "remaining_seconds", "message"}


def test_the_link_is_not_a_bearer_token(interview: Interview, other_user: User, coach: User) -> None:
    for who in (other_user, coach):
        client = as_user(who)
        assert client.get(join_url(interview)).status_code == 404
        assert client.get(join_url(interview, "interview-candidate-state")).status_code == 404
        assert client.post(join_url(interview, "interview-autosave", "add-two"), CODE, content_type="text/plain").status_code == 404
    interview.refresh_from_db()
    assert interview.started_at is None and not Snapshot.objects.exists()


def test_anonymous_visitors_are_sent_to_log_in(interview: Interview, client: Client) -> None:
    response = client.get(join_url(interview))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert client.post(join_url(interview, "interview-submit", "add-two"), CODE, content_type="text/plain").status_code == 401


def test_autosave_run_and_submit_answer_json(
    interview: Interview, user: User, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    client = as_user(user)
    client.get(join_url(interview))
    saved = client.post(join_url(interview, "interview-autosave", "add-two"), "x = 1\n", content_type="text/plain")
    assert saved.status_code == 200 and saved.json()["saved"] is True and set(saved.json()) == {"saved", "id", "at"}
    again = client.post(join_url(interview, "interview-autosave", "add-two"), "x = 1\n", content_type="text/plain")
    assert again.json()["saved"] is False and again.json()["id"] == saved.json()["id"]
    with django_capture_on_commit_callbacks(execute=True):
        submitted = client.post(join_url(interview, "interview-submit", "add-two"), CODE, content_type="text/plain")
    assert submitted.status_code == 202
    body = submitted.json()
    # Polled under the private link, where the interview's settings apply (session_settings.py).
    assert body["kind"] == "submit" and body["url"] == reverse("interview-submission-status", args=[interview.token, body["id"]])
    assert client.get(body["url"]).json()["score"] == 100.0  # eager grading on the in-memory sandbox
    ran = client.post(join_url(interview, "interview-run", "add-two"), CODE, content_type="text/plain")
    assert ran.status_code == 202 and ran.json()["kind"] == "run"
    # A reload restores the latest code.
    assert "return b + a" in client.get(join_url(interview)).content.decode()


WRONG = "def add(a, b):\n    print('printed')\n    return 0\n"


def test_the_candidate_sees_a_hidden_result_under_the_feedback_policy_and_the_stored_result_stays_whole(
    interview: Interview, user: User, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    # The check's message names the expected value, and the candidate's code printed something.
    fake_sandbox.script(WRONG, small=ok(0, stdout="printed"), positives=ok([0, 0, 0], stdout="printed"), negatives=ok([0, 0], stdout="printed"))
    client = as_user(user)
    client.get(join_url(interview))
    with django_capture_on_commit_callbacks(execute=True):
        body = client.post(join_url(interview, "interview-submit", "add-two"), WRONG, content_type="text/plain").json()
    polled = client.get(body["url"]).json()
    stored = Submission.objects.get(pk=body["id"]).probes
    # What the interviewer may read: the check's own words, naming the expected values (3, 30, 15 / -3, -2).
    assert [p["name"] for p in stored] == ["positives", "negatives"]
    assert "expected 3, got 0" in stored[0]["message"] and "expected -3" in stored[1]["message"]
    shown = json.dumps(polled)
    assert [p["passed"] for p in polled["probes"]] == [False, False]
    assert all(p["message"] and p["message"] not in shown for p in stored)
    assert "expected" not in shown
    assert "printed" not in json.dumps(polled)


def test_after_the_end_the_server_refuses_with_409_and_says_why(interview: Interview, user: User, coach: User) -> None:
    client = as_user(user)
    client.get(join_url(interview))
    interview_end(interview, coach)
    for name in ("interview-autosave", "interview-run", "interview-submit"):
        response = client.post(join_url(interview, name, "add-two"), CODE, content_type="text/plain")
        assert response.status_code == 409, name
        assert "interviewer ended the interview" in response.json()["error"]
    assert not Submission.objects.exists() and not Snapshot.objects.exists()
    state = client.get(join_url(interview, "interview-candidate-state")).json()
    assert state == {"state": "ended", "remaining_seconds": 0, "message": "The interviewer ended the interview."}
    page = client.get(join_url(interview)).content.decode()
    assert 'data-state="ended"' in page and 'id="run" disabled' in page


def test_time_running_out_locks_the_same_way(interview: Interview, user: User) -> None:
    client = as_user(user)
    client.get(join_url(interview))
    Interview.objects.filter(pk=interview.pk).update(started_at=timezone.now() - timedelta(minutes=30, seconds=1))
    response = client.post(join_url(interview, "interview-submit", "add-two"), CODE, content_type="text/plain")
    assert response.status_code == 409 and "Time is up" in response.json()["error"]
    assert client.get(join_url(interview, "interview-candidate-state")).json()["message"] == "Time is up."


def test_autosave_flood_gets_429_with_retry_after(interview: Interview, user: User) -> None:
    client = as_user(user)
    client.get(join_url(interview))
    url = join_url(interview, "interview-autosave", "add-two")
    for i in range(services.SNAPSHOTS_PER_MINUTE):
        assert client.post(url, f"x = {i}\n", content_type="text/plain").status_code == 200
    refused = client.post(url, "x = 'flood'\n", content_type="text/plain")
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1 and "too often" in refused.json()["error"]
    assert Snapshot.objects.count() == services.SNAPSHOTS_PER_MINUTE


def test_candidate_sees_pending_interviews_on_their_page(interview: Interview, user: User, other_user: User) -> None:
    mine = as_user(user).get(reverse("interview-mine")).content.decode()
    assert join_url(interview) in mine
    assert join_url(interview) not in as_user(other_user).get(reverse("interview-mine")).content.decode()


# --- The coach's side ---------------------------------------------------------------------------------


def test_live_view_and_its_json_for_the_coach(
    interview: Interview, user: User, coach: User, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    candidate = as_user(user)
    candidate.get(join_url(interview))
    candidate.post(join_url(interview, "interview-autosave", "add-two"), "x = 1\n", content_type="text/plain")
    with django_capture_on_commit_callbacks(execute=True):
        candidate.post(join_url(interview, "interview-submit", "add-two"), CODE, content_type="text/plain")
    client = as_user(coach)
    page = client.get(reverse("interview-live", args=[interview.pk])).content.decode()
    assert interview.token in page and 'class="live-challenge" data-slug="add-two"' in page and NOTES_SECRET in page
    data = client.get(reverse("interview-live-state", args=[interview.pk])).json()
    assert set(data) == {"id", "state", "remaining_seconds", "started_at", "ends_at", "settings", "challenges"}
    assert data["settings"]["hint_policy"] == "on_request" and data["settings"]["hidden_feedback"] == "summary"
    row = data["challenges"][0]
    assert row["latest_code"] == CODE and row["snapshot_count"] == 2
    assert [(s["kind"], s["score"]) for s in row["submissions"]] == [("submit", 100.0)]
    assert set(row["submissions"][0]) == {
        "id", "kind", "status", "done", "verdict", "verdict_label", "score", "created_at", "finished_at", "progress", "url",
    }  # fmt: skip
    assert row["submissions"][0]["url"] == reverse("interview-run-detail", args=[interview.pk, row["submissions"][0]["id"]])
    assert row["submissions"][0]["progress"] is None  # done: the score says it all
    # While a submission runs, the interviewer sees how far it is (the coach sees every probe's outcome).
    Submission.objects.filter(pk=row["submissions"][0]["id"]).update(
        status="running", live={"total": 2, "probes": [{"name": "positives", "outcome": "passed"}, {"name": "negatives", "outcome": "failed"}]}
    )
    running = client.get(reverse("interview-live-state", args=[interview.pk])).json()["challenges"][0]["submissions"][0]
    assert running["progress"] == {"finished": 2, "total": 2, "passed": 1}
    timeline = client.get(row["timeline_url"]).json()
    assert [s["code"] for s in timeline["snapshots"]] == ["x = 1\n", CODE]
    assert client.get(reverse("interview-timeline", args=[interview.pk, "no-such"])).status_code == 404


def test_assess_endpoint_validates_and_stores(interview: Interview, coach: User) -> None:
    client = as_user(coach)
    url = reverse("interview-assess", args=[interview.pk])
    ok = client.post(
        url, {"rubric": {"correctness": {"score": 4, "comment": "clean"}}, "recommendation": "strong_yes"}, content_type="application/json"
    )
    assert ok.status_code == 200 and ok.json()["rubric"]["correctness"] == {"score": 4, "comment": "clean"}
    bad = client.post(url, {"rubric": {"correctness": {"score": 7}}}, content_type="application/json")
    assert bad.status_code == 400 and "from 1 to 4, not 7" in bad.json()["error"]
    assert client.post(url, "not json", content_type="application/json").json()["error"] == "The request body is not valid JSON."
    assert "any of" in client.post(url, {"grade": "A"}, content_type="application/json").json()["error"]
    assert RubricScore.objects.get(interview=interview, criterion="correctness").score == 4


def test_end_redirects_to_the_scorecard_which_shows_it_all(
    interview: Interview, user: User, coach: User, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    candidate = as_user(user)
    candidate.get(join_url(interview))
    with django_capture_on_commit_callbacks(execute=True):
        candidate.post(join_url(interview, "interview-submit", "add-two"), CODE, content_type="text/plain")
    client = as_user(coach)
    response = client.post(reverse("interview-end", args=[interview.pk]))
    assert response.status_code == 302 and response["Location"] == reverse("interview-scorecard", args=[interview.pk])
    html = client.get(response["Location"]).content.decode()
    assert 'id="scorecard" data-state="ended"' in html
    assert 'data-recommendation="no"' in html and NOTES_SECRET in html and "terse" in html
    assert '<td class="best">100.0</td>' in html and 'data-kind="submit"' in html and "Ended by the interviewer" in html
    assert '<span id="time-zone">all times UTC</span>' in html  # the clock times say which clock
    assert "@media print" in (Path(__file__).parents[2] / "web" / "static" / "css" / "site.css").read_text()
    # Ending twice is refused, and says so.
    again = client.post(reverse("interview-end", args=[interview.pk]), HTTP_ACCEPT="application/json")
    assert again.status_code == 409 and "already ended" in again.json()["error"]


def test_coach_pages_refuse_candidates_and_other_coaches(interview: Interview, user: User, challenge: Challenge) -> None:
    other_coach = User.objects.create_user("hopper", password="pw-hopper-123")
    coach_grant(other_coach)
    pages = [
        ("get", reverse("interview-live", args=[interview.pk])),
        ("get", reverse("interview-live-state", args=[interview.pk])),
        ("get", reverse("interview-scorecard", args=[interview.pk])),
        ("get", reverse("interview-timeline", args=[interview.pk, "add-two"])),
        ("post", reverse("interview-end", args=[interview.pk])),
        ("post", reverse("interview-assess", args=[interview.pk])),
    ]
    for method, url in pages:
        # Neither the candidate nor another coach learns that this interview exists: 404 for both.
        assert getattr(as_user(user), method)(url).status_code == 404, url
        assert getattr(as_user(other_coach), method)(url).status_code == 404, url
    interview.refresh_from_db()
    assert interview.ended_at is None and interview.notes == NOTES_SECRET
    staff = User.objects.create_user("ops", password="pw-ops-12345", is_staff=True)
    assert as_user(staff).get(reverse("interview-scorecard", args=[interview.pk])).status_code == 200


def test_nav_links(coach: User, user: User) -> None:
    assert 'id="interviews-link"' in as_user(coach).get(reverse("catalogue")).content.decode()
    candidate_nav = as_user(user).get(reverse("catalogue")).content.decode()
    assert 'id="my-interviews-link"' in candidate_nav and 'id="interviews-link"' not in candidate_nav


def test_the_timeline_returns_only_newer_snapshots_when_asked(interview: Interview, user: User, coach: User) -> None:
    candidate = as_user(user)
    candidate.get(join_url(interview))
    for code in ("a = 1\n", "a = 2\n", "a = 3\n"):
        candidate.post(join_url(interview, "interview-autosave", "add-two"), code, content_type="text/plain")
    client = as_user(coach)
    url = reverse("interview-timeline", args=[interview.pk, "add-two"])
    everything = client.get(url).json()["snapshots"]
    assert [s["code"] for s in everything] == ["a = 1\n", "a = 2\n", "a = 3\n"]
    newer = client.get(url, {"after": everything[0]["id"]}).json()["snapshots"]
    assert [s["code"] for s in newer] == ["a = 2\n", "a = 3\n"]
    bad = client.get(url, {"after": "x"})
    assert bad.status_code == 400 and "whole number" in bad.json()["error"]


def test_a_hostile_statement_is_inert_on_the_candidate_page(interview: Interview, user: User, challenge: Challenge) -> None:
    version = challenge.current_version
    assert version is not None
    version.statement = "# Add\n\n<script>window.__xss = 1</script>\n<img src=x onerror=alert(1)>\n"
    version.save(update_fields=["statement"])
    html = as_user(user).get(join_url(interview)).content.decode()
    statement = html[html.index('id="statement-add-two"') : html.index("</article>")]
    assert "<script>" not in statement and "onerror" not in statement and "<h1>Add</h1>" in statement


def test_the_candidate_page_shows_the_given_modules_read_only(interview: Interview, user: User, challenge: Challenge) -> None:
    version = challenge.current_version
    assert version is not None
    version.given = {"given/pipeline.py": "def stages():\n    return ['<fx>']\n"}
    version.save(update_fields=["given"])
    html = as_user(user).get(join_url(interview)).content.decode()
    statement = html[html.index('id="statement-add-two"') : html.index("</article>")]
    panel = statement[statement.index('data-given="given/pipeline.py"') :]
    assert "from given.pipeline import ..." in panel
    assert "return [&#x27;&lt;fx&gt;&#x27;]" in panel  # the source as text, never as markup
    assert "given-source" not in html  # no second editor: the page's one editor holds the candidate's file


def test_a_body_beyond_the_upload_limit_gets_the_code_limit_message(interview: Interview, user: User, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    client = as_user(user)
    client.get(join_url(interview))  # the clock starts
    for name in ("interview-autosave", "interview-submit"):
        response = client.post(join_url(interview, name, "add-two"), "#" * 4096, content_type="text/plain")
        assert response.status_code == 400 and "far too large" in response.json()["error"], name
    assert not Snapshot.objects.exists() and not Submission.objects.exists()


def test_the_polls_and_autosaves_of_an_interview_read_no_package_files(interview: Interview, user: User, coach: User) -> None:
    candidate = as_user(user)
    candidate.get(join_url(interview))
    with reads_no_package_files(max_queries=8):
        saved = candidate.post(join_url(interview, "interview-autosave", "add-two"), "x = 1\n", content_type="text/plain")
    assert saved.status_code == 200
    with reads_no_package_files(max_queries=6):
        assert candidate.get(join_url(interview, "interview-candidate-state")).json()["state"] == "live"
    watching = as_user(coach)
    with reads_no_package_files(max_queries=10):
        live = watching.get(reverse("interview-live-state", args=[interview.pk])).json()
    assert live["challenges"][0]["latest_code"] == "x = 1\n"
