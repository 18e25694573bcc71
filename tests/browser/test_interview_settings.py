"""Session settings in two browsers: a template with hints off becomes an interview; the candidate gets no hints.

The second test: a session with hidden tests in full and a penalty per
hint; the candidate's page shows the hidden probe's own message and offers
hints, and the coach's live view takes the penalty off the score.

Real everything, as in test_mock_interview.py (headless Chromium, the live
server, Redis, a Celery worker, the bwrap sandbox). The coach builds a
template through the picker (filtering by track), makes an interview from it
naming only the candidate, and the candidate's page says hints are off before
anything is asked. A wrong Submit unlocks hints in the stored result, yet the
page offers no hint button, and a reveal forced by hand is refused by the
server, through the interview's endpoint and through the practice one alike.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, expect

from grader.feedback import hidden_message
from tests.browser.test_mock_interview import _csrf, replace_code
from tests.browser.test_submit_in_browser import FIXTURES, log_in
from tests.services import Worker
from web.accounts.roles import coach_grant
from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir
from web.interviews.models import HiddenFeedback, HintPolicy, Interview, InterviewTemplate
from web.interviews.services import interview_create
from web.submissions.models import HintReveal, Submission

pytestmark = pytest.mark.browser

# Sums arrays as integers: the float probes fail, which unlocks the "values" hints.
WRONG = "import numpy as np\n\ndef add(a, b):\n    return (np.asarray(a) + np.asarray(b)).astype(int)\n"



@pytest.fixture
def packages(tmp_path: Path) -> Path:
    """add-numbers (track demo) and a copy of it in a second track, so the track filter has something to hide."""
    root = tmp_path / "packages"
    shutil.copytree(FIXTURES / "demo" / "add-numbers", root / "demo" / "add-numbers")
    other = root / "basics" / "sum-pairs"
    shutil.copytree(FIXTURES / "demo" / "add-numbers", other)
    toml = (other / "challenge.toml").read_text()
    (other / "challenge.toml").write_text(
        toml.replace('slug = "add-numbers"', 'slug = "sum-pairs"').replace('track = "demo"', 'track = "basics"').replace("Add numbers", "Sum pairs")
    )
    return root


def test_a_session_from_a_template_with_hints_off(
    live_server: Any, settings: Any, celery_worker: Worker, browser: Browser, packages: Path
) -> None:
    settings.CHALLENGES_DIR = packages
    assert challenge_sync_from_dir(packages).ok
    coach_user = User.objects.create_user("grace", password="pw-grace-hopper-1")
    coach_grant(coach_user)
    User.objects.create_user("ada", password="pw-ada-lovelace-1")
    base = live_server.url

    # The coach writes a template: the picker filtered by track, one challenge, 20 minutes, hints off.
    coach = browser.new_context().new_page()
    log_in(coach, base, "grace", "pw-grace-hopper-1")
    coach.goto(f"{base}/interviews/")
    coach.click("#templates-link")
    coach.click("#new-template")
    coach.fill("#id_name", "Arrays warm-up")
    expect(coach.locator('.picker-row[data-slug="sum-pairs"]')).to_be_visible()
    coach.select_option("#filter-track", "demo")
    expect(coach.locator('.picker-row[data-slug="sum-pairs"]')).to_be_hidden()
    expect(coach.locator("#picker-count")).to_have_text("1 of 2 shown")
    row = coach.locator('.picker-row[data-slug="add-numbers"]')
    row.locator('input[name="challenges"]').check()
    row.locator('input[name="minutes-add-numbers"]').fill("20")
    expect(coach.locator('#picker-chosen li[data-slug="add-numbers"]')).to_contain_text("20 min")
    coach.check('input[name="hint_policy"][value="off"]')
    expect(coach.locator("#penalty-field")).to_be_hidden()
    coach.click("#save-template")
    template = InterviewTemplate.objects.get(name="Arrays warm-up")
    assert template.hint_policy == HintPolicy.OFF
    listed = coach.locator(f'#templates tr[data-template="{template.pk}"]')
    expect(listed.locator('td[title="Off: no hints"]')).to_have_text("Off")

    # New interview from the template: everything filled in, the coach names the candidate.
    listed.locator("a.use-template").click()
    expect(coach.locator("#from-template")).to_contain_text("Arrays warm-up")
    expect(coach.locator('.picker-row[data-slug="add-numbers"] input[name="challenges"]')).to_be_checked()
    expect(coach.locator("#id_duration_minutes")).to_have_value("20")
    expect(coach.locator('input[name="hint_policy"][value="off"]')).to_be_checked()
    coach.fill("#id_candidate", "ada")
    coach.click("#create-interview")
    expect(coach.locator("#session-settings")).to_have_attribute("data-hint-policy", "off")
    interview = Interview.objects.get()
    assert (interview.template_id, interview.hint_policy, interview.duration_minutes) == (template.pk, HintPolicy.OFF, 20)
    link = coach.locator("#candidate-link").inner_text().strip()

    # The candidate reads the policy first, submits wrong code: hints were unlocked, none is offered.
    candidate = browser.new_context().new_page()
    log_in(candidate, base, "ada", "pw-ada-lovelace-1")
    candidate.goto(link)
    expect(candidate.locator("#session-rules")).to_contain_text("Hints are off")
    replace_code(candidate, WRONG)
    candidate.click("#submit")
    expect(candidate.locator("#result")).to_have_attribute("data-status", "done", timeout=120_000)
    submission = Submission.objects.get()
    unlocked = [str(h["id"]) for h in submission.hints]
    assert "broadcast" in unlocked, "the wrong code must unlock a hint, or the checks below prove nothing"
    expect(candidate.locator("#hints .reveal-hint")).to_have_count(0)
    expect(candidate.locator("#hints .hint")).to_have_count(0)

    # Forcing a reveal by hand: refused by the server, under the private link and on the practice endpoint.
    headers = {"X-CSRFToken": _csrf(candidate), "Accept": "application/json"}
    forced = candidate.request.post(f"{link}submissions/{submission.pk}/hints/broadcast/reveal", headers=headers)
    assert forced.status == 403 and "off" in forced.json()["error"]
    practice = candidate.request.post(f"{base}/submissions/{submission.pk}/hints/broadcast/reveal", headers=headers)
    assert practice.status == 403
    assert not HintReveal.objects.exists()


def test_full_hidden_feedback_and_a_hint_penalty_as_the_two_sides_see_them(
    live_server: Any, settings: Any, celery_worker: Worker, browser: Browser, packages: Path
) -> None:
    settings.CHALLENGES_DIR = packages
    assert challenge_sync_from_dir(packages).ok
    coach_user = User.objects.create_user("grace", password="pw-grace-hopper-1")
    coach_grant(coach_user)
    User.objects.create_user("ada", password="pw-ada-lovelace-1")
    base = live_server.url
    interview = interview_create(
        coach_user, candidate_username="ada", challenges=[Challenge.objects.get(slug="add-numbers")], duration_minutes=30,
        hint_policy=HintPolicy.PENALTY, hint_penalty=10, hidden_feedback=HiddenFeedback.FULL,
    )  # fmt: skip
    coach = browser.new_context().new_page()
    log_in(coach, base, "grace", "pw-grace-hopper-1")
    coach.goto(f"{base}/interviews/{interview.pk}/live/")
    expect(coach.locator("#session-settings")).to_contain_text("10 points per hint")

    candidate = browser.new_context().new_page()
    log_in(candidate, base, "ada", "pw-ada-lovelace-1")
    candidate.goto(f"{base}/interviews/join/{interview.token}/")
    expect(candidate.locator("#session-rules")).to_contain_text("each hint you reveal costs 10 points")
    replace_code(candidate, WRONG)
    candidate.click("#submit")
    expect(candidate.locator("#result")).to_have_attribute("data-status", "done", timeout=120_000)
    # Full feedback: the hidden probe's message is the check's own, as the interviewer reads it (the summary never is).
    stored = next(p for p in Submission.objects.get().probes if not p["passed"])
    assert hidden_message(stored) != stored["message"], "the summary would show the same words: the check below proves nothing"
    expect(candidate.locator(f'#probes .probe[data-probe="{stored["name"]}"] .probe-message')).to_have_text(stored["message"])
    # On request at a cost: the button is there; one reveal costs 10 points on the coach's live view.
    candidate.click("#hints .reveal-hint")
    expect(candidate.locator("#hints .hint")).to_have_count(1)
    expect(coach.locator('.live-challenge[data-slug="add-numbers"] .score-line')).to_contain_text("- 10 for 1 hint =", timeout=10_000)
