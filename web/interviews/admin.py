"""Admin for mock interviews: operators can find one (by coach or candidate) and see its state.

Read-only, and without the interviewer's notes, rubric or the private link's
token: those belong to the coach's pages (web.interviews.views); the admin
is for support ("the candidate says the link does not work"), not for
reading assessments.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils import timezone

from web.interviews.models import Interview, State


@admin.register(Interview)
class InterviewAdmin(admin.ModelAdmin):
    list_display = ("id", "coach", "candidate", "duration_minutes", "state_now", "created_at", "started_at", "ended_at")
    search_fields = ("coach__username", "candidate__username")
    list_select_related = ("coach", "candidate")
    date_hierarchy = "created_at"
    fields = ("coach", "candidate", "duration_minutes", "hint_policy", "hint_penalty", "hidden_feedback", "created_at", "started_at", "ended_at")

    @admin.display(description="state")
    def state_now(self, obj: Interview) -> str:
        return str(State(obj.state(timezone.now())).label)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
