"""Read a candidate's code from a request: what the Run/Submit endpoints of every page share.

The challenge page's endpoints (web.submissions.views) and the mock
interview's (web.interviews.views) accept the code the same three ways, so
that a page, curl and a script all work and a bad body gets the same message.
"""

from __future__ import annotations

import json

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest

from grader.grade import MAX_CODE_BYTES
from web.errors import Refused

_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


class BadRequestBody(Refused):
    """The body is not what the endpoint takes; the message says what to send."""


def code_from_request(request: HttpRequest) -> str | bytes:
    """The submitted code, as sent: the raw body (the page, curl), a form field, or JSON.

    The page sends the raw body so that its bytes reach the service as they
    are, and a non-UTF-8 file is reported as such instead of being decoded
    with replacement characters. A body over Django's
    DATA_UPLOAD_MAX_MEMORY_SIZE is a BadRequestBody too, naming the code limit.
    """
    try:
        return _code(request)
    except RequestDataTooBig:
        raise BadRequestBody(f"Your code is far too large; the limit is {MAX_CODE_BYTES // 1024} KiB.") from None


def _code(request: HttpRequest) -> str | bytes:
    content_type = request.content_type or ""
    if content_type in _FORM_TYPES:
        return request.POST.get("code", "")
    if content_type == "application/json":
        try:
            data = json.loads(request.body)
        except ValueError:
            raise BadRequestBody("The request body is not valid JSON.") from None
        if not isinstance(data, dict) or not isinstance(data.get("code", ""), str):
            raise BadRequestBody('Send {"code": "..."}.')
        return str(data.get("code", ""))
    return request.body
