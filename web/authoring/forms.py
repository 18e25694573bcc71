"""The authoring form: the structured fields of a package, to and from a Draft.

The form checks types and shapes (numbers are numbers, a slug is a slug) and
says which field is wrong; whether the result is a valid package is the
grader's decision (services._load), made on the files the Draft becomes.
Hints are rows of repeated fields (hint_id, hint_tier, hint_tags, hint_text)
so the page can add rows without a formset's bookkeeping.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

from django import forms
from django.http import QueryDict

from grader.package import DIFFICULTIES, ENTRY_RE, RUNTIMES, SLUG_RE
from web.authoring.draft import Draft, HintRow

MAX_FIELD_CHARS = 512 * 1024


def _lines(text: str) -> str:
    # Browsers send a textarea's line breaks as CRLF; packages use LF.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _csv(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


class CodeField(forms.CharField):
    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("strip", False)
        kwargs.setdefault("max_length", MAX_FIELD_CHARS)
        kwargs.setdefault("widget", forms.Textarea(attrs={"spellcheck": "false", "rows": 14}))
        super().__init__(**kwargs)

    def clean(self, value: Any) -> str:
        return _lines(super().clean(value) or "")


class ChallengeForm(forms.Form):
    slug = forms.CharField(max_length=100, help_text="lowercase words joined by '-'; the URL; cannot change later")
    title = forms.CharField(max_length=200)
    track = forms.CharField(max_length=100, help_text="an existing track or a new one (lowercase words joined by '-')")
    difficulty = forms.ChoiceField(choices=[(d, d) for d in DIFFICULTIES])
    tags = forms.CharField(required=False, max_length=500, help_text="comma-separated")
    summary = forms.CharField(max_length=500, help_text="one sentence for the catalogue")
    runtime = forms.ChoiceField(choices=[(r, r) for r in RUNTIMES], help_text="the sandbox profile the probes run in")
    entry = forms.CharField(max_length=100, initial="solution.py", help_text="the file the candidate edits")
    probe_seconds = forms.FloatField(min_value=0.1, max_value=600, help_text="each probe's time limit (s)")
    wall_seconds = forms.FloatField(min_value=1, max_value=1800, help_text="the whole run, sandbox start included (s)")
    memory_mb = forms.IntegerField(min_value=64, max_value=16384, help_text="the sandbox's memory (MB)")
    warm = forms.CharField(required=False, widget=forms.HiddenInput)
    statement = CodeField(widget=forms.Textarea(attrs={"rows": 16}))
    starter = CodeField()
    reference = CodeField()
    public_probes = CodeField()
    hidden_probes = CodeField()
    common_probes = CodeField()

    def clean_slug(self) -> str:
        return self._slug("slug")

    def clean_track(self) -> str:
        return self._slug("track")

    def _slug(self, name: str) -> str:
        value = str(self.cleaned_data[name]).strip()
        if not SLUG_RE.match(value):
            raise forms.ValidationError("Use lowercase letters and digits in words joined by '-', e.g. fused-softmax.")
        return value

    def clean_entry(self) -> str:
        value = str(self.cleaned_data["entry"]).strip()
        if not ENTRY_RE.match(value):
            raise forms.ValidationError("A Python file name such as solution.py.")
        return value


@dataclass
class HintInput:
    """One hint row as typed (strings), so a refused save shows it back unchanged."""

    id: str = ""
    tier: str = "1"
    tags: str = ""
    text: str = ""

    @property
    def blank(self) -> bool:
        return not (self.id.strip() or self.tags.strip() or self.text.strip())


def hint_inputs_from_post(data: QueryDict) -> list[HintInput]:
    rows = zip_longest(data.getlist("hint_id"), data.getlist("hint_tier"), data.getlist("hint_tags"), data.getlist("hint_text"), fillvalue="")
    inputs = [HintInput(i, t or "1", g, _lines(x)) for i, t, g, x in rows]
    return [row for row in inputs if not row.blank]


def hint_inputs_from_draft(draft: Draft) -> list[HintInput]:
    return [HintInput(h.id, str(h.tier), ", ".join(h.tags), h.text) for h in draft.hints]


def hints_clean(inputs: list[HintInput]) -> tuple[tuple[HintRow, ...], list[str]]:
    """The hint rows, or the errors naming each bad row."""
    hints, errors = [], []
    for n, row in enumerate(inputs, start=1):
        if row.tier.strip() not in ("1", "2", "3"):
            errors.append(f"Hint {n}: tier must be 1, 2 or 3 (got '{row.tier}').")
            continue
        if not row.id.strip():
            errors.append(f"Hint {n}: give it an id.")
            continue
        hints.append(HintRow(row.id.strip(), int(row.tier), _csv(row.tags), row.text))
    return tuple(hints), errors


def form_initial(draft: Draft) -> dict[str, Any]:
    return {
        "slug": draft.slug, "title": draft.title, "track": draft.track, "difficulty": draft.difficulty,
        "tags": ", ".join(draft.tags), "summary": draft.summary, "runtime": draft.runtime, "entry": draft.entry,
        "probe_seconds": draft.probe_seconds, "wall_seconds": draft.wall_seconds, "memory_mb": draft.memory_mb,
        "warm": ", ".join(draft.warm), "statement": draft.statement, "starter": draft.starter,
        "reference": draft.reference, "public_probes": draft.public_probes, "hidden_probes": draft.hidden_probes,
        "common_probes": draft.common_probes,
    }  # fmt: skip


def draft_from_form(cleaned: dict[str, Any], hints: tuple[HintRow, ...]) -> Draft:
    return Draft(
        slug=cleaned["slug"], title=cleaned["title"].strip(), track=cleaned["track"], difficulty=cleaned["difficulty"],
        tags=_csv(cleaned["tags"]), summary=cleaned["summary"].strip(), runtime=cleaned["runtime"], entry=cleaned["entry"],
        probe_seconds=cleaned["probe_seconds"], wall_seconds=cleaned["wall_seconds"], memory_mb=cleaned["memory_mb"],
        statement=cleaned["statement"], starter=cleaned["starter"], reference=cleaned["reference"],
        public_probes=cleaned["public_probes"], hidden_probes=cleaned["hidden_probes"],
        common_probes=cleaned["common_probes"], hints=hints, warm=_csv(cleaned.get("warm") or ""),
    )  # fmt: skip


class ImportForm(forms.Form):
    package = forms.FileField(help_text="a .zip of a package folder (challenge.toml at its top or in one folder)")
