"""The web's errors, and the one table that turns every application error into an HTTP answer.

The tree's root is ``sandbox.errors.AppError`` (the bottom layer, so that the
grader and the sandboxes share it); the grader's errors and the sandbox's
start failure are in it, and the web adds the refusals of a request::

    AppError
    +-- SandboxStartError       503, a fixed sentence (the cause is logged, not shown)
    +-- GraderError             500, a fixed sentence
    |   +-- InvalidSubmission   400, its message
    |   +-- PackageError        500, a fixed sentence (it names hidden files)
    |   +-- PlatformError       503, a fixed sentence
    |   |   +-- HostLoadError   503, the same (the host's load decided the run)
    |   +-- GradingCancelled    409, a fixed sentence (the candidate's Cancel; the worker stores it, no view sees it)
    +-- Refused                 400  the request is refused; its message says why
        +-- LoginRequired       401  (the body names the login page)
        +-- Forbidden           403
        +-- NotFound            404
        +-- Conflict            409  not in a state that allows it (a regrade, a hint, a locked interview)
        +-- MethodNotAllowed    405  a GET on a button's address, say (Allow kept)
        +-- LimitReached        429  too much pending at once
            +-- Throttled       429  too often; the body and Retry-After say how long to wait

Each app's own refusals subclass one of these (``SubmissionRejected``,
``RateLimitExceeded(SubmissionRejected, Throttled)``, ``InterviewLocked``,
the login throttle's ``LoginBlocked``, ...): the status comes from the first class of an error's MRO that the table
knows, so no view decides a status for an application error. A database
that is locked or unreachable (``django.db.OperationalError``) is answered
here too: 503 with Retry-After, because nothing was saved and trying again
shortly is the fix.

Where it is used: ``ErrorMiddleware`` (last in MIDDLEWARE, so its
``process_exception`` sees a view's exception first) answers for the pages
and their JSON endpoints, and the API's DRF exception handler
(``web/api/errors.py``) answers for the API, both through
:func:`error_answer`. The body is ``{"error": message, ...}``; a browser that
asked for HTML gets a short page with the same sentence. Views raise; they do
not build error responses. A page that shows a refusal inside its own form
(login, sign-up) takes the status and headers with :func:`answered_as`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from django.db import OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

from grader.errors import GraderError, GradingCancelled, InvalidSubmission, PackageError, PlatformError
from sandbox.errors import AppError, SandboxStartError

logger = logging.getLogger(__name__)


class Refused(AppError):
    """A request refused; the message is for the person who made it. ``fields`` join the answer's body."""

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.fields = fields


class LoginRequired(Refused):
    """Nobody is logged in, and this needs someone."""


class Forbidden(Refused):
    """Logged in, but not allowed to do this."""


class NotFound(Refused):
    """No such thing, or not one the caller may see (the two are the same answer)."""


class Conflict(Refused):
    """The thing exists but its state does not allow this now."""


class MethodNotAllowed(Refused):
    """The address does not take this method (``allowed`` lists the ones it takes): Django's bare 405, in words."""


class LimitReached(Refused):
    """A limit on what one person may have at once (pending gradings)."""


class Throttled(LimitReached):
    """Too many requests in a window; ``retry_after`` is how many seconds until one more is allowed."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


PLATFORM_MESSAGE = "Grading is not available right now (a problem on our side, not in your code). Try again in a minute."
PACKAGE_MESSAGE = "This challenge cannot be graded right now: its package is broken (a problem on our side, not in your code)."
SERVER_MESSAGE = "Something went wrong on our side; it has been logged."
CANCELLED_MESSAGE = "The grading was cancelled before it finished."
BUSY_MESSAGE = "The site is busy and could not save or read that just now; nothing was saved. Try again in a few seconds."
BUSY_RETRY_AFTER_SECONDS = 5


@dataclass(frozen=True)
class _Rule:
    status: int
    # A fixed sentence instead of the exception's message: for failures on our
    # side, whose messages name hidden files, hosts or engines.
    message: str | None = None
    retry_after: int | None = None


# The one table. An error's answer is the rule of the first class in its MRO found here.
_RULES: dict[type[BaseException], _Rule] = {
    Refused: _Rule(400),
    LoginRequired: _Rule(401),
    Forbidden: _Rule(403),
    NotFound: _Rule(404),
    Conflict: _Rule(409),
    MethodNotAllowed: _Rule(405),
    LimitReached: _Rule(429),
    InvalidSubmission: _Rule(400),
    PackageError: _Rule(500, PACKAGE_MESSAGE),
    PlatformError: _Rule(503, PLATFORM_MESSAGE),
    GradingCancelled: _Rule(409, CANCELLED_MESSAGE),
    SandboxStartError: _Rule(503, PLATFORM_MESSAGE),
    GraderError: _Rule(500, SERVER_MESSAGE),
    AppError: _Rule(500, SERVER_MESSAGE),
    OperationalError: _Rule(503, BUSY_MESSAGE, BUSY_RETRY_AFTER_SECONDS),
}


@dataclass(frozen=True)
class ErrorAnswer:
    """What to answer for an error: the status, the JSON body, the headers."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def message(self) -> str:
        return str(self.body["error"])


def _rule(exc: BaseException) -> _Rule | None:
    return next((_RULES[cls] for cls in type(exc).__mro__ if cls in _RULES), None)


def error_answer(exc: BaseException) -> ErrorAnswer | None:
    """The HTTP answer to ``exc``, or None if it is not one of ours (a bug: the server's 500)."""
    rule = _rule(exc)
    if rule is None:
        return None
    body: dict[str, Any] = {"error": rule.message or str(exc)}
    if isinstance(exc, Refused):
        body.update(exc.fields)
    retry_after = exc.retry_after if isinstance(exc, Throttled) else rule.retry_after
    headers: dict[str, str] = {}
    if retry_after is not None:
        body["retry_after"] = retry_after
        headers["Retry-After"] = str(retry_after)
    if isinstance(exc, OperationalError):
        logger.warning("database busy or unreachable: %s", exc, extra={"event": "db.busy"})
    elif rule.status >= 500:
        # The person sees a fixed sentence; the operator needs the real one.
        logger.error("%s answered %s: %s", type(exc).__name__, rule.status, exc, exc_info=exc, extra={"event": "web.app_error"})
    return ErrorAnswer(rule.status, body, headers)


def wants_html(request: HttpRequest) -> bool:
    """Whether the caller asked for a page: a browser's navigation or form post, never the API or a fetch for JSON."""
    accept = request.headers.get("Accept", "")
    return "text/html" in accept and "application/json" not in accept and not request.path.startswith("/api/")


def error_response(request: HttpRequest, exc: BaseException) -> HttpResponse | None:
    """:func:`error_answer` as a Django response: JSON, or a short page for a browser that asked for HTML."""
    answer = error_answer(exc)
    if answer is None:
        return None
    response: HttpResponse
    if wants_html(request):
        # A page of its own (not base.html): its context processors would query a database that may be the problem.
        context = {"title": HTTPStatus(answer.status).phrase, "message": answer.message}
        response = HttpResponse(render_to_string("error.html", context), status=answer.status)
    else:
        response = JsonResponse(answer.body, status=answer.status)
    for name, value in answer.headers.items():
        response[name] = value
    return response


def answered_as(response: HttpResponse, exc: AppError) -> HttpResponse:
    """``response`` (a page that shows the refusal its own way: a form with the message) with ``exc``'s status and headers."""
    answer = error_answer(exc)
    assert answer is not None  # every AppError has a rule
    response.status_code = answer.status
    for name, value in answer.headers.items():
        response[name] = value
    return response


def method_not_allowed(request: HttpRequest, refused: HttpResponse) -> HttpResponse:
    """Django's bare 405 (``require_POST`` and its kin answer with no body) in words, as a page or JSON; Allow kept.

    The usual case is a browser opening the address of a button (a submit, a
    logout) by hand or from history: the page says so and leads back.
    """
    allowed = refused.get("Allow", "")
    methods = [m.strip() for m in allowed.split(",") if m.strip()]
    if request.method == "GET" and "POST" in methods:
        message = "This address is a button's action, not a page: go back to the page and use its button."
    else:
        message = f"This address does not take {request.method} requests; it takes {allowed or 'none'}."
    response = error_response(request, MethodNotAllowed(message, allowed=methods))
    assert response is not None  # the table has its rule
    if allowed:
        response["Allow"] = allowed
    return response


class ErrorMiddleware:
    """Answers an application error (or a busy database) that a page or JSON endpoint raised."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code == HTTPStatus.METHOD_NOT_ALLOWED and not response.content:
            return method_not_allowed(request, response)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        return error_response(request, exception)  # None: a real bug, Django's 500 and its log
