"""A whole mock interview in two browsers: the coach watches live while the candidate works.

Real everything, as in test_submit_in_browser.py: headless Chromium (two
browser contexts, so two separate sessions), the live server, Redis, a
Celery worker and the bwrap sandbox, on the python-runtime fixture package.
The coach sets the interview up through the form; the candidate opens the
private link, sees the countdown, types (autosaved) and submits; the coach's
already open live view shows the code and the score without a reload; the
coach scores the rubric, writes a note and ends the interview; the
candidate's page locks; the scorecard shows it all. Then the denials: a
second candidate opening the link gets 404, the candidate opening the live
view gets 403. The lock is reached by ending early, never by waiting.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, expect

from tests.browser.test_submit_in_browser import FIXTURES, log_in
from tests.services import Worker
from web.accounts.roles import coach_grant
from web.challenges.services import challenge_sync_from_dir
from web.interviews.models import Interview, Snapshot

pytestmark = pytest.mark.browser

SOLUTION = "import numpy as np\n\ndef add(a, b):\n    # interview-solution-marker\n    return np.add(a, b)\n"
FIRST_TRY = "def add(a, b):\n    return 0  # first-try\n"
NOTE = "Talked through broadcasting before coding."



def test_a_mock_interview_watched_live_and_scored(live_server: Any, settings: Any, celery_worker: Worker, browser: Browser) -> None:
    settings.CHALLENGES_DIR = FIXTURES
    assert challenge_sync_from_dir(FIXTURES).ok
    coach_user = User.objects.create_user("grace", password="pw-grace-hopper-1")
    coach_grant(coach_user)
    User.objects.create_user("ada", password="pw-ada-lovelace-1")
    User.objects.create_user("eve", password="pw-eve-intruder-1")
    base = live_server.url

    # The coach sets it up through the form and keeps the live view open.
    coach = browser.new_context().new_page()
    log_in(coach, base, "grace", "pw-grace-hopper-1")
    coach.click("#interviews-link")
    coach.click("#new-interview")
    coach.fill("#id_candidate", "ada")
    coach.check('.picker-row[data-slug="add-numbers"] input[name="challenges"]')
    coach.fill("#id_duration_minutes", "30")
    coach.click("#create-interview")
    expect(coach.locator("#live-state")).to_have_attribute("data-state", "scheduled")
    link = coach.locator("#candidate-link").inner_text().strip()
    assert link.startswith(base + "/interviews/join/")

    # The candidate opens the link: the clock starts, the countdown shows the server's time.
    candidate = browser.new_context().new_page()
    log_in(candidate, base, "ada", "pw-ada-lovelace-1")
    candidate.goto(link)
    countdown = candidate.locator("#countdown")
    expect(countdown).to_have_attribute("data-state", "live")
    expect(countdown).to_contain_text("29:")
    expect(coach.locator("#live-state")).to_have_attribute("data-state", "live")

    # Typed code is autosaved, and the coach's page shows it without a reload.
    section = coach.locator('.live-challenge[data-slug="add-numbers"]')
    replace_code(candidate, FIRST_TRY)
    expect(section.locator(".latest-code")).to_contain_text("first-try", timeout=10_000)
    replace_code(candidate, SOLUTION)
    expect(candidate.locator("#autosave-status")).not_to_have_attribute("data-saved-at", "", timeout=10_000)
    expect(section.locator(".latest-code")).to_contain_text("interview-solution-marker", timeout=10_000)
    # The replay follows the candidate: at the latest autosave its code is the "Latest code" above, not shown twice.
    # (Play, speed, markers and diffs: test_interview_replay.py.)
    player = coach.locator('.replay[data-slug="add-numbers"]')
    expect(player.locator(".replay-code-note")).to_contain_text("At the latest autosave", timeout=10_000)
    expect(player.locator(".replay-code")).to_be_hidden()

    # The candidate submits; the coach sees the submission and then its score.
    candidate.click("#submit")
    expect(candidate.locator("#score")).to_contain_text("100", timeout=120_000)
    row = section.locator("tbody.submissions tr[data-kind=submit]")
    expect(row).to_have_attribute("data-status", "done", timeout=15_000)
    expect(row.locator("td.score")).to_have_text("100.0")

    # The coach assesses and ends the interview.
    for criterion, score in (("correctness", "4"), ("debugging", "3"), ("numerics", "4"), ("communication", "3")):
        coach.select_option(f'select[name="score-{criterion}"]', score)
    coach.fill('input[name="comment-numerics"]', "Chose np.add for broadcasting")
    coach.fill("#notes", NOTE)
    coach.select_option("#recommendation", "strong_yes")
    coach.click("#save-assessment")
    expect(coach.locator("#assess-status")).to_have_attribute("data-saved", "true")
    coach.once("dialog", lambda dialog: dialog.accept())
    coach.click("#end-interview")
    expect(coach.locator("#scorecard")).to_have_attribute("data-state", "ended")

    # The candidate's page locks by itself (its clock poll), and the server refuses more work.
    expect(countdown).to_have_attribute("data-state", "ended", timeout=10_000)
    expect(candidate.locator("#locked-banner")).to_contain_text("interviewer ended")
    expect(candidate.locator("#submit")).to_be_disabled()
    expect(candidate.locator("#run")).to_be_disabled()
    snapshots = Snapshot.objects.count()
    refused = candidate.request.post(link + "add-numbers/autosave", data="x = 1\n", headers={"X-CSRFToken": _csrf(candidate)})
    assert refused.status == 409 and "ended" in refused.json()["error"]
    assert Snapshot.objects.count() == snapshots

    # The scorecard has it all; the candidate never saw any of it.
    expect(coach.locator("#recommendation")).to_have_attribute("data-recommendation", "strong_yes")
    expect(coach.locator('#challenge-summary tr[data-slug="add-numbers"] td.best')).to_have_text("100.0")
    expect(coach.locator('#rubric tr[data-criterion="numerics"]')).to_contain_text("Chose np.add for broadcasting")
    expect(coach.locator('#rubric tr[data-criterion="correctness"] td.rubric-score')).to_have_text("4")
    expect(coach.locator("#notes")).to_contain_text(NOTE)
    expect(coach.locator('#events li[data-kind="submit"]')).to_contain_text("score 100.0")
    expect(coach.locator('#events li[data-kind="ended"]')).to_contain_text("Ended by the interviewer")
    candidate.reload()
    assert NOTE not in candidate.content() and "Chose np.add" not in candidate.content()

    # Denials: the link is no use to anyone else, and the candidate cannot watch.
    intruder = browser.new_context().new_page()
    log_in(intruder, base, "eve", "pw-eve-intruder-1")
    response = intruder.goto(link)
    assert response is not None and response.status == 404
    live_url = f"{base}/interviews/{Interview.objects.get().pk}/live/"
    response = candidate.goto(live_url)
    assert response is not None and response.status == 404  # not even whether the interview exists
    assert NOTE not in candidate.content()


def replace_code(page: Page, code: str) -> None:
    """Select all in the editor and type the code over it: one change, so no empty editor is ever autosaved."""
    page.click(".CodeMirror")
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(code)


def _csrf(page: Any) -> str:
    return str(page.locator("input[name=csrfmiddlewaretoken]").first.get_attribute("value"))
