"""Turn a database that is busy or unreachable into a 503 that says so, instead of a bare 500.

Under load SQLite can stay locked longer than its timeout (a long write by
the worker, a backup), and a PostgreSQL server can restart. The request's
transaction has rolled back by the time the exception reaches here, so
nothing was half-saved; what the person needs to know is that nothing was
saved and that trying again shortly is the fix. JSON callers (the page's
fetches, the API, the CLI) get ``{"error": ...}`` with Retry-After, like
every other refusal; pages get a short HTML page.

It is the last entry in MIDDLEWARE, so its ``process_exception`` is the
first to see an exception a view (page, JSON endpoint or API) raised.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
MESSAGE = "The site is busy and could not save or read that just now; nothing was saved. Try again in a few seconds."


def _wants_json(request: HttpRequest) -> bool:
    accept = request.headers.get("Accept", "")
    return request.path.startswith("/api/") or request.path.endswith(".json") or "application/json" in accept


class DatabaseBusyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError):
            return None  # everything else is a real bug: Django's 500 and its log
        logger.warning("database busy or unreachable: %s", exception, extra={"event": "db.busy", "path": request.path})
        if _wants_json(request):
            response: HttpResponse = JsonResponse({"error": MESSAGE}, status=503)
        else:
            response = HttpResponse(render_to_string("503.html", {"message": MESSAGE}), status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
