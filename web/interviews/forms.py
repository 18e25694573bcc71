"""The coach's form to set up a mock interview: candidate, challenges in order, duration.

The form only parses (challenge slugs to Challenge rows, in the order given);
``services.interview_create`` decides what is allowed, and its refusals are
shown on the form.
"""

from __future__ import annotations

import re

from django import forms

from web.challenges.models import Challenge
from web.interviews.services import DURATION_DEFAULT_MINUTES, DURATION_MAX_MINUTES, DURATION_MIN_MINUTES


class InterviewCreateForm(forms.Form):
    candidate = forms.CharField(max_length=150, help_text="The candidate's username; they must have an account.")
    challenges = forms.CharField(
        max_length=2000,
        help_text="Challenge slugs in the order the candidate should see them, separated by commas or spaces.",
    )
    duration_minutes = forms.IntegerField(
        min_value=DURATION_MIN_MINUTES, max_value=DURATION_MAX_MINUTES, initial=DURATION_DEFAULT_MINUTES, label="Duration (minutes)"
    )

    def clean_challenges(self) -> list[Challenge]:
        slugs = [s for s in re.split(r"[\s,]+", self.cleaned_data["challenges"]) if s]
        if not slugs:
            raise forms.ValidationError("Name at least one challenge.")
        found = {c.slug: c for c in Challenge.objects.filter(slug__in=slugs, published=True, current_version__isnull=False)}
        unknown = [s for s in slugs if s not in found]
        if unknown:
            raise forms.ValidationError(f"No published challenge: {', '.join(unknown)}.")
        return [found[s] for s in slugs]
