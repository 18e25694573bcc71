"""Password reset by email (web/accounts, issue 29): sign-up keeps an email, a reset link is mailed, followed once.

Django's test runner keeps sent mail in ``mail.outbox`` (the console backend prints it in development).
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.models import User
from django.core import mail
from django.test import Client
from django.urls import reverse

NEW_PASSWORD = "violet-Harbour-2231"


def link_in(message: Any) -> str:
    found = re.search(r"https?://[^/\s]+(/accounts/reset/[^\s]+/)", message.body)
    assert found, message.body
    return found.group(1)


def test_a_forgotten_password_is_reset_through_the_mailed_link_which_works_once(client: Client, db: None) -> None:
    User.objects.create_user("ada", email="ada@example.com", password="old-Password-1234")
    assert 'href="/accounts/password-reset/"' in client.get(reverse("login")).content.decode()
    answer = client.post(reverse("password_reset"), {"email": "ADA@example.com"})
    assert answer.status_code == 302 and answer["Location"] == reverse("password_reset_done")
    [message] = mail.outbox
    assert message.to == ["ada@example.com"] and "GradPrep" in message.subject and '"ada"' in message.body

    form = client.get(link_in(message), follow=True)  # Django swaps the token for a session one, then shows the form
    assert b"Choose a new password" in form.content
    done = client.post(form.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done.status_code == 302 and done["Location"] == reverse("password_reset_complete")
    assert Client().login(username="ada", password=NEW_PASSWORD)
    assert not Client().login(username="ada", password="old-Password-1234")

    again = Client().get(link_in(message), follow=True)
    assert b"This link no longer works" in again.content


def test_an_unknown_address_gets_the_same_answer_and_no_mail(client: Client, db: None) -> None:
    answer = client.post(reverse("password_reset"), {"email": "nobody@example.com"})
    assert answer.status_code == 302 and answer["Location"] == reverse("password_reset_done")
    assert mail.outbox == []


def test_reset_requests_are_throttled_per_address(client: Client, db: None, settings: Any) -> None:
    settings.PASSWORD_RESETS_PER_IP = 2
    User.objects.create_user("ada", email="ada@example.com", password="old-Password-1234")
    for _ in range(2):
        assert client.post(reverse("password_reset"), {"email": "ada@example.com"}, REMOTE_ADDR="10.1.1.1").status_code == 302
    refused = client.post(reverse("password_reset"), {"email": "ada@example.com"}, REMOTE_ADDR="10.1.1.1")
    assert refused.status_code == 429 and b"Too many password resets" in refused.content and "Retry-After" in refused
    assert len(mail.outbox) == 2
    assert client.post(reverse("password_reset"), {"email": "ada@example.com"}, REMOTE_ADDR="10.1.1.2").status_code == 302


def test_sign_up_asks_for_an_email_that_no_other_account_has(client: Client, db: None) -> None:
    User.objects.create_user("ada", email="ada@example.com", password="old-Password-1234")
    fields = {"username": "grace", "password1": "cobalt-Vessel-4417", "password2": "cobalt-Vessel-4417"}
    missing = client.post(reverse("signup"), fields)
    assert missing.status_code == 200 and b"This field is required" in missing.content
    taken = client.post(reverse("signup"), {**fields, "email": "Ada@Example.com"})
    assert taken.status_code == 200 and b"An account with this email already exists" in taken.content
    assert client.post(reverse("signup"), {**fields, "email": "grace@example.com"}).status_code == 302
