"""The whole web path with the real grader on the in-memory sandbox: page POST, eager task, status JSON.

The sandbox answers what the real runner would for each piece of code (see
tests/fake_backend.py); real sandboxes and a real worker are tests/integration's.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from grader import expected as expected_cache
from grader.seal import seal_problems
from tests.fake_backend import (
    FakeBackend,
    ProbeReply,
    crashed,
    exited,
    killed_from_outside,
    out_of_memory,
    raised,
    runner_killed,
    syntax_error,
    timed_out,
)
from web.challenges.models import Challenge
from web.challenges.services import challenge_package
from web.submissions.models import HintReveal, Submission

from .conftest import REFERENCE


def post(client: Client, challenge: Challenge, kind: str, code: str, capture: Any) -> dict[str, Any]:
    with capture(execute=True):
        response = client.post(reverse(f"challenge-{kind}", args=[challenge.slug]), data=code, content_type="text/plain")
    assert response.status_code == 202, response.content
    return client.get(response.json()["url"]).json()


@pytest.mark.usefixtures("fake_sandbox")
def test_reference_is_accepted(alice: Client, challenge: Challenge, django_capture_on_commit_callbacks: Any) -> None:
    status = post(alice, challenge, "submit", REFERENCE, django_capture_on_commit_callbacks)

    assert status["status"] == "done" and status["verdict"] == "accepted" and status["score"] == 100
    assert set(status["categories"]) == {"correctness", "signs"}
    assert status["hints"] == []


@pytest.mark.usefixtures("fake_sandbox")
def test_starter_fails_with_hints_and_public_observations(alice: Client, challenge: Challenge, django_capture_on_commit_callbacks: Any) -> None:
    status = post(alice, challenge, "run", challenge.current_version.starter_code, django_capture_on_commit_callbacks)

    assert status["verdict"] == "wrong_answer" and status["score"] == 0
    (probe,) = status["probes"]
    assert probe["name"] == "small" and not probe["passed"]
    assert (probe["observation"], probe["expected"]) == (0, 5)
    # Unlocked, offered, not shown until asked.
    assert [(h["id"], h["shown"], h["offered"]) for h in status["hints"] if h["tier"] == 1] == [("nudge", False, True)]
    assert not HintReveal.objects.exists()
    revealed = alice.post(reverse("submission-hint-reveal", args=[status["id"], "nudge"])).json()
    assert [h["id"] for h in revealed["hints"] if h["shown"]] == ["nudge"]
    assert HintReveal.objects.filter(hint_id="nudge").exists()


def test_candidate_exception_is_a_verdict_and_its_text_is_plain_data(
    alice: Client, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    code = "def add(a, b):\n    print('<script>alert(1)</script>')\n    raise ValueError('<img src=x onerror=alert(2)>')\n"
    fake_sandbox.script(code, small=raised("ValueError", "<img src=x onerror=alert(2)>", line=3, stdout="<script>alert(1)</script>\n"))
    status = post(alice, challenge, "run", code, django_capture_on_commit_callbacks)

    assert status["verdict"] == "runtime_error"
    (probe,) = status["probes"]
    assert "ValueError: <img src=x onerror=alert(2)>" in probe["message"]
    assert probe["stdout"] == "<script>alert(1)</script>\n"
    # The JSON carries the text as data; the page inserts it with textContent.
    assert Submission.objects.get().verdict == "runtime_error"


def test_syntax_error_is_reported(
    alice: Client, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    code = "def add(a, b:\n    return\n"
    fake_sandbox.script(code, syntax_error("'(' was never closed", line=1, offset=8, text="def add(a, b:"))
    status = post(alice, challenge, "submit", code, django_capture_on_commit_callbacks)
    assert status["verdict"] == "syntax_error" and status["score"] == 0
    assert "never closed" in status["message"] and "line 1" in status["message"]


BROKEN = "def add(a, b):\n    return broken(a, b)\n"


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        (timed_out(), "time_limit"),
        (out_of_memory(), "memory_limit"),
        (crashed(), "runtime_error"),
        (exited(3), "runtime_error"),
        (raised("NameError", "name 'broken' is not defined"), "runtime_error"),
    ],
)
def test_every_way_a_probe_can_fail_reaches_the_page_as_its_verdict(
    alice: Client, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any, reply: ProbeReply, verdict: str
) -> None:
    fake_sandbox.script(BROKEN, positives=reply, negatives=reply)
    status = post(alice, challenge, "submit", BROKEN, django_capture_on_commit_callbacks)
    assert (status["verdict"], status["score"]) == (verdict, 0)
    assert [p["passed"] for p in status["probes"]] == [False, False]


def test_a_runner_killed_by_the_candidate_fails_the_probes_it_did_not_finish(
    alice: Client, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    fake_sandbox.script(BROKEN, runner_killed(after=1))
    status = post(alice, challenge, "submit", BROKEN, django_capture_on_commit_callbacks)
    assert status["verdict"] == "partial"
    assert [(p["name"], p["passed"]) for p in status["probes"]] == [("positives", True), ("negatives", False)]


def test_a_sandbox_killed_from_outside_is_retried_then_offered_a_regrade(
    alice: Client, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    fake_sandbox.script(BROKEN, killed_from_outside())
    status = post(alice, challenge, "submit", BROKEN, django_capture_on_commit_callbacks)
    assert status["verdict"] == "internal_error" and status["regrade_url"]
    assert len(fake_sandbox.runs_of(BROKEN)) == 4  # the first try and three retries: never the candidate's fault


# What a submission that read the hidden probe file in its sandbox sends back:
# the file's text as its exception message and as its printed output.
HOSTILE = "def add(a, b):\n    raise ValueError(open(__file__.replace('solution.py', 'probes.py')).read())\n"
PROBE_TEXT = "@probe(category='sum')\ndef positives(solution):\n    return [solution.add(1, 2), solution.add(10, 20)]\n"


def test_a_submission_that_reads_the_hidden_probes_gets_none_of_them_back(
    alice: Client, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    leak = raised("ValueError", PROBE_TEXT, stdout=PROBE_TEXT)
    fake_sandbox.script(HOSTILE, small=leak, positives=leak, negatives=leak)
    status = post(alice, challenge, "submit", HOSTILE, django_capture_on_commit_callbacks)

    assert status["verdict"] == "runtime_error"
    assert {p["message"] for p in status["probes"]} == {"raised ValueError at solution.py line 2"}
    package = challenge_package(challenge.current_version)
    assert seal_problems(package, status, expected_cache.load(package.version, False) or {}) == []
    assert "solution.add(10, 20)" not in json.dumps(status)
    # The stored result, which coaches see, holds the text.
    assert "solution.add(10, 20)" in json.dumps(Submission.objects.get().probes)
