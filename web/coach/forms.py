"""The coach's regrade form: which finished submissions to grade again, parsed into the service's criteria.

The same three criteria as ``manage.py regrade_submissions`` (ids, the
challenge version they were graded on, created since a time), combined with
AND; at least one is required so that a stray click cannot regrade the whole
table. Errors name the field and the problem.
"""

from __future__ import annotations

import re
from typing import Any

from django import forms

from web.challenges.models import ChallengeVersion

MAX_IDS = 500


class RegradeForm(forms.Form):
    ids = forms.CharField(
        required=False, label="Submission numbers", help_text="Separated by spaces or commas.", widget=forms.TextInput(attrs={"size": 40})
    )
    version = forms.ModelChoiceField(
        queryset=ChallengeVersion.objects.select_related("challenge").defer("files").order_by("challenge__slug", "-created_at"),
        required=False,
        label="Graded on version",
    )
    since = forms.DateTimeField(
        required=False, label="Created at or after", help_text="Server time, e.g. 2026-11-30 09:00.", widget=forms.TextInput(attrs={"size": 20})
    )
    on_current_version = forms.BooleanField(
        required=False, label="Grade on the challenge's current version (a fixed package) instead of the version each had"
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["version"].label_from_instance = lambda v: (
            f"{v.challenge.slug}@{v.short_version}" + (" (current)" if v.challenge.current_version_id == v.pk else "")
        )

    def clean_ids(self) -> list[int] | None:
        text = self.cleaned_data["ids"].strip()
        if not text:
            return None
        parts = [p for p in re.split(r"[\s,]+", text) if p]
        bad = [p.lstrip("#") for p in parts if not p.lstrip("#").isdigit()]
        if bad:
            raise forms.ValidationError(f"Not a submission number: {', '.join(bad[:5])}.")
        if len(parts) > MAX_IDS:
            raise forms.ValidationError(f"At most {MAX_IDS} numbers at once; use a version or a time for more.")
        return sorted({int(p.lstrip("#")) for p in parts})

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not self.errors and data.get("ids") is None and data.get("version") is None and data.get("since") is None:
            raise forms.ValidationError("Name what to regrade: submission numbers, a version or a time.")
        return data
