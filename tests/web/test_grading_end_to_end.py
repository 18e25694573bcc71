"""The whole web path with the real grader (local backend): page POST, eager task, status JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from grader import expected as expected_cache
from grader.seal import seal_problems
from web.challenges.models import Challenge
from web.challenges.services import challenge_package
from web.submissions.models import HintReveal, Submission

pytestmark = pytest.mark.usefixtures("real_grader")


def post(client: Client, challenge: Challenge, kind: str, code: str, capture: Any) -> dict[str, Any]:
    with capture(execute=True):
        response = client.post(reverse(f"challenge-{kind}", args=[challenge.slug]), data=code, content_type="text/plain")
    assert response.status_code == 202, response.content
    return client.get(response.json()["url"]).json()


def test_reference_is_accepted(alice: Client, challenge: Challenge, django_capture_on_commit_callbacks: Any) -> None:
    status = post(alice, challenge, "submit", "def add(a, b):\n    return a + b\n", django_capture_on_commit_callbacks)

    assert status["status"] == "done" and status["verdict"] == "accepted" and status["score"] == 100
    assert set(status["categories"]) == {"correctness", "signs"}
    assert status["hints"] == []


def test_starter_fails_with_hints_and_public_observations(alice: Client, challenge: Challenge, django_capture_on_commit_callbacks: Any) -> None:
    status = post(alice, challenge, "run", challenge.current_version.starter_code, django_capture_on_commit_callbacks)

    assert status["verdict"] == "wrong_answer" and status["score"] == 0
    (probe,) = status["probes"]
    assert probe["name"] == "small" and not probe["passed"]
    assert (probe["observation"], probe["expected"]) == (0, 5)
    shown = [h["id"] for h in status["hints"] if h["shown"]]
    assert shown == ["nudge"]
    assert HintReveal.objects.filter(hint_id="nudge").exists()


def test_candidate_exception_is_a_verdict_and_its_text_is_plain_data(
    alice: Client, challenge: Challenge, django_capture_on_commit_callbacks: Any
) -> None:
    code = "def add(a, b):\n    print('<script>alert(1)</script>')\n    raise ValueError('<img src=x onerror=alert(2)>')\n"
    status = post(alice, challenge, "run", code, django_capture_on_commit_callbacks)

    assert status["verdict"] == "runtime_error"
    (probe,) = status["probes"]
    assert "ValueError" in probe["message"]
    # The JSON carries the text as data; the page inserts it with textContent.
    assert Submission.objects.get().verdict == "runtime_error"


def test_syntax_error_is_reported(alice: Client, challenge: Challenge, django_capture_on_commit_callbacks: Any) -> None:
    status = post(alice, challenge, "submit", "def add(a, b:\n    return\n", django_capture_on_commit_callbacks)
    assert status["verdict"] == "syntax_error" and status["score"] == 0


HOSTILE = """
import os

def add(a, b):
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "probes.py")) as fh:
        text = fh.read()
    print(text)
    raise ValueError(text)
"""


def test_a_submission_that_reads_the_hidden_probes_gets_none_of_them_back(
    alice: Client, challenge: Challenge, django_capture_on_commit_callbacks: Any
) -> None:
    status = post(alice, challenge, "submit", HOSTILE, django_capture_on_commit_callbacks)

    assert status["verdict"] == "runtime_error"
    assert {p["message"] for p in status["probes"]} == {"raised ValueError at solution.py line 8"}
    package = challenge_package(challenge.current_version)
    assert seal_problems(package, status, expected_cache.load(package.version, False) or {}) == []
    assert "solution.add(-5, 3)" not in json.dumps(status)
    # It did read them: the stored result, which coaches see, holds the text.
    assert "solution.add(-5, 3)" in json.dumps(Submission.objects.get().probes)
