"""The API's error shape: ``{"error": "one sentence naming the problem"}``, like the page's JSON endpoints.

Application errors (a refused submission, a missing submission, a rate
limit, a platform failure, a busy database) get their status and body from
``web.errors.error_answer``, the same table the pages use. DRF's own errors
(bad JSON, a field missing, no credentials, a bad token) come as
``{"detail": ...}`` or ``{"field": [messages]}``; this handler turns them into
one message that names the field, so a script or the CLI can print it as it is.
"""

from __future__ import annotations

from typing import Any

from rest_framework.response import Response
from rest_framework.views import exception_handler

from web.errors import error_answer


def _flatten(data: Any, prefix: str = "") -> list[str]:
    if isinstance(data, dict):
        if set(data) == {"detail"}:
            return _flatten(data["detail"], prefix)
        return [m for key, value in data.items() for m in _flatten(value, f"{key}: " if key != "non_field_errors" else "")]
    if isinstance(data, list):
        return [m for item in data for m in _flatten(item, prefix)]
    return [f"{prefix}{data}"]


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    answer = error_answer(exc)
    if answer is not None:
        return Response(answer.body, status=answer.status, headers=answer.headers or None)
    response = exception_handler(exc, context)
    if response is not None:
        response.data = {"error": " ".join(_flatten(response.data)) or "The request was refused."}
    return response
