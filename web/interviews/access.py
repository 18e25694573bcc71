"""Who may reach an interview's views, and how a JSON view reads its body: what views.py and replay_views.py share.

Place in the flow: every interview view starts here. ``coach_interview`` and
``candidate_interview`` answer the tree's NotFound (a JSON 404 for a JSON
endpoint, the styled page otherwise: web/errors.py) to anyone the selectors
do not let in, the same answer as for an interview that does not exist.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from web.errors import LoginRequired, NotFound, Refused
from web.interviews import selectors
from web.interviews.models import Interview


def json_login(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """``login_required`` for a JSON endpoint: a JSON 401 naming the login page instead of a redirect."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            raise LoginRequired("Log in first.", login_url=reverse("login"))
        return view(request, *args, **kwargs)

    return wrapper


def coach_interview(request: HttpRequest, interview_id: int) -> Interview:
    """The interview if the requester is its coach; NotFound for anyone else."""
    interview = selectors.interview_get_for_coach(interview_id, request.user)
    if interview is None:
        raise NotFound("No such interview.")
    return interview


def candidate_interview(request: HttpRequest, token: str) -> Interview:
    """The interview if the requester is its candidate (with its token); NotFound for anyone else."""
    interview = selectors.interview_get_for_candidate(token, request.user)
    if interview is None:
        raise NotFound("No such interview.")
    return interview


def json_object(request: HttpRequest, allowed: Collection[str] | None = None) -> dict[str, Any]:
    """The request's JSON object body (empty: {}); Refused, naming the problem, for anything else or, when
    ``allowed`` is given, for a key outside it."""
    try:
        data = json.loads(request.body or b"{}")
    except ValueError:
        raise Refused("The request body is not valid JSON.") from None
    if not isinstance(data, dict):
        raise Refused("Send a JSON object." if allowed is None else f"Send a JSON object with any of {', '.join(sorted(allowed))}.")
    if allowed is not None and set(data) - set(allowed):
        raise Refused(f"Send a JSON object with any of {', '.join(sorted(allowed))}.")
    return data
