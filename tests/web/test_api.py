"""The JSON API (web/api): list, fetch, submit, poll; token and session auth; errors; the OpenAPI schema.

Grading is the real grader on the conftest's in-memory sandbox (eager Celery),
so each test is about the API's own behaviour; tests/integration/test_cli.py
runs the real thing.
"""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from tests.fake_backend import FakeBackend, ok
from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir
from web.submissions.models import HintReveal, Kind, Status, Submission
from web.submissions.services.intake import MAX_CODE_BYTES

from .conftest import ALL_SUM_HINTS, CORRECT, SUM_WRONG, reads_no_package_files

CODE = CORRECT


def token_for(user: User) -> str:
    out = StringIO()
    call_command("api_token", user.username, stdout=out)
    return out.getvalue().strip()


@pytest.fixture
def api(client: Client, user: User) -> Client:
    """Alice's client authenticated by her token only (no session, no CSRF cookie)."""
    client.defaults["HTTP_AUTHORIZATION"] = f"Token {token_for(user)}"
    return client


def submit(client: Client, body: Any, slug: str = "add-two", **extra: Any) -> Any:
    return client.post(reverse("api-submit", args=[slug]), data=body, content_type="application/json", **extra)


# --- Reading challenges ---------------------------------------------------------------------


def test_list_shows_catalogue_fields_of_published_challenges(client: Client, challenge: Challenge) -> None:
    Challenge.objects.create(
        slug="draft", track="basics", title="Draft", difficulty="easy", published=False, current_version=challenge.current_version
    )
    data = client.get(reverse("api-challenges")).json()
    assert data == [
        {
            "slug": "add-two", "title": challenge.title, "track": "basics", "difficulty": challenge.difficulty,
            "tags": challenge.tags, "summary": challenge.summary, "runtime": "python", "url": "/api/v1/challenges/add-two/",
        }
    ]  # fmt: skip


def test_detail_lists_the_given_modules(api: Client, package_dir: Path, db: Any) -> None:
    (package_dir / "given").mkdir()
    (package_dir / "given" / "pipeline.py").write_text("STAGES = 2\n")
    assert challenge_sync_from_dir(package_dir.parent.parent).ok

    data = api.get(reverse("api-challenge", args=["add-two"])).json()

    assert data["given"] == [{"path": "given/pipeline.py", "import_name": "given.pipeline", "source": "STAGES = 2\n"}]


def test_detail_has_the_public_parts_and_nothing_else(api: Client, challenge: Challenge) -> None:
    version = challenge.current_version
    assert version is not None
    data = api.get(reverse("api-challenge", args=["add-two"])).json()

    assert data["statement"] == version.statement and "<h1" in data["statement_html"]
    assert data["starter_code"] == version.starter_code and data["entry"] == "solution.py"
    assert data["public_probes"] == [{"name": "small", "category": "correctness", "weight": 1.0, "description": "Two small positive integers."}]
    assert data["hints"] == []
    assert data["given"] == []
    assert data["submit_url"] == "/api/v1/challenges/add-two/submissions/"
    text = str(data)
    reference = [f for f in version.files if f.startswith("reference/")]
    assert reference and "return a + b" not in text  # the reference's body
    for hidden in ("positives", "negatives", "Negative integers"):  # hidden probes' names and docstrings
        assert hidden not in text
    for hint in version.hints:
        assert hint["text"] not in text


def test_detail_includes_only_the_hints_this_user_was_shown(api: Client, challenge: Challenge, user: User, other_user: User) -> None:
    sub = Submission.objects.create(user=user, challenge=challenge, version=challenge.current_version, kind="submit", code=CODE,
                                    status=Status.DONE, verdict="wrong_answer", hints=ALL_SUM_HINTS)  # fmt: skip
    HintReveal.objects.create(user=user, challenge=challenge, submission=sub, hint_id="nudge", tier=1, revealed_at=sub.created_at)
    HintReveal.objects.create(user=other_user, challenge=challenge, submission=None, hint_id="concept", tier=2, revealed_at=sub.created_at)

    hints = api.get(reverse("api-challenge", args=["add-two"])).json()["hints"]

    assert [h["id"] for h in hints] == ["nudge"]
    assert hints[0]["text"] == ALL_SUM_HINTS[0]["text"] and "<strong>returns</strong>" in hints[0]["html"]


def test_unknown_or_unpublished_challenge_is_404_with_a_message(api: Client, challenge: Challenge) -> None:
    Challenge.objects.filter(pk=challenge.pk).update(published=False)
    for slug in ("add-two", "no-such"):
        response = api.get(reverse("api-challenge", args=[slug]))
        assert response.status_code == 404 and response.json() == {"error": f"No challenge {slug!r}."}
        assert submit(api, {"kind": "run", "code": CODE}, slug=slug).status_code == 404
    assert Submission.objects.count() == 0


# --- Submitting and polling --------------------------------------------------------------------


def test_submit_with_a_token_then_poll_gives_the_pages_result(
    api: Client, challenge: Challenge, fake_sandbox: FakeBackend, user: User, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = submit(api, {"kind": "submit", "code": SUM_WRONG})

    assert response.status_code == 202
    created = response.json()
    sub = Submission.objects.get()
    assert created == {"id": sub.pk, "kind": "submit", "status": "queued", "url": f"/api/v1/submissions/{sub.pk}/"}
    (job,) = fake_sandbox.runs_of(SUM_WRONG)
    assert job["public"] is False
    # The token, its user, the submission with its version, the hints revealed: never the package's files.
    with reads_no_package_files(max_queries=4):
        polled = api.get(created["url"]).json()
    assert polled["done"] and polled["verdict"] == "partial" and polled["score"] == pytest.approx(33.3, abs=0.1)
    assert "stdout" not in polled["probes"][0]  # hidden probes show no output, as on the page
    assert [h["id"] for h in polled["hints"] if h["shown"]] == []  # nothing unasked
    assert [h["id"] for h in polled["hints"] if h["offered"]] == ["nudge"]
    web = Client()
    web.force_login(user)
    page = web.get(reverse("submission-status", args=[sub.pk])).json()
    # The same presenter; only the follow-up URLs differ (the API's own, which take a token).
    assert {**page, "url": None, "hints": [{**h, "reveal_url": None} for h in page["hints"]]} == {
        **polled, "url": None, "hints": [{**h, "reveal_url": None} for h in polled["hints"]]
    }  # fmt: skip
    assert polled["url"] == f"/api/v1/submissions/{sub.pk}/"
    assert {h["reveal_url"] for h in polled["hints"]} == {f"/api/v1/submissions/{sub.pk}/hints/{h['id']}/reveal/" for h in ALL_SUM_HINTS}


def _done(owner: User, challenge: Challenge, **fields: Any) -> Submission:
    values: dict[str, Any] = {"kind": "submit", "code": CODE, "status": Status.DONE, "verdict": "wrong_answer", "score": 0.0, **fields}
    return Submission.objects.create(user=owner, challenge=challenge, version=challenge.current_version, **values)


def test_a_token_caller_reveals_the_hints_a_submission_unlocked_in_tier_order(api: Client, challenge: Challenge, user: User) -> None:
    sub = _done(user, challenge, hints=ALL_SUM_HINTS)
    nudge, concept, near = (next(h for h in ALL_SUM_HINTS if h["tier"] == tier) for tier in (1, 2, 3))

    skipped = api.post(reverse("api-hint-reveal", args=[sub.pk, concept["id"]]))
    assert skipped.status_code == 409 and "tier-1" in skipped.json()["error"]
    for hint in (nudge, concept):
        assert api.post(reverse("api-hint-reveal", args=[sub.pk, hint["id"]])).status_code == 200
    answer = api.post(reverse("api-hint-reveal", args=[sub.pk, near["id"]]))
    assert answer.status_code == 200
    shown = {h["id"]: h for h in answer.json()["hints"] if h["shown"]}
    assert set(shown) == {nudge["id"], concept["id"], near["id"]} and "<code>return a + b</code>" in shown[near["id"]]["html"]
    assert set(HintReveal.objects.filter(user=user).values_list("hint_id", flat=True)) == {nudge["id"], concept["id"], near["id"]}
    missing = api.post(reverse("api-hint-reveal", args=[sub.pk, "no-such-hint"]))
    assert missing.status_code == 409 and missing.json() == {"error": "This submission did not unlock that hint."}


def test_a_token_caller_regrades_only_a_platform_failure(
    api: Client, challenge: Challenge, user: User, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    wrong = _done(user, challenge)
    refused = api.post(reverse("api-regrade", args=[wrong.pk]))
    assert refused.status_code == 409 and "run or submit your code again" in refused.json()["error"]

    failed = _done(user, challenge, verdict="internal_error", score=None)
    polled = api.get(reverse("api-submission", args=[failed.pk])).json()
    assert polled["regrade_url"] == f"/api/v1/submissions/{failed.pk}/regrade/"
    with django_capture_on_commit_callbacks(execute=True):
        answer = api.post(polled["regrade_url"])
    assert answer.status_code == 202 and answer.json()["status"] == "queued"
    assert api.get(answer.json()["url"]).json()["verdict"] == "accepted"


def test_hint_and_regrade_routes_are_404_for_another_users_submission(api: Client, challenge: Challenge, other_user: User) -> None:
    theirs = _done(other_user, challenge, verdict="internal_error", hints=ALL_SUM_HINTS)
    for url in (reverse("api-regrade", args=[theirs.pk]), reverse("api-hint-reveal", args=[theirs.pk, ALL_SUM_HINTS[0]["id"]])):
        response = api.post(url)
        assert response.status_code == 404 and response.json() == {"error": "No such submission."}
    assert Submission.objects.get(pk=theirs.pk).verdict == "internal_error" and not HintReveal.objects.exists()


def test_run_shows_public_output(api: Client, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any) -> None:
    fake_sandbox.script(SUM_WRONG, small=ok(6, stdout="printed <b>text</b>"))
    with django_capture_on_commit_callbacks(execute=True):
        created = submit(api, {"kind": "run", "code": SUM_WRONG}).json()
    polled = api.get(created["url"]).json()
    (job,) = fake_sandbox.runs_of(SUM_WRONG)
    assert Submission.objects.get().kind == Kind.RUN and job["public"] is True
    assert polled["probes"][0]["observation"] == 6 and polled["probes"][0]["stdout"] == "printed <b>text</b>"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"kind": "grade", "code": CODE}, 'kind: "grade" is not a valid choice.'),
        ({"code": CODE}, "kind: This field is required."),
        ({"kind": "run"}, "code: This field is required."),
        ({"kind": "run", "code": 5}, "code: Not a valid string."),
        ({"kind": "run", "code": ""}, "empty"),
        ({"kind": "run", "code": "x = 1\x00"}, "code: Null characters are not allowed."),
        ({"kind": "run", "code": "#" * (MAX_CODE_BYTES + 1)}, f"{MAX_CODE_BYTES // 1024} KiB"),
        ("{not json", "JSON parse error"),
    ],
)
def test_bad_input_gets_400_naming_the_problem(api: Client, challenge: Challenge, fake_sandbox: FakeBackend, body: Any, message: str) -> None:
    response = submit(api, body)
    assert response.status_code == 400, response.content
    assert set(response.json()) == {"error"} and message in response.json()["error"]
    assert Submission.objects.count() == 0 and fake_sandbox.starts == 0


def test_a_body_that_is_not_json_is_415(api: Client, challenge: Challenge) -> None:
    response = api.post(reverse("api-submit", args=["add-two"]), data="code", content_type="text/plain")
    assert response.status_code == 415 and "text/plain" in response.json()["error"]


def test_too_many_pending_is_429(api: Client, challenge: Challenge, settings: Any) -> None:
    settings.SUBMISSIONS_MAX_PENDING = 1
    # Not graded: the queueing runs on commit, which this test's transaction never reaches.
    assert submit(api, {"kind": "run", "code": CODE}).status_code == 202
    refused = submit(api, {"kind": "run", "code": CODE})
    assert refused.status_code == 429 and "waiting to be graded" in refused.json()["error"]


def test_every_submission_id_but_ones_own_is_404(api: Client, challenge: Challenge, user: User, other_user: User) -> None:
    def make(owner: User) -> int:
        return Submission.objects.create(user=owner, challenge=challenge, version=challenge.current_version, kind="run",
                                         code="# MALLORY-SECRET\n", status=Status.DONE, verdict="accepted").pk  # fmt: skip

    own = make(user)
    others = [make(other_user) for _ in range(3)]
    for pk in [*others, max(others) + 1, 0]:
        response = api.get(f"/api/v1/submissions/{pk}/")
        assert response.status_code == 404 and response.json() == {"error": "No such submission."}
    assert api.get(reverse("api-submission", args=[own])).status_code == 200
    assert "MALLORY-SECRET" not in api.get(reverse("api-submission", args=[own])).content.decode()


# --- Authentication ----------------------------------------------------------------------------


def test_without_credentials_submit_and_poll_are_401(client: Client, challenge: Challenge) -> None:
    assert client.get(reverse("api-challenges")).status_code == 200  # reading is open, like the catalogue
    response = submit(client, {"kind": "run", "code": CODE})
    assert response.status_code == 401 and response.json() == {"error": "Authentication credentials were not provided."}
    assert response["WWW-Authenticate"] == "Token"
    assert client.get(reverse("api-submission", args=[1])).status_code == 401


def test_a_wrong_or_revoked_token_is_401(client: Client, challenge: Challenge, user: User) -> None:
    key = token_for(user)
    assert submit(client, {"kind": "run", "code": CODE}, HTTP_AUTHORIZATION="Token not-a-token").json() == {"error": "Invalid token."}
    call_command("api_token", user.username, "--revoke", stdout=StringIO())
    assert submit(client, {"kind": "run", "code": CODE}, HTTP_AUTHORIZATION=f"Token {key}").status_code == 401
    assert Submission.objects.count() == 0


def test_api_token_command_prints_replaces_and_revokes(user: User) -> None:
    first = token_for(user)
    assert re.fullmatch(r"[0-9a-f]{40}", first) and token_for(user) == first  # stable until replaced
    out = StringIO()
    call_command("api_token", user.username, "--new", stdout=out)
    assert out.getvalue().strip() != first and Token.objects.get(user=user).key == out.getvalue().strip()
    out = StringIO()
    call_command("api_token", user.username, "--revoke", stdout=out)
    assert "deleted" in out.getvalue() and not Token.objects.filter(user=user).exists()
    with pytest.raises(CommandError, match="No user 'nobody'"):
        call_command("api_token", "nobody")


def test_a_browser_session_works_but_needs_the_csrf_token(challenge: Challenge, fake_sandbox: FakeBackend, user: User) -> None:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    refused = submit(browser, {"kind": "run", "code": CODE})
    assert refused.status_code == 403 and "CSRF" in refused.json()["error"]
    page = browser.get(reverse("challenge-detail", args=["add-two"])).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    assert submit(browser, {"kind": "run", "code": CODE}, HTTP_X_CSRFTOKEN=token.group(1)).status_code == 202


# --- Schema ------------------------------------------------------------------------------------


def test_the_openapi_schema_describes_every_endpoint(client: Client, db: None) -> None:
    response = client.get(reverse("api-schema"), {"format": "json"})
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert set(schema["paths"]) == {
        "/api/v1/challenges/", "/api/v1/challenges/{slug}/", "/api/v1/challenges/{slug}/submissions/", "/api/v1/submissions/{id}/",
        "/api/v1/progress/", "/api/v1/submissions/",
        "/api/v1/submissions/{id}/hints/{hint_id}/reveal/", "/api/v1/submissions/{id}/regrade/",
        "/api/v1/submissions/{id}/cancel/",
        "/api/v1/interviews/{interview_id}/scorecard",
    }  # fmt: skip
    assert set(schema["paths"]["/api/v1/submissions/{id}/regrade/"]["post"]["responses"]) == {"202", "404", "409", "429"}
    post = schema["paths"]["/api/v1/challenges/{slug}/submissions/"]["post"]
    assert set(post["responses"]) == {"202", "400", "404", "429"}
    assert "tokenAuth" in schema["components"]["securitySchemes"]
    assert set(schema["components"]["schemas"]["SubmissionCreate"]["required"]) == {"kind", "code"}


def test_the_swagger_ui_page_is_served_from_the_app_and_names_no_cdn(client: Client, db: None) -> None:
    from django.contrib.staticfiles import finders

    response = client.get(reverse("api-docs"))
    assert response.status_code == 200
    page = response.content.decode()
    scripts = re.findall(r'<script[^>]*src="([^"]+)"', page)
    styles = re.findall(r'<link[^>]*href="([^"]+)"', page)
    assert "/static/vendor/swagger-ui/swagger-ui-bundle.js" in scripts
    assert "/static/vendor/swagger-ui/swagger-ui.css" in styles
    # Everything it loads is on this site, and the vendored files are really there.
    assert all(url.startswith("/") and not url.startswith("//") for url in scripts + styles), scripts + styles
    assert "http://" not in page and "https://" not in page and "cdn" not in page.lower()
    for name in ("swagger-ui-bundle.js", "swagger-ui.css", "LICENSE", "README.txt"):
        assert finders.find(f"vendor/swagger-ui/{name}"), name
    # No inline script (the Content-Security-Policy allows none): the start-up script has its own URL.
    assert re.search(r"<script>(?!\s*</script>)", page) is None
    init_url = next(url for url in scripts if "script" in url.split("?", 1)[-1])
    init = client.get(init_url)
    assert init.status_code == 200 and init["Content-Type"].startswith("application/javascript")
    body = init.content.decode()
    assert reverse("api-schema") in body and "SwaggerUIBundle(" in body
    assert "https://" not in body and '"validatorUrl": null' in body


def test_the_token_page_links_to_the_api_documentation(alice: Client) -> None:
    page = alice.get(reverse("api-token")).content.decode()
    assert f'href="{reverse("api-docs")}"' in page


def test_the_token_page_creates_replaces_and_revokes_ones_own_token(alice: Client, user: User, other_user: User) -> None:
    page = reverse("api-token")
    mallory_key = token_for(other_user)
    assert 'id="token-none"' in alice.get(page).content.decode()

    assert alice.post(page, {"action": "create"}).status_code == 302
    key = Token.objects.get(user=user).key
    html = alice.get(page).content.decode()
    assert f'value="{key}"' in html and mallory_key not in html

    alice.post(page, {"action": "replace"})
    assert Token.objects.get(user=user).key != key
    alice.post(page, {"action": "revoke"})
    assert not Token.objects.filter(user=user).exists()
    assert Token.objects.get(user=other_user).key == mallory_key  # nobody else's token is touched
    assert alice.post(page, {"action": "steal"}).status_code == 400
