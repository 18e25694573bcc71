"""A forgotten password, reset in Chromium (issue 29): the login page's link, the email, the new password, a login.

The live server runs in this process, so the mail Django's test backend keeps (``mail.outbox``) is the page's.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core import mail
from playwright.sync_api import Browser, expect

pytestmark = pytest.mark.browser

NEW_PASSWORD = "violet-Harbour-2231"


def test_a_forgotten_password_is_reset_from_the_login_page(live_server: Any, browser: Browser) -> None:
    User.objects.create_user("ada", email="ada@example.com", password="old-Password-1234")
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.click("#forgot-password")
    expect(page.locator("h1")).to_have_text("Reset your password")
    page.fill("#id_email", "ada@example.com")
    page.click("#reset-submit")
    expect(page.locator("#reset-sent h1")).to_have_text("Check your email")

    [message] = mail.outbox
    link = re.search(r"https?://\S+/accounts/reset/\S+/", message.body)
    assert link, message.body
    page.goto(link.group(0))
    expect(page.locator("h1")).to_have_text("Choose a new password")
    page.fill("#id_new_password1", NEW_PASSWORD)
    page.fill("#id_new_password2", NEW_PASSWORD)
    page.click("#new-password-submit")
    expect(page.locator("#reset-complete h1")).to_have_text("Password changed")

    page.click("#reset-complete a.button")
    page.fill("#id_username", "ada")
    page.fill("#id_password", NEW_PASSWORD)
    page.click("#login-submit")
    expect(page.locator("body")).to_contain_text("ada")
    assert "/accounts/login/" not in page.url
