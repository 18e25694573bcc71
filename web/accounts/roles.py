"""Roles: who is a candidate and who is a coach; the one place that decides it.

Everyone who signs up is a candidate. A coach is a user in the Django group
``coach`` (granted in the admin's user page, or with ``manage.py grant_coach
USERNAME [--revoke]``); staff count as coaches too, so the operators who ran
the coach pages before the role existed keep them. A group rather than a
profile flag: it needs no new table, the admin already edits it, and Django's
permissions can later be attached to it when coaches author challenges.

Views use ``coach_required``; the JSON API uses ``IsCoach``. Both ask
``is_coach``, so the rule cannot drift between the pages and the API.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from rest_framework.permissions import BasePermission

COACH_GROUP = "coach"


def is_coach(user: AbstractBaseUser | AnonymousUser | None) -> bool:
    """True for an active user in the coach group, or staff."""
    if user is None or not user.is_authenticated or not getattr(user, "is_active", False):
        return False
    if getattr(user, "is_staff", False):
        return True
    # Asked by the menu and by views in one request: remembered on the user object (a request loads its own),
    # forgotten by coach_grant and coach_revoke.
    cached = getattr(user, _IS_COACH_ATTR, None)
    if cached is None:
        groups = getattr(user, "groups", None)
        cached = bool(groups is not None and groups.filter(name=COACH_GROUP).exists())
        setattr(user, _IS_COACH_ATTR, cached)
    return bool(cached)


_IS_COACH_ATTR = "_mlprep_is_coach"


def coach_group() -> Group:
    group, _ = Group.objects.get_or_create(name=COACH_GROUP)
    return group


def coach_grant(user: AbstractBaseUser) -> None:
    user.groups.add(coach_group())  # type: ignore[attr-defined]
    user.__dict__.pop(_IS_COACH_ATTR, None)


def coach_revoke(user: AbstractBaseUser) -> None:
    user.groups.remove(coach_group())  # type: ignore[attr-defined]
    user.__dict__.pop(_IS_COACH_ATTR, None)


# What a candidate reads on a coach's page: who may open it, and how to become one.
COACHES_ONLY = "This page is for coaches. An administrator can give your account the coach role."


def coach_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A page for coaches: anonymous visitors go to the login page, candidates get 403."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not is_coach(request.user):
            raise PermissionDenied(COACHES_ONLY)
        return view(request, *args, **kwargs)

    return wrapper


class IsCoach(BasePermission):
    """DRF permission: the caller is a coach (see ``is_coach``)."""

    message = "Coaches only."

    def has_permission(self, request: Any, view: Any) -> bool:
        return is_coach(request.user)
