"""A database held locked past its timeout: the person gets a 503 that says so, and nothing is saved.

A real lock: a second SQLite connection holds ``BEGIN EXCLUSIVE`` on the test
database file while the request runs with a short busy timeout.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from web.challenges.models import Challenge
from web.submissions.models import Submission

CODE = "def add(a, b):\n    return a + b\n"


@contextmanager
def _hold_lock() -> Iterator[None]:
    """Hold the test database's write lock; Django's connection gives up after 0.2 s."""
    if connection.vendor != "sqlite":
        pytest.fail("this test needs the SQLite test database (the suite's default)")
    options = connection.settings_dict.setdefault("OPTIONS", {})
    old_timeout = options.get("timeout")
    options["timeout"] = 0.2
    connection.close()  # reconnects with the short timeout
    holder = sqlite3.connect(connection.settings_dict["NAME"], timeout=5, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    yield
    holder.execute("ROLLBACK")
    holder.close()
    options["timeout"] = old_timeout
    connection.close()


@pytest.fixture
def locked_factory(transactional_db: Any) -> Any:
    return _hold_lock


@pytest.fixture
def locked(transactional_db: Any) -> Iterator[None]:
    with _hold_lock():
        yield


@pytest.fixture
def alice(challenge: Challenge, user: User) -> Client:
    """Alice logged in (her session written) before the lock is taken."""
    client = Client()
    client.force_login(user)
    return client


def test_submitting_while_the_database_is_locked_is_a_clear_503_and_saves_nothing(alice: Client, locked_factory: Any) -> None:
    def submit() -> Any:
        return alice.post(reverse("challenge-submit", args=["add-two"]), data=CODE, content_type="text/plain", HTTP_ACCEPT="application/json")

    with locked_factory():
        response = submit()

    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response.json() == {
        "error": "The site is busy and could not save or read that just now; nothing was saved. Try again in a few seconds.", "retry_after": 5
    }
    assert Submission.objects.count() == 0
    assert submit().status_code == 202  # the same request once the lock is gone


def test_the_api_answers_503_in_its_error_shape(challenge: Challenge, user: User, locked_after_token: None) -> None:
    client = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.get(user=user).key}")
    response = client.post(reverse("api-submit", args=["add-two"]), data={"kind": "submit", "code": CODE}, content_type="application/json")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response.json()["retry_after"] == 5 and "nothing was saved" in response.json()["error"]


def test_a_page_gets_a_short_html_page(db_ready: None, locked: None) -> None:
    browser = Client(HTTP_ACCEPT="text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
    fields = {"username": "newbie", "email": "newbie@example.com", "password1": "pw-newbie-12345", "password2": "pw-newbie-12345"}
    response = browser.post(reverse("signup"), fields)
    assert response.status_code == 503 and response["Content-Type"].startswith("text/html")
    assert "The site is busy" in response.content.decode()


@pytest.fixture
def db_ready(transactional_db: Any) -> None:
    """The tables exist; nothing else is needed before the lock."""


@pytest.fixture
def locked_after_token(user: User, locked_factory: Any) -> Iterator[None]:
    Token.objects.create(user=user)
    with locked_factory():
        yield
