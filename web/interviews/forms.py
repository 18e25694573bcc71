"""The coach's forms: a new mock interview, and an interview template (the question bank).

Both share the session settings (hint policy, penalty per hint, hidden-probe
detail) and the challenge picker. The picker is plain HTML that works
without JavaScript: a checkbox per published challenge (``challenges``), and
beside each an optional position (``position-<slug>``: the order the
candidate sees them in; blank ones follow, in catalogue order) and minutes
(``minutes-<slug>``). interview-create.js adds filters and a "chosen, in
order" list on top, and writes the same fields.

The forms only parse; ``services.interview_validate`` and
``bank.template_save`` decide what is allowed, and report every refusal at
once, by field, for the view to show beside each.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import forms

from web.challenges.models import Challenge
from web.interviews.models import HINT_PENALTY_DEFAULT, HiddenFeedback, HintPolicy
from web.interviews.services import DURATION_DEFAULT_MINUTES, DURATION_MAX_MINUTES, DURATION_MIN_MINUTES, ChallengePlan


def _int(value: Any) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


class SessionForm(forms.Form):
    """The session settings and the picked challenges, shared by the interview and the template forms."""

    challenges = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)
    hint_policy = forms.ChoiceField(
        required=False, choices=HintPolicy.choices, initial=HintPolicy.ON_REQUEST, widget=forms.RadioSelect, label="Hints",
    )  # fmt: skip
    hint_penalty = forms.IntegerField(
        required=False, initial=HINT_PENALTY_DEFAULT, label="Points off per hint",
        help_text="With “each hint costs points”: taken off the challenge's best score for every hint revealed.",
    )  # fmt: skip
    hidden_feedback = forms.ChoiceField(
        required=False, choices=HiddenFeedback.choices, initial=HiddenFeedback.SUMMARY, widget=forms.RadioSelect,
        label="Hidden tests, as the candidate sees them",
    )  # fmt: skip

    def __init__(self, *args: Any, catalogue: Iterable[Challenge], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.catalogue = {c.slug: c for c in catalogue}
        self.fields["challenges"].choices = [(slug, c.title) for slug, c in self.catalogue.items()]
        self.fields["challenges"].error_messages["invalid_choice"] = "No published challenge: %(value)s."

    def plans(self) -> list[ChallengePlan]:
        """The picked challenges in the order chosen (positions first, then the rest in catalogue order), with their minutes."""
        slugs = (self.cleaned_data.get("challenges") if hasattr(self, "cleaned_data") else None) or []
        rows = []
        for index, slug in enumerate(slugs):
            position = _int(self.data.get(f"position-{slug}"))
            plan = ChallengePlan(self.catalogue[slug], _int(self.data.get(f"minutes-{slug}")))
            rows.append((position if position is not None else 10_000 + index, index, plan))
        return [plan for _, _, plan in sorted(rows, key=lambda row: (row[0], row[1]))]

    def settings(self) -> dict[str, Any]:
        data = getattr(self, "cleaned_data", {})
        return {
            # Left out (a script's POST): the defaults, as the form's initial choice.
            "hint_policy": data.get("hint_policy") or HintPolicy.ON_REQUEST,
            "hint_penalty": data.get("hint_penalty"),
            "hidden_feedback": data.get("hidden_feedback") or HiddenFeedback.SUMMARY,
        }

    def add_refusals(self, errors: dict[str | None, list[str]]) -> None:
        """The service's refusals, by field; a field that failed to parse keeps its own message only."""
        for name, messages in errors.items():
            if name is not None and name in self.errors:
                continue
            for message in messages:
                self.add_error(name if name in self.fields else None, message)


class InterviewCreateForm(SessionForm):
    candidate = forms.CharField(required=False, max_length=150, help_text="The candidate's username; they must have an account.")
    duration_minutes = forms.IntegerField(
        required=False, initial=DURATION_DEFAULT_MINUTES, label="Duration (minutes)",
        help_text=f"{DURATION_MIN_MINUTES} to {DURATION_MAX_MINUTES}. From a template: the sum of its minutes, unless you change it.",
    )  # fmt: skip
    template = forms.IntegerField(required=False, widget=forms.HiddenInput)


class TemplateForm(SessionForm):
    name = forms.CharField(required=False, max_length=200, help_text="For you: e.g. “Autograd, 60 min”.")
