"""Admin for submissions and hint reveals: inspection, and regrading (never editing of results).

Regrade actions call the same service as ``manage.py regrade_submissions``:
select submissions (filter by date for "everything since a time") and
"Regrade selected submissions"; or, on challenge versions, regrade all that
were graded on a version (web/challenges/admin.py).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from web.submissions.models import HintReveal, Submission
from web.submissions.services.regrade import submissions_for_regrade, submissions_regrade


def report_regrade(modeladmin: admin.ModelAdmin, request: HttpRequest, regraded: list[int], selected: int) -> None:
    skipped = selected - len(regraded)
    note = f" ({skipped} not finished yet, left alone)" if skipped > 0 else ""
    modeladmin.message_user(request, f"Regrading {len(regraded)} submission(s){note}.", messages.SUCCESS if regraded else messages.WARNING)


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ("id", "user", "challenge", "kind", "status", "verdict", "score", "attempts", "created_at")
    list_filter = ("status", "kind", "verdict", "challenge__track")
    search_fields = ("user__username", "challenge__slug")
    list_select_related = ("user", "challenge")
    date_hierarchy = "created_at"
    actions = ["regrade_selected"]

    @admin.action(description="Regrade selected submissions (same code, same version)")
    def regrade_selected(self, request: HttpRequest, queryset: QuerySet[Submission]) -> None:
        ids = list(queryset.values_list("pk", flat=True))
        regraded = submissions_regrade(submissions_for_regrade(ids=ids))
        report_regrade(self, request, regraded, len(ids))

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(HintReveal)
class HintRevealAdmin(admin.ModelAdmin):
    list_display = ("user", "challenge", "hint_id", "tier", "submission", "revealed_at")
    list_filter = ("tier", "challenge")
    search_fields = ("user__username", "challenge__slug", "hint_id")
    list_select_related = ("user", "challenge")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
