"""Admin for validation runs: what operators look at when a coach says "Validate never finished".

Read-only: a run is written by web.authoring.services only (requested,
claimed by the worker, finished or failed).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from web.authoring.models import ValidationRun


@admin.register(ValidationRun)
class ValidationRunAdmin(admin.ModelAdmin):
    list_display = ("id", "version", "requested_by", "status", "ok", "created_at", "finished_at")
    list_filter = ("status", "ok")
    search_fields = ("version__challenge__slug", "requested_by__username")
    list_select_related = ("version__challenge", "requested_by")
    date_hierarchy = "created_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
