"""The diagnosis on the challenge page and the interviewer's view (grader/diagnose.py, issue 29).

The fixture package gets a shipped wrong solution that multiplies instead of
adding, with its author's words, and a signatures record graded on the fake
backend. A candidate who makes that mistake in their own code is offered the
diagnosis on request, apart from the hint ladder; the reveal is recorded like
a hint's; the candidate never sees which shipped solution it matched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from grader.package_load import load_package_dir
from grader.signatures import grade_wrong_solutions, write_signatures
from tests.fake_backend import FakeBackend, ok
from tests.web.conftest import SUM_WRONG
from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir
from web.submissions.models import HintReveal

WORDS = "Your `add` gives the right answer only for some signs: look at which operator runs for positive numbers."
# The shipped wrong solution: the mistake of SUM_WRONG, the same code (the fake backend answers by the code's text).
SHIPPED = SUM_WRONG


@pytest.fixture
def diagnosed(db: Any, package_root: Path, package_dir: Path, settings: Any, fake_sandbox: FakeBackend) -> Challenge:
    solutions = package_dir / "solutions"
    solutions.mkdir()
    (solutions / "multiplies-positives.py").write_text(SHIPPED)
    (solutions / "expected.toml").write_text(
        f'[multiplies-positives]\nverdict = "partial"\nwhy = "a * b for a >= 0"\nfamily = "wrong-operator"\ndiagnosis = "{WORDS}"\n'
    )
    package = load_package_dir(package_dir)
    write_signatures(package_dir, package, grade_wrong_solutions(package, jobs=1))
    settings.CHALLENGES_DIR = package_root
    report = challenge_sync_from_dir(package_root)
    assert report.ok, report.errors
    return Challenge.objects.select_related("current_version").get(slug="add-two")


def submit(client: Client, code: str, capture: Any) -> dict[str, Any]:
    with capture(execute=True):
        created = client.post(reverse("challenge-submit", args=["add-two"]), data=code, content_type="text/plain")
    return client.get(reverse("submission-status", args=[created.json()["id"]])).json()


def test_the_known_mistake_is_offered_apart_from_the_ladder_and_revealed_on_request(
    alice: Client, diagnosed: Challenge, django_capture_on_commit_callbacks: Any
) -> None:
    response_data = submit(alice, SUM_WRONG, django_capture_on_commit_callbacks)
    found = [h for h in response_data["hints"] if h["kind"] == "diagnosis"]
    assert len(found) == 1 and found[0]["basis"] == "mistake"
    diagnosis = found[0]
    assert diagnosis["can_reveal"] and not diagnosis["shown"] and diagnosis["html"] is None and not diagnosis["offered"]
    # The ladder's first hint is still what "show a hint" offers.
    assert [h["id"] for h in response_data["hints"] if h["offered"]] == ["nudge"]
    # Which shipped solution it matched, and its family, are the coach's: not in what the candidate gets.
    status = alice.get(response_data["url"]).content.decode()
    assert "multiplies-positives" not in status and "wrong-operator" not in status and "which operator" not in status

    revealed = alice.post(diagnosis["reveal_url"]).json()
    shown = next(h for h in revealed["hints"] if h["kind"] == "diagnosis")
    assert shown["shown"] and "Your failures are those of a known mistake" in shown["html"] and "which operator runs" in shown["html"]
    assert HintReveal.objects.filter(hint_id=diagnosis["id"]).count() == 1
    assert [h["id"] for h in revealed["hints"] if h["offered"]] == ["nudge"]  # revealing it spends no hint of the ladder


def test_correct_code_and_a_mistake_like_none_get_no_diagnosis(
    alice: Client, diagnosed: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    from tests.web.conftest import CORRECT

    assert not [h for h in submit(alice, CORRECT, django_capture_on_commit_callbacks)["hints"] if h["kind"] == "diagnosis"]
    # Wrong on the negative numbers only: no probe the known mistake fails.
    negatives_only = "def add(a, b):\n    return a + b if a > 0 else 0\n"
    fake_sandbox.script(negatives_only, negatives=ok([0, 0]))
    data = submit(alice, negatives_only, django_capture_on_commit_callbacks)
    assert data["verdict"] != "accepted" and not [h for h in data["hints"] if h["kind"] == "diagnosis"]


def test_a_mistake_like_none_is_pointed_at_the_part_of_the_statement_whose_probes_all_fail(
    alice: Client, diagnosed: Challenge, package_root: Path, package_dir: Path, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    """No known mistake fails like it, but every probe of one coverage.toml entry does: the diagnosis names that part
    of the statement (on request, recorded like any diagnosis), and says it is the statement's, not a mistake's."""
    (package_dir / "statement.md").write_text((package_dir / "statement.md").read_text() + "\nEither number may be negative.\n")
    (package_dir / "coverage.toml").write_text(
        '[[entry]]\nid = "sums"\nkind = "rule"\nstatement = "returns a + b"\nprobes = ["positives", "negatives"]\n\n'
        '[[entry]]\nid = "negative-numbers"\nkind = "input"\nstatement = "Either number may be negative."\nprobes = ["negatives"]\n'
    )
    report = challenge_sync_from_dir(package_root)
    assert report.ok, report.errors
    negatives_only = "def add(a, b):\n    return a + b if a > 0 else 0\n"
    fake_sandbox.script(negatives_only, negatives=ok([0, 0]))
    data = submit(alice, negatives_only, django_capture_on_commit_callbacks)
    found = [h for h in data["hints"] if h["kind"] == "diagnosis"]
    assert len(found) == 1 and found[0]["basis"] == "statement" and not found[0]["shown"]
    shown = next(h for h in alice.post(found[0]["reveal_url"]).json()["hints"] if h["kind"] == "diagnosis")
    assert "No known mistake fails quite like yours" in shown["html"] and "Either number may be negative." in shown["html"]
    assert "returns a + b" not in shown["html"]  # the rule it shares with a probe that passes is not named
    assert HintReveal.objects.filter(hint_id=found[0]["id"]).count() == 1


def test_the_interviewer_sees_which_shipped_solution_the_diagnosis_matched(
    coach: Any, user: Any, diagnosed: Challenge, django_capture_on_commit_callbacks: Any
) -> None:
    from web.interviews import runs
    from web.interviews.services import interview_create, interview_open, interview_submission_create

    interview = interview_open(interview_create(coach, candidate_username="alice", challenges=[diagnosed], duration_minutes=30), user)
    with django_capture_on_commit_callbacks(execute=True):
        submit = interview_submission_create(interview, user, "add-two", SUM_WRONG, "submit")
    submit.refresh_from_db()
    rows = [h for h in runs.coach_submission_payload(interview, submit)["unlocked_hints"] if h["kind"] == "diagnosis"]
    assert len(rows) == 1 and rows[0]["solution"] == "multiplies-positives" and rows[0]["similarity"] == 1.0
    assert rows[0]["revealed"] is False and "which operator runs" in rows[0]["html"]  # the interviewer reads it unrevealed
