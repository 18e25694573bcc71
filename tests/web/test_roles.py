"""Roles (web/accounts/roles.py): candidates and coaches, the grant_coach command, the coach page and IsCoach."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory, force_authenticate

from web.accounts.roles import COACH_GROUP, IsCoach, coach_grant, is_coach


def test_who_is_a_coach(user: User, coach: User) -> None:
    staff = User.objects.create_user("sam", is_staff=True)
    inactive = User.objects.create_user("ina")
    coach_grant(inactive)
    inactive.is_active = False
    inactive.save()

    assert is_coach(coach) and is_coach(staff)
    assert not is_coach(user) and not is_coach(AnonymousUser()) and not is_coach(None) and not is_coach(inactive)


def test_a_new_account_is_a_candidate(client: Client, db: None) -> None:
    fields = {"username": "newcandidate", "email": "new@example.com", "password1": "cobalt-Vessel-4417", "password2": "cobalt-Vessel-4417"}
    client.post(reverse("signup"), fields)
    new = User.objects.get(username="newcandidate")
    assert not is_coach(new) and not new.groups.exists()
    assert client.get(reverse("coach-grading")).status_code == 403


def test_grant_coach_command_grants_and_revokes(user: User, client: Client) -> None:
    client.force_login(user)
    assert client.get(reverse("coach-grading")).status_code == 403

    out = StringIO()
    call_command("grant_coach", "alice", stdout=out)
    assert out.getvalue().strip() == "alice is a coach." and user.groups.filter(name=COACH_GROUP).exists()
    assert client.get(reverse("coach-grading")).status_code == 200

    call_command("grant_coach", "alice", "--revoke", stdout=StringIO())
    assert not is_coach(User.objects.get(pk=user.pk))
    assert client.get(reverse("coach-grading")).status_code == 403


def test_grant_coach_names_an_unknown_user(db: None) -> None:
    with pytest.raises(CommandError, match="No user 'nobody'"):
        call_command("grant_coach", "nobody")


def test_revoking_staff_says_they_remain_coaches(db: None) -> None:
    User.objects.create_user("sam", is_staff=True)
    out = StringIO()
    call_command("grant_coach", "sam", "--revoke", stdout=out)
    assert "still a coach" in out.getvalue()


@pytest.mark.parametrize(("who", "status"), [("anonymous", 302), ("candidate", 403), ("coach", 200), ("staff", 200)])
def test_the_coach_page_by_role(who: str, status: int, client: Client, user: User, coach: User) -> None:
    people = {"candidate": user, "coach": coach, "staff": User.objects.create_user("sam", is_staff=True)}
    if who in people:
        client.force_login(people[who])
    response = client.get(reverse("coach-grading"))
    assert response.status_code == status
    if status == 302:
        assert response["Location"].startswith(reverse("login"))
    if status == 200:
        assert "Grading" in response.content.decode()


@pytest.mark.parametrize(("who", "allowed"), [("anonymous", False), ("candidate", False), ("coach", True)])
def test_is_coach_permission_for_the_api(who: str, allowed: bool, user: User, coach: User) -> None:
    raw = APIRequestFactory().get("/api/v1/anything/")
    if who != "anonymous":
        force_authenticate(raw, user={"candidate": user, "coach": coach}[who])
    from rest_framework.views import APIView

    view = APIView()
    request = view.initialize_request(raw)
    assert isinstance(request, Request)
    assert IsCoach().has_permission(request, view) is allowed


def test_the_menu_links_the_coach_page_for_coaches_only(client: Client, user: User, coach: User) -> None:
    link = f'href="{reverse("coach-grading")}"'
    client.force_login(user)
    assert link not in client.get(reverse("catalogue")).content.decode()
    client.force_login(coach)
    page = client.get(reverse("catalogue")).content.decode()
    assert link in page and 'href="/admin/"' not in page  # a coach is not staff
