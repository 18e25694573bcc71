"""Coach pages: the grading dashboard (web.coach.selectors) and regrading submissions (web.submissions.services.regrade).

For coaches (web.accounts.roles: the coach group, or staff): anonymous
visitors are sent to the login page, logged-in candidates get 403.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from web.accounts.roles import coach_required
from web.coach.forms import RegradeForm
from web.coach.selectors import grading_health
from web.submissions.services.regrade import submissions_for_regrade, submissions_regrade

#: Rows the regrade preview lists (it counts them all).
PREVIEW_ROWS = 50
# A preview row shows who, what, which version and how it went: not the code, the result or the package.
PREVIEW_DEFERRED = ("code", "probes", "hints", "categories", "timings", "version__files")


@require_GET
@coach_required
def grading_dashboard(request: HttpRequest) -> HttpResponse:
    return render(request, "coach/grading.html", {"health": grading_health()})


@require_http_methods(["GET", "POST"])
@coach_required
def regrade(request: HttpRequest) -> HttpResponse:
    """Choose finished submissions, see which match (Preview), then grade them again (Regrade).

    A GET with criteria previews them too, so the dashboard can link here
    with a failure's number filled in.
    """
    data = request.POST if request.method == "POST" else (request.GET if request.GET else None)
    form = RegradeForm(data)
    matches = None
    if data is not None and form.is_valid():
        rows = submissions_for_regrade(
            ids=form.cleaned_data["ids"], version=form.cleaned_data["version"], since=form.cleaned_data["since"], by=request.user
        )
        if request.method == "POST" and "regrade" in request.POST:
            regraded = submissions_regrade(rows, on_current_version=form.cleaned_data["on_current_version"])
            shown = ", ".join(f"#{pk}" for pk in regraded[:20]) + (" ..." if len(regraded) > 20 else "")
            messages.success(request, f"Regrading {len(regraded)} submission(s){': ' + shown if regraded else ''}.")
            return redirect("coach-grading")
        count = rows.count()
        matches = {"count": count, "rows": list(rows.select_related("challenge", "user", "version").defer(*PREVIEW_DEFERRED)[:PREVIEW_ROWS])}
    return render(request, "coach/regrade.html", {"form": form, "matches": matches, "preview_rows": PREVIEW_ROWS})
