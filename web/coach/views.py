"""The coach dashboard page: the grading queue and the last hour of grading, from web.coach.selectors.

For coaches (web.accounts.roles: the coach group, or staff): anonymous
visitors are sent to the login page, logged-in candidates get 403.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from web.accounts.roles import coach_required
from web.coach.selectors import grading_health


@require_GET
@coach_required
def grading_dashboard(request: HttpRequest) -> HttpResponse:
    return render(request, "coach/grading.html", {"health": grading_health()})
