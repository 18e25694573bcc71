"""The question bank: a coach's interview templates (save, delete) and what a new interview takes from one.

A template is an interview without a candidate: a name, challenges in order
with the minutes planned for each, and the session settings (hint policy and
penalty, hidden-probe detail). ``template_save`` creates or edits one,
checking every field first and refusing with all the problems at once
(``InterviewInvalid``, as the create form does); ``template_delete`` removes
one (interviews made from it keep everything they copied).
``template_initial`` is what "new interview from template" prefills: all of
it, with the duration the sum of the minutes; the coach names the candidate.
Only a template's own coach may read, use, change or delete it
(``template_get_for_coach``: anyone else gets None, the same as no template).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.db.models import Count, Prefetch, QuerySet, Sum

from web.accounts.roles import is_coach
from web.interviews.models import HINT_PENALTY_DEFAULT, HiddenFeedback, HintPolicy, InterviewTemplate, TemplateChallenge
from web.interviews.services import (
    DURATION_MAX_MINUTES,
    ChallengePlan,
    FieldErrors,
    InterviewError,
    validate_challenges,
    validate_settings,
)

NAME_MAX_CHARS = 120


def templates_for_coach(user: AbstractBaseUser) -> QuerySet[InterviewTemplate]:
    return (
        InterviewTemplate.objects.filter(coach=user)
        .annotate(challenge_count=Count("items", distinct=True), total_minutes=Sum("items__minutes"))
        .prefetch_related(Prefetch("items", queryset=TemplateChallenge.objects.select_related("challenge").order_by("position")))
        .order_by("name", "id")
    )


def template_get_for_coach(template_id: int, user: AbstractBaseUser | AnonymousUser) -> InterviewTemplate | None:
    """The template if the user owns it; else None, whatever the reason (a foreign id looks like a missing one)."""
    if not user.is_authenticated:
        return None
    return InterviewTemplate.objects.filter(pk=template_id, coach=user).first()


def template_plans(template: InterviewTemplate) -> list[ChallengePlan]:
    items = TemplateChallenge.objects.filter(template=template).select_related("challenge").order_by("position")
    return [ChallengePlan(item.challenge, item.minutes) for item in items]


def template_initial(template: InterviewTemplate) -> dict[str, Any]:
    """The create form's prefill from a template: everything but the candidate; the duration is the minutes' sum."""
    plans = template_plans(template)
    total = sum(p.minutes or 0 for p in plans)
    return {
        "template": template.pk,
        "duration_minutes": min(total, DURATION_MAX_MINUTES) if total else None,
        "hint_policy": template.hint_policy,
        "hint_penalty": template.hint_penalty,
        "hidden_feedback": template.hidden_feedback,
        "plans": plans,
    }


def template_validate(
    coach: AbstractBaseUser,
    *,
    name: str,
    challenges: Sequence[ChallengePlan],
    hint_policy: str = HintPolicy.ON_REQUEST,
    hint_penalty: int | None = HINT_PENALTY_DEFAULT,
    hidden_feedback: str = HiddenFeedback.SUMMARY,
    template: InterviewTemplate | None = None,
) -> str:
    """Check every field of a template; refuse with all problems at once (``InterviewInvalid``, by field); the clean name."""
    if not is_coach(coach):
        raise InterviewError("Only coaches keep interview templates.")
    if template is not None and template.coach_id != coach.pk:
        raise InterviewError("That template is another coach's.")
    errors = FieldErrors()
    clean_name = (name or "").strip()
    if not clean_name:
        errors.add("name", "Name the template, e.g. “Autograd, 60 min”.")
    elif len(clean_name) > NAME_MAX_CHARS:
        errors.add("name", f"The name is limited to {NAME_MAX_CHARS} characters.")
    else:
        clash = InterviewTemplate.objects.filter(coach=coach, name=clean_name)
        if template is not None:
            clash = clash.exclude(pk=template.pk)
        if clash.exists():
            errors.add("name", f"You already have a template named {clean_name!r}.")
    plans = list(challenges)
    validate_challenges(errors, plans, minutes_required=True)
    total = sum(p.minutes or 0 for p in plans)
    if total > DURATION_MAX_MINUTES:
        errors.add("challenges", f"The minutes add up to {total}; an interview lasts at most {DURATION_MAX_MINUTES}.")
    validate_settings(errors, hint_policy=hint_policy, hint_penalty=hint_penalty, hidden_feedback=hidden_feedback)
    errors.raise_any()
    return clean_name


def template_save(
    coach: AbstractBaseUser,
    *,
    name: str,
    challenges: Sequence[ChallengePlan],
    hint_policy: str = HintPolicy.ON_REQUEST,
    hint_penalty: int | None = HINT_PENALTY_DEFAULT,
    hidden_feedback: str = HiddenFeedback.SUMMARY,
    template: InterviewTemplate | None = None,
) -> InterviewTemplate:
    """Create a template (``template`` None) or replace an existing one's fields and challenges; refused by ``template_validate``."""
    plans = list(challenges)
    clean_name = template_validate(
        coach, name=name, challenges=plans, hint_policy=hint_policy, hint_penalty=hint_penalty, hidden_feedback=hidden_feedback, template=template
    )
    fields = {
        "name": clean_name, "hint_policy": hint_policy, "hidden_feedback": hidden_feedback,
        "hint_penalty": HINT_PENALTY_DEFAULT if hint_penalty is None else hint_penalty,
    }  # fmt: skip
    with transaction.atomic():
        if template is None:
            template = InterviewTemplate.objects.create(coach=coach, **fields)
        else:
            for key, value in fields.items():
                setattr(template, key, value)
            template.save(update_fields=[*fields, "updated_at"])
            TemplateChallenge.objects.filter(template=template).delete()
        TemplateChallenge.objects.bulk_create(
            TemplateChallenge(template=template, challenge=p.challenge, position=i, minutes=p.minutes or 0) for i, p in enumerate(plans, start=1)
        )
    return template


def template_delete(coach: AbstractBaseUser, template: InterviewTemplate) -> None:
    if template.coach_id != coach.pk:
        raise InterviewError("That template is another coach's.")
    template.delete()
