"""The one error tree and its one table of HTTP answers: web/errors.py, used by the pages and the API alike.

Every class of the tree is raised from a page's view and from a DRF view
(this module is their URLconf) and must get the same status, body and
headers from both; a browser that asks for HTML gets the same sentence in a
page. Failures on our side answer a fixed sentence, never their message.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.db import OperationalError
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import path
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from grader.errors import GraderError, GradingCancelled, HostLoadError, InvalidSubmission, PackageError, PlatformError
from sandbox.errors import AppError, SandboxNotReady, SandboxStartError
from web.accounts.throttle import LoginBlocked
from web.authoring.services import AuthoringError
from web.errors import (
    BUSY_MESSAGE,
    CANCELLED_MESSAGE,
    PACKAGE_MESSAGE,
    PLATFORM_MESSAGE,
    SERVER_MESSAGE,
    Conflict,
    Forbidden,
    LimitReached,
    LoginRequired,
    MethodNotAllowed,
    NotFound,
    Refused,
    Throttled,
    error_answer,
)
from web.interviews.evidence import CitationNotFound
from web.interviews.keys import KeysMessageInvalid
from web.interviews.replay import FocusRateLimited
from web.interviews.services import InterviewError, InterviewInvalid, InterviewLocked, NotInInterview, SnapshotRateLimited
from web.submissions.errors import (
    CancelRefused,
    HintsSwitchedOff,
    HintUnavailable,
    RateLimitExceeded,
    RegradeRefused,
    SubmissionRejected,
    TooManyPending,
)
from web.submissions.request_code import BadRequestBody

# (the error raised, the status, the body, the headers)
CASES: list[tuple[BaseException, int, dict[str, Any], dict[str, str]]] = [
    (Refused("Send a JSON object."), 400, {"error": "Send a JSON object."}, {}),
    (LoginRequired("Log in first.", login_url="/accounts/login/"), 401, {"error": "Log in first.", "login_url": "/accounts/login/"}, {}),
    (Forbidden("Coaches only."), 403, {"error": "Coaches only."}, {}),
    (NotFound("No such submission."), 404, {"error": "No such submission."}, {}),
    (Conflict("Not now."), 409, {"error": "Not now."}, {}),
    (MethodNotAllowed("Use the button.", allowed=["POST"]), 405, {"error": "Use the button.", "allowed": ["POST"]}, {}),
    (LimitReached("Too much pending."), 429, {"error": "Too much pending."}, {}),
    (Throttled("Slow down.", 7), 429, {"error": "Slow down.", "retry_after": 7}, {"Retry-After": "7"}),
    (SubmissionRejected("Your code is empty."), 400, {"error": "Your code is empty."}, {}),
    (BadRequestBody('Send {"code": "..."}.'), 400, {"error": 'Send {"code": "..."}.'}, {}),
    (TooManyPending("You already have 5 runs waiting."), 429, {"error": "You already have 5 runs waiting."}, {}),
    (RateLimitExceeded("You can submit 2 times per minute.", 12), 429, {"error": "You can submit 2 times per minute.", "retry_after": 12},
     {"Retry-After": "12"}),
    (RegradeRefused("Only a platform failure."), 409, {"error": "Only a platform failure."}, {}),
    (CancelRefused("This grading has already finished."), 409, {"error": "This grading has already finished."}, {}),
    (GradingCancelled("the grading was cancelled while it ran"), 409, {"error": CANCELLED_MESSAGE}, {}),
    (HintUnavailable("Reveal a tier-1 hint first."), 409, {"error": "Reveal a tier-1 hint first."}, {}),
    (HintsSwitchedOff("Hints are off in this interview."), 403, {"error": "Hints are off in this interview."}, {}),
    (InterviewError("Notes must be text."), 400, {"error": "Notes must be text."}, {}),
    (InterviewLocked("Time is up."), 409, {"error": "Time is up."}, {}),
    (NotInInterview("Not part of this interview."), 404, {"error": "Not part of this interview."}, {}),
    (InterviewInvalid({"candidate": ["No such user."], None: ["Choose a challenge."]}), 400, {"error": "No such user. Choose a challenge."}, {}),
    (CitationNotFound("No such citation."), 404, {"error": "No such citation."}, {}),
    (KeysMessageInvalid("An edit needs a sequence number."), 400, {"error": "An edit needs a sequence number."}, {}),
    (FocusRateLimited("Too many focus reports.", 20), 429, {"error": "Too many focus reports.", "retry_after": 20}, {"Retry-After": "20"}),
    (SnapshotRateLimited("Autosaving too often.", 3), 429, {"error": "Autosaving too often.", "retry_after": 3}, {"Retry-After": "3"}),
    (AuthoringError("The slug is taken."), 400, {"error": "The slug is taken."}, {}),
    (LoginBlocked("ip", "Too many failed logins.", 900), 429, {"error": "Too many failed logins.", "retry_after": 900}, {"Retry-After": "900"}),
    (InvalidSubmission("Your code is not valid UTF-8 text."), 400, {"error": "Your code is not valid UTF-8 text."}, {}),
    # Ours to fix: a fixed sentence, never the message (it can name hidden probes, hosts or engines).
    (PackageError("probe 'secret_probe' fails on the reference", path="add-two/reference/solution.py"), 500, {"error": PACKAGE_MESSAGE}, {}),
    (PlatformError("the sandbox runner did not start: /var/lib/secret"), 503, {"error": PLATFORM_MESSAGE}, {}),
    (HostLoadError("the host was overloaded while probe(s) secret_probe ran; graded again"), 503, {"error": PLATFORM_MESSAGE}, {}),
    (SandboxStartError("the Docker engine at tcp://10.0.0.5 is not reachable"), 503, {"error": PLATFORM_MESSAGE}, {}),
    (SandboxNotReady("the sandbox did not become ready in 90 s: /srv/secret"), 503, {"error": PLATFORM_MESSAGE}, {}),
    (GraderError("an internal detail"), 500, {"error": SERVER_MESSAGE}, {}),
    (AppError("an internal detail"), 500, {"error": SERVER_MESSAGE}, {}),
    (OperationalError("database is locked"), 503, {"error": BUSY_MESSAGE, "retry_after": 5}, {"Retry-After": "5"}),
]
IDS = [type(exc).__name__ for exc, *_ in CASES]
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def page_view(request: HttpRequest, case: int) -> HttpResponse:
    raise CASES[case][0]


class ApiView(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []

    def get(self, request: Request, case: int) -> Response:
        raise CASES[case][0]


def bug_view(request: HttpRequest) -> HttpResponse:
    raise KeyError("a bug")


urlpatterns = [path("page/<int:case>/", page_view), path("api/v1/case/<int:case>/", ApiView.as_view()), path("bug/", bug_view)]


@pytest.mark.parametrize(("case", "expected"), list(enumerate(CASES)), ids=IDS)
def test_each_error_has_one_answer(case: int, expected: tuple[BaseException, int, dict[str, Any], dict[str, str]]) -> None:
    exc, status, body, headers = expected
    answer = error_answer(exc)
    assert answer is not None
    assert (answer.status, answer.body, answer.headers) == (status, body, headers)


@pytest.mark.urls(__name__)
@pytest.mark.parametrize(("case", "expected"), list(enumerate(CASES)), ids=IDS)
def test_pages_and_the_api_give_that_answer(
    client: Client, case: int, expected: tuple[BaseException, int, dict[str, Any], dict[str, str]], caplog: pytest.LogCaptureFixture
) -> None:
    exc, status, body, headers = expected
    caplog.set_level(logging.WARNING)
    for url in (f"/page/{case}/", f"/api/v1/case/{case}/"):
        response = client.get(url)
        assert (response.status_code, response.json()) == (status, body), url
        assert {name: response[name] for name in headers} == headers, url
    if status >= 500:
        # The person read a fixed sentence; the log has what happened.
        assert str(exc) in caplog.text


@pytest.mark.urls(__name__)
@pytest.mark.parametrize(("case", "expected"), list(enumerate(CASES)), ids=IDS)
def test_a_browser_gets_the_same_sentence_as_a_page(
    client: Client, case: int, expected: tuple[BaseException, int, dict[str, Any], dict[str, str]]
) -> None:
    _, status, body, headers = expected
    response = client.get(f"/page/{case}/", HTTP_ACCEPT=BROWSER_ACCEPT)
    assert response.status_code == status and response["Content-Type"].startswith("text/html")
    assert escape(body["error"]) in response.content.decode()
    assert {name: response[name] for name in headers} == headers
    # The API answers JSON even to a browser.
    api = client.get(f"/api/v1/case/{case}/", HTTP_ACCEPT=BROWSER_ACCEPT)
    assert api.status_code == status and api.json() == body


def escape(text: str) -> str:
    from django.utils.html import escape as django_escape

    return str(django_escape(text))


def test_a_bug_is_not_ours_to_word() -> None:
    assert error_answer(KeyError("oops")) is None  # Django's 500 and its traceback in the log


def test_every_class_of_the_tree_has_a_case() -> None:
    def subclasses(cls: type) -> set[type]:
        return {cls} | {s for c in cls.__subclasses__() for s in subclasses(c)}

    tested = {type(exc) for exc, *_ in CASES}
    ours = {c for c in subclasses(AppError) if c.__module__.startswith(("web.", "grader.", "sandbox."))}
    assert ours <= tested, f"add a case for: {sorted(c.__qualname__ for c in ours - tested)}"


@pytest.mark.django_db
def test_a_page_refused_to_a_candidate_is_a_styled_page_that_says_why(client: Client) -> None:
    from django.contrib.auth import get_user_model

    candidate = get_user_model().objects.create_user("cand", password="pw-long-enough-1")
    client.force_login(candidate)
    response = client.get("/author/", HTTP_ACCEPT=BROWSER_ACCEPT)
    page = response.content.decode()
    assert response.status_code == 403
    assert "This page is for coaches" in page and "css/site.css" in page and "Back to the challenges" in page


@pytest.mark.urls(__name__)
def test_a_bug_gets_the_sites_styled_500_page_with_a_way_back(client: Client, caplog: pytest.LogCaptureFixture) -> None:
    client.raise_request_exception = False  # as in production: Django answers with templates/500.html
    caplog.set_level(logging.ERROR)
    response = client.get("/bug/", HTTP_ACCEPT=BROWSER_ACCEPT)
    page = response.content.decode()
    assert response.status_code == 500
    assert "Something went wrong on our side" in page
    assert "css/site.css" in page and 'class="topbar"' in page and 'href="/">Back to the challenges' in page
    assert "a bug" not in page and "KeyError" not in page  # the cause is in the log, not on the page


@pytest.mark.django_db
def test_opening_a_buttons_address_gets_a_page_that_says_so_and_json_callers_get_json(client: Client) -> None:
    """A GET on a POST-only address (a submit URL opened from history) got Chromium's bare "HTTP ERROR 405"."""
    page = client.get("/accounts/logout/", HTTP_ACCEPT=BROWSER_ACCEPT)
    text = page.content.decode()
    assert page.status_code == 405 and page["Allow"] == "POST, OPTIONS"
    assert "Method Not Allowed" in text and "a button&#x27;s action, not a page" in text and "css/site.css" in text
    assert "Back to the challenges" in text
    fetched = client.put("/accounts/logout/", HTTP_ACCEPT="application/json")
    assert fetched.status_code == 405 and fetched["Allow"] == "POST, OPTIONS"
    assert fetched.json() == {"error": "This address does not take PUT requests; it takes POST, OPTIONS.", "allowed": ["POST", "OPTIONS"]}
    submit = client.get("/challenges/add-two/submit", HTTP_ACCEPT=BROWSER_ACCEPT)  # a function view's require_POST
    assert submit.status_code == 405 and "action, not a page" in submit.content.decode()
