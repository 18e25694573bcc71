"""The question bank: web/interviews/bank.py (templates) and its pages in web/interviews/views.py.

A template keeps ordered challenges with minutes and the session settings;
every refusal comes at once; only its coach sees, uses, edits or deletes it
(another coach gets 404, a candidate 403); "new interview from template"
prefills everything but the candidate, with the duration the minutes' sum.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from web.challenges.models import Challenge
from web.interviews.bank import template_delete, template_initial, template_plans, template_save
from web.interviews.models import HiddenFeedback, HintPolicy, Interview, InterviewTemplate
from web.interviews.services import ChallengePlan, InterviewError, InterviewInvalid


def as_user(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def template(coach: User, catalogue: dict[str, Challenge]) -> InterviewTemplate:
    return template_save(
        coach, name="Adders, 45 min",
        challenges=[ChallengePlan(catalogue["mul-two"], 25), ChallengePlan(catalogue["add-two"], 20)],
        hint_policy=HintPolicy.PENALTY, hint_penalty=5, hidden_feedback=HiddenFeedback.FULL,
    )  # fmt: skip


# --- Services ----------------------------------------------------------------------------------


def test_a_template_keeps_order_minutes_and_settings(template: InterviewTemplate) -> None:
    assert [(p.challenge.slug, p.minutes) for p in template_plans(template)] == [("mul-two", 25), ("add-two", 20)]
    assert (template.hint_policy, template.hint_penalty, template.hidden_feedback) == ("penalty", 5, "full")
    initial = template_initial(template)
    assert initial["duration_minutes"] == 45 and initial["hint_policy"] == "penalty" and initial["template"] == template.pk


def test_template_refusals_come_all_at_once(coach: User, catalogue: dict[str, Challenge]) -> None:
    with pytest.raises(InterviewInvalid) as caught:
        template_save(coach, name="  ", challenges=[ChallengePlan(catalogue["add-two"], None), ChallengePlan(catalogue["add-two"], 500)])
    errors = caught.value.errors
    assert set(errors) == {"name", "challenges"}
    assert "A challenge appears twice; list each once." in errors["challenges"]
    assert "Give the minutes planned for add-two." in errors["challenges"]
    assert any("between 1 and 180, not 500" in m for m in errors["challenges"])
    assert not InterviewTemplate.objects.exists()


def test_minutes_may_not_add_up_past_the_longest_interview(coach: User, catalogue: dict[str, Challenge]) -> None:
    plans = [ChallengePlan(catalogue[slug], 70) for slug in ("add-two", "add-again", "mul-two")]
    with pytest.raises(InterviewInvalid, match="add up to 210"):
        template_save(coach, name="Marathon", challenges=plans)


def test_names_are_unique_per_coach_and_editing_replaces_the_challenges(
    template: InterviewTemplate, coach: User, other_coach: User, catalogue: dict[str, Challenge]
) -> None:
    with pytest.raises(InterviewInvalid, match="already have a template named"):
        template_save(coach, name="Adders, 45 min", challenges=[ChallengePlan(catalogue["add-two"], 10)])
    # Another coach may use the same name.
    template_save(other_coach, name="Adders, 45 min", challenges=[ChallengePlan(catalogue["add-two"], 10)])
    edited = template_save(
        coach, template=template, name="Adders, 45 min", challenges=[ChallengePlan(catalogue["add-again"], 30)], hint_policy=HintPolicy.OFF
    )
    assert [(p.challenge.slug, p.minutes) for p in template_plans(edited)] == [("add-again", 30)]
    assert InterviewTemplate.objects.get(pk=template.pk).hint_policy == "off"


def test_only_its_coach_changes_or_deletes_a_template(template: InterviewTemplate, other_coach: User, catalogue: dict[str, Challenge]) -> None:
    with pytest.raises(InterviewError, match="another coach's"):
        template_save(other_coach, template=template, name="Mine now", challenges=[ChallengePlan(catalogue["add-two"], 10)])
    with pytest.raises(InterviewError, match="another coach's"):
        template_delete(other_coach, template)
    assert InterviewTemplate.objects.get(pk=template.pk).name == "Adders, 45 min"


# --- Pages -------------------------------------------------------------------------------------


def test_a_coach_makes_a_template_through_the_form(coach: User, catalogue: dict[str, Challenge]) -> None:
    client = as_user(coach)
    form = client.get(reverse("interview-template-create")).content.decode()
    assert 'data-slug="mul-two"' in form and 'data-track="more"' in form and "id=\"picker-filters\"" in form
    data = {
        "name": "Two adders", "challenges": ["add-two", "add-again"], "position-add-two": "2", "position-add-again": "1",
        "minutes-add-two": "15", "minutes-add-again": "10", "hint_policy": "off", "hidden_feedback": "summary", "hint_penalty": "10",
    }  # fmt: skip
    response = client.post(reverse("interview-template-create"), data)
    assert response.status_code == 302 and response["Location"] == reverse("interview-templates")
    made = InterviewTemplate.objects.get(name="Two adders")
    assert [(p.challenge.slug, p.minutes) for p in template_plans(made)] == [("add-again", 10), ("add-two", 15)]
    listing = client.get(reverse("interview-templates")).content.decode()
    assert "Add again (10 min) · Add two integers (15 min)" in listing
    assert f'data-template="{made.pk}"' in listing and ">Off</td>" in listing and f"?template={made.pk}" in listing


def test_the_template_form_shows_every_refusal(coach: User, catalogue: dict[str, Challenge]) -> None:
    response = as_user(coach).post(reverse("interview-template-create"), {"name": "", "challenges": ["add-two"], "hint_penalty": "x"})
    html = response.content.decode()
    assert "Name the template" in html and "Give the minutes planned for add-two." in html and "Enter a whole number." in html
    assert not InterviewTemplate.objects.exists()


def test_new_interview_from_a_template_prefills_everything_but_the_candidate(
    template: InterviewTemplate, coach: User, user: User, catalogue: dict[str, Challenge]
) -> None:
    client = as_user(coach)
    html = client.get(reverse("interview-create") + f"?template={template.pk}").content.decode()
    assert 'id="from-template"' in html and "Adders, 45 min" in html
    assert re.search(r'name="duration_minutes" value="45"', html)
    assert re.search(r'value="penalty"[^>]*checked', html) and re.search(r'value="full"[^>]*checked', html)
    assert re.search(r'value="mul-two" checked', html) and re.search(r'name="position-mul-two"[^>]*value="1"', html)
    assert re.search(r'name="minutes-add-two"[^>]*value="20"', html)
    assert not re.search(r'value="add-again" checked', html)
    # Without JavaScript the plan reads from the top: the template's challenges first, in its order.
    assert html.index('data-slug="mul-two"') < html.index('data-slug="add-two"') < html.index('data-slug="add-again"')
    # Posting the prefilled form, with the candidate named, makes the interview.
    data = {
        "template": str(template.pk), "candidate": "alice", "duration_minutes": "45", "challenges": ["mul-two", "add-two"],
        "position-mul-two": "1", "position-add-two": "2", "minutes-mul-two": "25", "minutes-add-two": "20",
        "hint_policy": "penalty", "hint_penalty": "5", "hidden_feedback": "full",
    }  # fmt: skip
    assert client.post(reverse("interview-create"), data).status_code == 302
    interview = Interview.objects.get()
    assert interview.template_id == template.pk
    assert (interview.hint_policy, interview.hint_penalty, interview.hidden_feedback) == ("penalty", 5, "full")
    assert list(interview.items.values_list("challenge__slug", "minutes")) == [("mul-two", 25), ("add-two", 20)]


def test_another_coach_gets_404_on_a_template_and_a_candidate_403(
    template: InterviewTemplate, other_coach: User, user: User, catalogue: dict[str, Challenge]
) -> None:
    other = as_user(other_coach)
    assert other.get(reverse("interview-template-edit", args=[template.pk])).status_code == 404
    assert other.post(reverse("interview-template-delete", args=[template.pk])).status_code == 404
    assert other.get(reverse("interview-create") + f"?template={template.pk}").status_code == 404
    assert "Adders" not in other.get(reverse("interview-templates")).content.decode()
    candidate = as_user(user)
    for url in (reverse("interview-templates"), reverse("interview-template-edit", args=[template.pk]), reverse("interview-statistics")):
        assert candidate.get(url).status_code == 403
    assert InterviewTemplate.objects.filter(pk=template.pk).exists()


def test_editing_and_deleting_a_template(template: InterviewTemplate, coach: User, user: User, catalogue: dict[str, Challenge]) -> None:
    client = as_user(coach)
    page = client.get(reverse("interview-template-edit", args=[template.pk])).content.decode()
    assert 'value="Adders, 45 min"' in page and 'id="delete-template"' in page
    from web.interviews.services import interview_create

    made = interview_create(coach, candidate_username="alice", challenges=template_plans(template), duration_minutes=45, template=template)
    response = client.post(reverse("interview-template-delete", args=[template.pk]))
    assert response.status_code == 302 and not InterviewTemplate.objects.exists()
    made.refresh_from_db()
    assert made.template_id is None and made.items.count() == 2  # the interview keeps what it copied
