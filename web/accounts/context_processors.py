"""Template context for roles: ``is_coach`` (web.accounts.roles), so the menu shows coach pages to coaches."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest

from web.accounts.roles import is_coach


def roles(request: HttpRequest) -> dict[str, Callable[[], bool]]:
    # A callable: the template calls it only where it is used, so pages that
    # never ask cost no group query.
    return {"is_coach": lambda: is_coach(request.user)}
