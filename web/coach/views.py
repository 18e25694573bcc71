"""The coach dashboard page: the grading queue and the last hour of grading, from web.coach.selectors.

Staff-only for now (a coach role comes with issue #5): anonymous visitors are
sent to the login page, logged-in candidates get 403.
"""

from __future__ import annotations

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from web.coach.selectors import grading_health


@require_GET
def grading_dashboard(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if not request.user.is_staff:
        raise PermissionDenied("Coaches only.")
    return render(request, "coach/grading.html", {"health": grading_health()})
