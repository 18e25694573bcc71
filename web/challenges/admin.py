"""Admin for the catalogue. Versions are read-only: they are what results were graded on.

A version's submissions can be regraded from here (an action; the service is
web.submissions.services.regrade.submissions_regrade).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from web.challenges.models import Challenge, ChallengeVersion


@admin.register(Challenge)
class ChallengeAdmin(admin.ModelAdmin):
    list_display = ("slug", "title", "track", "difficulty", "source", "published", "order", "current_version", "updated_at")
    list_filter = ("source", "track", "difficulty", "published")
    list_editable = ("published", "order")
    search_fields = ("slug", "title", "summary")
    list_select_related = ("current_version__challenge",)
    # Metadata comes from the package (sync_challenges); only what the site
    # decides on its own is editable here.
    # Source, author and draft belong to web.authoring (a browser-authored package is published there).
    readonly_fields = (
        "slug", "track", "title", "difficulty", "tags", "summary", "source", "author", "draft_version", "created_at", "updated_at",
    )  # fmt: skip
    raw_id_fields = ("current_version",)


@admin.register(ChallengeVersion)
class ChallengeVersionAdmin(admin.ModelAdmin):
    list_display = ("challenge", "version", "runtime", "created_at")
    list_filter = ("runtime",)
    search_fields = ("challenge__slug", "version")
    list_select_related = ("challenge",)
    actions = ["regrade_submissions"]

    @admin.action(description="Regrade every finished submission graded on the selected versions")
    def regrade_submissions(self, request: HttpRequest, queryset: QuerySet[ChallengeVersion]) -> None:
        from web.submissions.admin import report_regrade  # the submissions app sits above the catalogue
        from web.submissions.services.regrade import submissions_for_regrade, submissions_regrade

        regraded: list[int] = []
        for version in queryset:
            regraded += submissions_regrade(submissions_for_regrade(version=version))
        report_regrade(self, request, regraded, len(regraded))

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
