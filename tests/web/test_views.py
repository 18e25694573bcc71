"""Pages and JSON endpoints: web/challenges/views.py, web/submissions/views.py, web/accounts/views.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from tests.fake_backend import FakeBackend, ok, raised
from web.challenges.models import Challenge, ChallengeVersion
from web.challenges.services import challenge_sync_from_dir
from web.submissions.models import HintReveal, Status, Submission

from .conftest import CORRECT, SUM_WRONG, reads_no_package_files

CODE = CORRECT


def run(client: Client, slug: str, body: bytes | str, content_type: str = "text/plain; charset=utf-8") -> Any:
    return client.post(reverse("challenge-run", args=[slug]), data=body, content_type=content_type)


# --- catalogue -----------------------------------------------------------------------


def test_catalogue_groups_by_track_with_badges(client: Client, challenge: Challenge) -> None:
    other = Challenge.objects.create(slug="deep-one", track="advanced", title="Deep one", difficulty="hard")
    ChallengeVersion.objects.create(challenge=other, version="f" * 64, files={}, statement="", starter_code="", runtime="python")
    Challenge.objects.filter(pk=other.pk).update(current_version=other.versions.get())

    response = client.get(reverse("catalogue"))

    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="track-advanced"' in html and 'id="track-basics"' in html
    assert html.index('id="track-advanced"') < html.index('id="track-basics"')
    assert 'class="badge badge-easy"' in html and 'class="badge badge-hard"' in html
    assert reverse("challenge-detail", args=["add-two"]) in html


def test_catalogue_filters_by_track_and_difficulty(client: Client, challenge: Challenge) -> None:
    assert "Add two integers" in client.get(reverse("catalogue"), {"difficulty": "easy"}).content.decode()
    assert "Add two integers" not in client.get(reverse("catalogue"), {"difficulty": "hard"}).content.decode()
    assert "Add two integers" not in client.get(reverse("catalogue"), {"track": "nope"}).content.decode()
    # an unknown difficulty shows everything rather than failing
    assert "Add two integers" in client.get(reverse("catalogue"), {"difficulty": "bogus"}).content.decode()


def test_unpublished_challenges_are_hidden_from_candidates(client: Client, challenge: Challenge) -> None:
    Challenge.objects.update(published=False)
    assert "Add two integers" not in client.get(reverse("catalogue")).content.decode()
    assert client.get(reverse("challenge-detail", args=["add-two"])).status_code == 404


# --- challenge page ---------------------------------------------------------------------


def test_challenge_page_for_anonymous_reads_but_cannot_run(client: Client, challenge: Challenge) -> None:
    response = client.get(reverse("challenge-detail", args=["add-two"]))

    html = response.content.decode()
    assert response.status_code == 200
    assert "<h1>Add two integers</h1>" in html
    assert 'id="login-to-run"' in html
    assert 'id="run"' not in html and 'id="submit"' not in html
    assert 'id="editor"' in html and "return 0" in html  # starter code in the editor


def test_challenge_page_has_the_documented_ids(alice: Client, challenge: Challenge) -> None:
    html = alice.get(reverse("challenge-detail", args=["add-two"])).content.decode()
    for element_id in ("editor", "run", "submit", "result", "score", "verdict", "status", "probes", "hints", "history"):
        assert f'id="{element_id}"' in html, element_id
    assert "vendor/codemirror/lib/codemirror.js" in html and "vendor/codemirror/mode/python/python.js" in html
    # The result panel draws a failing tensor's error report with the vendored charts, served by the app.
    for script in ("vendor/chartjs/chart.umd.min.js", "vendor/chartjs/chartjs-chart-matrix.min.js", "js/error-report.js", "css/error-report.css"):
        assert f"/static/{script}" in html, script
    assert html.index("js/error-report.js") < html.index("js/result-panel.js")


def test_challenge_page_says_the_starters_interface_is_kept(alice: Client, challenge: Challenge) -> None:
    # grader/interface.py refuses renamed parameters before any probe runs: the rule ends the statement, beside the
    # others, not only in the refusal.
    html = alice.get(reverse("challenge-detail", args=["add-two"])).content.decode()
    note = html[html.index('id="interface-note"') :]
    assert "their parameters' names and order" in note[: note.index("</p>")]
    statement = html[html.index('id="statement"') :]
    assert statement.index('id="interface-note"') < statement.index("</article>")  # read with the statement's rules


def test_challenge_page_says_process_settings_are_left_as_found(alice: Client, challenge: Challenge) -> None:
    # sandbox/runner/process_state.py fails a probe whose calls leave grad mode, threads, NumPy's errors... changed,
    # in every package: the rule is the platform's, so the page says it under every statement.
    html = alice.get(reverse("challenge-detail", args=["add-two"])).content.decode()
    statement = html[html.index('id="statement"') : html.index("</article>")]
    note = statement[statement.index('id="settings-note"') :]
    assert "must leave the process's settings as they found them" in note and "grad mode" in note


GIVEN_PIPELINE = 'def stages():\n    """The pipeline <the candidate> reads."""\n    return ["fx", "onnx"]\n'


def test_given_modules_are_shown_read_only_beside_the_editor(client: Client, package_dir: Path, db: None) -> None:
    (package_dir / "given").mkdir()
    (package_dir / "given" / "pipeline.py").write_text(GIVEN_PIPELINE)
    (package_dir / "given" / "cases.py").write_text("from given.pipeline import stages\n")
    assert challenge_sync_from_dir(package_dir.parent.parent).ok

    html = client.get(reverse("challenge-detail", args=["add-two"])).content.decode()

    assert 'id="file-tabs"' in html and 'id="tab-entry"' in html
    assert html.index('id="tab-given-cases"') < html.index('id="tab-given-pipeline"')  # sorted by path
    panel = html[html.index('id="panel-given-pipeline"') :]
    panel = panel[: panel.index("</textarea>")]
    assert "hidden" in panel[: panel.index(">")]  # the candidate's file is the tab shown first
    assert 'data-given="given/pipeline.py" readonly' in panel
    assert "from given.pipeline import ..." in panel
    # The source, escaped as text: the page shows it, never renders it.
    assert "The pipeline &lt;the candidate&gt; reads." in panel and "return [&quot;fx&quot;, &quot;onnx&quot;]" in panel
    editor = html[html.index('id="panel-entry"') : html.index('id="panel-given-cases"')]
    assert 'id="editor"' in editor and "readonly" not in editor


def test_a_challenge_without_given_modules_has_no_file_tabs(client: Client, challenge: Challenge) -> None:
    html = client.get(reverse("challenge-detail", args=["add-two"])).content.decode()
    assert 'id="file-tabs"' not in html and "given-source" not in html
    assert '<span class="filename">solution.py</span>' in html


def test_statement_is_sanitised(client: Client, challenge: Challenge) -> None:
    html = client.get(reverse("challenge-detail", args=["add-two"])).content.decode()
    statement = html[html.index('id="statement"') : html.index("</article>")]

    assert "<script" not in statement and "statement-xss" not in statement
    assert "onerror" not in statement
    assert "javascript:" not in statement
    assert '<code class="language-python">' in statement  # real Markdown survives


def test_page_sends_a_content_security_policy(client: Client, challenge: Challenge) -> None:
    response = client.get(reverse("challenge-detail", args=["add-two"]))
    assert "script-src 'self'" in response.headers["Content-Security-Policy"]


def test_unknown_slug_is_a_404_page(client: Client, db: None) -> None:
    response = client.get("/challenges/no-such-thing/", HTTP_ACCEPT="text/html,application/xhtml+xml")
    assert response.status_code == 404
    assert "Not Found" in response.content.decode() and "No challenge &#x27;no-such-thing&#x27;." in response.content.decode()
    # The same refusal (web.errors.NotFound) as JSON to a caller that did not ask for a page, as every endpoint answers.
    assert client.get("/challenges/no-such-thing/", HTTP_ACCEPT="application/json").json() == {"error": "No challenge 'no-such-thing'."}


def test_an_interviews_json_endpoint_answers_a_missing_interview_in_json(client: Client, db: None) -> None:
    """It answered Django's HTML 404 page to the live view's fetch."""
    coach = User.objects.create_user("coach", password="pw-coach-long-1", is_staff=True)
    client.force_login(coach)
    response = client.get(reverse("interview-live-state", args=[999999]), HTTP_ACCEPT="application/json")
    assert response.status_code == 404 and response.json() == {"error": "No such interview."}


def test_history_lists_only_ones_own_submissions(alice: Client, user: User, other_user: User, challenge: Challenge) -> None:
    mine = Submission.objects.create(user=user, challenge=challenge, version=challenge.current_version, kind="run", code=CODE)
    theirs = Submission.objects.create(user=other_user, challenge=challenge, version=challenge.current_version, kind="run", code=CODE)
    html = alice.get(reverse("challenge-detail", args=["add-two"])).content.decode()
    assert f'data-submission="{mine.pk}"' in html
    assert f'data-submission="{theirs.pk}"' not in html


# --- run / submit / status ----------------------------------------------------------------


def test_run_requires_login(client: Client, challenge: Challenge) -> None:
    response = run(client, "add-two", CODE)
    assert response.status_code == 401
    assert "Log in" in response.json()["error"]
    assert not Submission.objects.exists()


def test_run_is_post_only(alice: Client, challenge: Challenge) -> None:
    assert alice.get(reverse("challenge-run", args=["add-two"])).status_code == 405


def test_run_unknown_slug(alice: Client, db: None) -> None:
    response = run(alice, "no-such-thing", CODE)
    assert response.status_code == 404 and "no-such-thing" in response.json()["error"]


def test_run_then_poll_shows_the_public_result(
    alice: Client, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    fake_sandbox.script(SUM_WRONG, small=ok(6, stdout="printed <b>text</b>"))

    with django_capture_on_commit_callbacks(execute=True):
        response = run(alice, "add-two", SUM_WRONG)
    assert response.status_code == 202
    created = response.json()
    status = alice.get(created["url"]).json()

    assert created["status"] == "queued" and created["kind"] == "run"
    assert status["status"] == "done" and status["verdict"] == "wrong_answer" and status["score"] == 0.0
    assert status["categories"]["correctness"]["total"] == 1
    (probe,) = status["probes"]
    assert probe["message"] == "result: expected 5, got 6"
    assert (probe["observation"], probe["expected"]) == (6, 5)
    assert probe["stdout"] == "printed <b>text</b>"  # raw text; the page inserts it as text
    assert "details" not in probe
    assert status["version"] == challenge.current_version.version[:12]


def test_submit_result_hides_hidden_probe_output(
    alice: Client, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    fake_sandbox.script(SUM_WRONG, positives=ok([2, 200, 56], stdout="hidden inputs: (1, 2), (10, 20), (7, 8)"))
    with django_capture_on_commit_callbacks(execute=True):
        response = alice.post(reverse("challenge-submit", args=["add-two"]), data=SUM_WRONG, content_type="text/plain")
    status = alice.get(response.json()["url"]).json()

    assert status["kind"] == "submit" and status["verdict"] == "partial"
    assert [p["name"] for p in status["probes"]] == ["positives", "negatives"]
    for probe in status["probes"]:
        assert "stdout" not in probe and "observation" not in probe and "expected" not in probe
    assert "hidden inputs" not in json.dumps(status) and "[2, 200, 56]" not in json.dumps(status)
    (job,) = fake_sandbox.runs_of(SUM_WRONG)
    assert job["public"] is False


def test_run_accepts_form_and_json_bodies(alice: Client, challenge: Challenge, fake_sandbox: FakeBackend) -> None:
    form = alice.post(reverse("challenge-run", args=["add-two"]), {"code": CODE})
    as_json = run(alice, "add-two", json.dumps({"code": CODE}), "application/json")
    assert (form.status_code, as_json.status_code) == (202, 202)
    assert list(Submission.objects.values_list("code", flat=True)) == [CODE, CODE]


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        ("", "text/plain", "Your code is empty."),
        ("   \n", "text/plain", "Your code is empty."),
        (b"x = '\xff\xfe'\n", "text/plain", "not valid UTF-8"),
        ("{not json", "application/json", "not valid JSON"),
        ('{"code": 5}', "application/json", '{"code": "..."}'),
    ],
)
def test_bad_input_gets_a_clear_400(alice: Client, challenge: Challenge, body: str | bytes, content_type: str, message: str) -> None:
    response = run(alice, "add-two", body, content_type)
    assert response.status_code == 400
    assert message in response.json()["error"]
    assert not Submission.objects.exists()


def test_a_10_mb_paste_gets_our_message(alice: Client, challenge: Challenge) -> None:
    response = run(alice, "add-two", "x" * (10 * 1024 * 1024))
    assert response.status_code == 400
    assert response.json()["error"] == "Your code is 10.0 MB; the limit is 256 KiB."


def test_a_body_beyond_the_upload_limit_still_gets_a_message(alice: Client, challenge: Challenge, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024
    response = run(alice, "add-two", "x" * (2 * 1024 * 1024))
    assert response.status_code == 400
    assert "too large" in response.json()["error"]


def test_too_many_pending_is_429(alice: Client, user: User, challenge: Challenge, settings: Any) -> None:
    settings.SUBMISSIONS_MAX_PENDING = 1
    Submission.objects.create(user=user, challenge=challenge, version=challenge.current_version, kind="run", code=CODE)
    response = run(alice, "add-two", CODE)
    assert response.status_code == 429 and "wait" in response.json()["error"]


def test_status_is_owner_only(client: Client, user: User, other_user: User, challenge: Challenge) -> None:
    submission = Submission.objects.create(user=user, challenge=challenge, version=challenge.current_version, kind="run", code=CODE)
    url = reverse("submission-status", args=[submission.pk])

    assert client.get(url).status_code == 401
    client.force_login(other_user)
    assert client.get(url).status_code == 404
    assert client.get(reverse("submission-status", args=[999999])).status_code == 404
    client.force_login(user)
    assert client.get(url).json()["status"] == "queued"


def test_status_of_an_unfinished_submission_shows_no_result(alice: Client, user: User, challenge: Challenge) -> None:
    submission = Submission.objects.create(
        user=user, challenge=challenge, version=challenge.current_version, kind="run", code=CODE,
        status=Status.RUNNING,
    )  # fmt: skip
    data = alice.get(reverse("submission-status", args=[submission.pk])).json()
    assert data["status"] == "running" and data["done"] is False and data["probes"] == [] and data["verdict"] is None


# --- hints -----------------------------------------------------------------------------------


@pytest.fixture
def graded(alice: Client, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any) -> int:
    with django_capture_on_commit_callbacks(execute=True):
        response = alice.post(reverse("challenge-submit", args=["add-two"]), data=SUM_WRONG, content_type="text/plain")
    return int(response.json()["id"])


def test_no_hint_is_shown_unasked_and_the_first_tier_is_offered(alice: Client, graded: int) -> None:
    payload = alice.get(reverse("submission-status", args=[graded]))
    hints = {h["id"]: h for h in payload.json()["hints"]}

    assert not any(h["shown"] or h["html"] for h in hints.values())
    assert hints["nudge"]["can_reveal"] and hints["nudge"]["offered"]
    assert not hints["concept"]["can_reveal"] and not hints["near"]["can_reveal"]
    assert [h["id"] for h in payload.json()["hints"] if h["offered"]] == ["nudge"]
    for text in ("returns", "adds two integers", "return a + b"):
        assert text not in payload.content.decode()


def test_reveal_endpoint_walks_the_ladder(alice: Client, graded: int) -> None:
    too_early = alice.post(reverse("submission-hint-reveal", args=[graded, "concept"]))
    nudge = alice.post(reverse("submission-hint-reveal", args=[graded, "nudge"]))
    concept = alice.post(reverse("submission-hint-reveal", args=[graded, "concept"]))
    near = alice.post(reverse("submission-hint-reveal", args=[graded, "near"]))

    assert too_early.status_code == 409 and "tier-1" in too_early.json()["error"]
    assert nudge.status_code == concept.status_code == 200
    after_nudge = {h["id"]: h for h in nudge.json()["hints"]}
    assert after_nudge["nudge"]["html"] == "<p>Look at what <code>add</code> <strong>returns</strong>.</p>"
    assert after_nudge["concept"]["offered"] and not after_nudge["concept"]["shown"]
    hints = {h["id"]: h for h in near.json()["hints"]}
    assert hints["near"]["shown"] and "return a + b" in hints["near"]["html"]
    assert not any(h["offered"] for h in hints.values())
    assert HintReveal.objects.filter(submission_id=graded).count() == 3


def _post(client: Client, route: str, code: str, capture: Any) -> dict[str, Any]:
    with capture(execute=True):
        created = client.post(reverse(route, args=["add-two"]), data=code, content_type="text/plain")
    return client.get(reverse("submission-status", args=[created.json()["id"]])).json()


def test_the_heaviest_failing_probes_nudge_is_offered_first_then_tiers_in_order(
    alice: Client, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    """Both hidden probes fail: positives (weight 2, "sum") leads negatives (weight 1, "signs")."""
    zero = "def add(a, b):\n    return 0\n"
    fake_sandbox.script(zero, positives=ok([0, 0, 0]), negatives=ok([0, 0]))
    data = _post(alice, "challenge-submit", zero, django_capture_on_commit_callbacks)
    assert [(h["id"], h["tier"]) for h in data["hints"]] == [("nudge", 1), ("negatives", 1), ("concept", 2), ("near", 3)]
    assert [h["id"] for h in data["hints"] if h["offered"]] == ["nudge"] and not any(h["html"] for h in data["hints"])
    assert [h["probes"] for h in data["hints"]] == [["positives"], ["negatives"], ["positives"], ["positives"]]

    offered = []
    for _ in range(4):
        hint = next(h for h in data["hints"] if h["offered"])
        offered.append(hint["id"])
        data = alice.post(hint["reveal_url"]).json()
    assert offered == ["nudge", "negatives", "concept", "near"]
    assert not any(h["offered"] for h in data["hints"])
    rows = HintReveal.objects.order_by("revealed_at", "pk")
    assert [(r.hint_id, r.tier, r.submission_id) for r in rows] == [
        (h, t, data["id"]) for h, t in [("nudge", 1), ("negatives", 1), ("concept", 2), ("near", 3)]
    ]


def test_a_run_shows_a_structured_diff_and_the_expected_value_beside_an_error(
    alice: Client, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    wrong = "def add(a, b):\n    return a - b\n"
    fake_sandbox.script(wrong, small=ok(-1))
    [small] = _post(alice, "challenge-run", wrong, django_capture_on_commit_callbacks)["probes"]
    leaf = small["diff"]["tree"]
    assert (leaf["path"], leaf["received"], leaf["expected"]) == ("result", "-1", "5")

    broken = "def add(a, b):\n    raise ValueError('nope')\n"
    fake_sandbox.script(broken, small=raised("ValueError", "nope"), positives=raised("ValueError", "nope"))
    [small] = _post(alice, "challenge-run", broken, django_capture_on_commit_callbacks)["probes"]
    assert "ValueError: nope" in small["message"] and small["observation"] is None
    assert small["expected"] == 5 and small["diff"] == {"received": None, "expected": "int 5", "expected_preview": "5", "tree": None}

    # A Submit's probe that raised: the policy's sentence, no expected value, no diff.
    hidden = _post(alice, "challenge-submit", broken, django_capture_on_commit_callbacks)["probes"]
    positives = next(p for p in hidden if p["name"] == "positives")
    assert positives["message"] == "raised ValueError at solution.py line 2"
    assert not {"expected", "observation", "diff"} & set(positives)


def test_reveal_is_owner_only(client: Client, other_user: User, graded: int) -> None:
    client.logout()
    url = reverse("submission-hint-reveal", args=[graded, "concept"])
    assert client.post(url).status_code == 401
    client.force_login(other_user)
    assert client.post(url).status_code == 404
    assert not HintReveal.objects.filter(hint_id="concept").exists()


# --- accounts ----------------------------------------------------------------------------------


def test_signup_logs_in_and_redirects(client: Client, db: None) -> None:
    response = client.post(
        reverse("signup"),
        {
            "username": "newbie",
            "email": "newbie@example.com",
            "password1": "a-Strong-pass-991",
            "password2": "a-Strong-pass-991",
            "next": "/challenges/x/",
        },
    )
    assert response.status_code == 302 and response["Location"] == "/challenges/x/"
    assert User.objects.get(username="newbie").email == "newbie@example.com"
    assert client.get(reverse("catalogue")).context["user"].username == "newbie"


def test_signup_refuses_an_offsite_next(client: Client, db: None) -> None:
    response = client.post(
        reverse("signup"),
        {
            "username": "n2",
            "email": "n2@example.com",
            "password1": "a-Strong-pass-991",
            "password2": "a-Strong-pass-991",
            "next": "https://evil.example/",
        },
    )
    assert response["Location"] == reverse("catalogue")


def test_login_and_logout(client: Client, user: User) -> None:
    page = client.get(reverse("login"))
    assert page.status_code == 200
    response = client.post(reverse("login"), {"username": "alice", "password": "pw-alice-123"})
    assert response.status_code == 302
    assert client.post(reverse("logout")).status_code == 302
    assert not client.get(reverse("catalogue")).context["user"].is_authenticated


def test_admin_lists_every_model(admin_client: Client, challenge: Challenge) -> None:
    for name in (
        "challenges/challenge",
        "challenges/challengeversion",
        "submissions/submission",
        "submissions/hintreveal",
        "authoring/validationrun",
        "interviews/interview",
    ):
        assert admin_client.get(f"/admin/{name}/").status_code == 200, name


def test_the_interview_admin_shows_state_but_not_the_assessment_or_the_link(admin_client: Client, challenge: Challenge) -> None:
    from web.interviews.models import Interview

    coach = User.objects.create_user("grace", password="pw-grace-1234", is_staff=True)
    candidate = User.objects.create_user("ada", password="pw-ada-12345")
    interview = Interview.objects.create(coach=coach, candidate=candidate, duration_minutes=30, token="SECRET-TOKEN-xyz",
                                         notes="PRIVATE-NOTES-abc")  # fmt: skip
    listing = admin_client.get("/admin/interviews/interview/").content.decode()
    assert "grace" in listing and "ada" in listing and "Scheduled" in listing
    page = admin_client.get(f"/admin/interviews/interview/{interview.pk}/change/")
    assert page.status_code == 200
    assert "SECRET-TOKEN-xyz" not in page.content.decode() and "PRIVATE-NOTES-abc" not in page.content.decode()


# --- what a poll costs ------------------------------------------------------------------------------


def test_the_detector_sees_a_query_that_reads_package_files(challenge: Challenge) -> None:
    with pytest.raises(AssertionError, match="read a package's files"), reads_no_package_files(max_queries=10):
        ChallengeVersion.objects.get(pk=challenge.current_version_id)


def test_polling_a_submission_reads_no_package_files(alice: Client, graded: int) -> None:
    # The session, the user, the submission with its version, the hints revealed.
    with reads_no_package_files(max_queries=4):
        data = alice.get(reverse("submission-status", args=[graded])).json()
    assert data["done"] and data["version"] == Submission.objects.get(pk=graded).version.short_version


def test_the_challenge_page_reads_no_package_files(alice: Client, graded: int) -> None:
    # Session, user, coach role, challenge and version, history, whether its Learn page is open (one query), the
    # user's draft with its version's statement and starter (one query), and the recent gradings' times (one query).
    with reads_no_package_files(max_queries=8):
        page = alice.get(reverse("challenge-detail", args=["add-two"]))
    html = page.content.decode()
    assert page.status_code == 200 and f'data-submission="{graded}"' in html and "def add(a, b):" in html
