"""Admin for submissions and hint reveals (inspection, not editing of results)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from web.submissions.models import HintReveal, Submission


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ("id", "user", "challenge", "kind", "status", "verdict", "score", "attempts", "created_at")
    list_filter = ("status", "kind", "verdict", "challenge__track")
    search_fields = ("user__username", "challenge__slug")
    list_select_related = ("user", "challenge")
    date_hierarchy = "created_at"

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
