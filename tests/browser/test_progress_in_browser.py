"""A candidate submits an accepted solution, then finds it on the progress page, the history and the catalogue.

Real everything, as in test_submit_in_browser.py: headless Chromium (Debian's, driven by Playwright),
the Django live server, Redis, a Celery worker and the bwrap sandbox grading the fixture package add-numbers.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, expect, sync_playwright

from tests.browser.test_submit_in_browser import CHROMIUM, CHROMIUM_ARGS, FIXTURES, log_in, type_into_editor
from tests.services import Worker
from web.challenges.services import challenge_sync_from_dir

pytestmark = pytest.mark.browser

ACCEPTED = "import numpy as np\n\ndef add(a, b):\n    return np.add(a, b)\n"


@pytest.fixture
def chromium() -> Iterator[Browser]:
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # the live server's event loop, as in test_submit_in_browser
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def test_an_accepted_submit_shows_as_solved_on_progress_history_and_catalogue(
    live_server: Any, settings: Any, celery_worker: Worker, chromium: Browser
) -> None:
    settings.CHALLENGES_DIR = FIXTURES
    assert challenge_sync_from_dir(FIXTURES).ok
    User.objects.create_user("ada", password="pw-ada-lovelace-1")
    base = live_server.url
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    log_in(page, base, "ada", "pw-ada-lovelace-1")

    # Before any attempt: not started everywhere, and the catalogue card carries no mark.
    page.click("#progress-link")
    expect(page.locator('tr[data-slug="add-numbers"]')).to_have_attribute("data-state", "not_started")
    expect(page.locator("#chart-empty")).to_be_visible()

    page.goto(f"{base}/challenges/add-numbers/")
    type_into_editor(page, ACCEPTED)
    page.click("#submit")
    expect(page.locator("#verdict")).to_contain_text("Accepted", timeout=120_000)

    # The progress page: solved, best score 100, one submit, the chart drawn from it.
    page.goto(f"{base}/progress/")
    row = page.locator('tr[data-slug="add-numbers"]')
    expect(row).to_have_attribute("data-state", "solved")
    expect(row.locator(".state")).to_have_text("Solved")
    expect(row.locator('td[data-label="Best score"]')).to_have_text("100.0")
    expect(row.locator('td[data-label="Last attempt"]')).to_contain_text("Accepted")
    expect(page.locator('#score-canvas[data-view="all"]')).to_have_attribute("data-points", "1")
    solved = page.locator("#progress-summary")
    expect(solved).to_have_attribute("data-solved", "1")

    # The last attempt opens the submission's own page: the candidate's view, drawn by the result panel.
    row.locator('td[data-label="Last attempt"] a').click()
    expect(page.locator('#result[data-status="done"]')).to_be_visible()
    expect(page.locator("#verdict")).to_have_text("Accepted")
    expect(page.locator("#submitted-code")).to_contain_text("np.add(a, b)")

    # The history, filtered by a GET form: the Submit is there, and not among the Runs.
    page.goto(f"{base}/submissions/")
    page.select_option("#filter-kind", "run")
    page.click("#apply-filters")
    expect(page.locator(".history-empty")).to_contain_text("No submissions match these filters.")
    page.select_option("#filter-kind", "submit")
    page.click("#apply-filters")
    expect(page.locator("tr[data-submission]")).to_have_count(1)
    expect(page.locator("tr[data-submission]")).to_have_attribute("data-verdict", "accepted")

    # The catalogue marks it solved, and at 420 px nothing on the progress page scrolls sideways.
    page.goto(f"{base}/")
    card = page.locator('li.card[data-slug="add-numbers"]')
    expect(card).to_have_attribute("data-state", "solved")
    expect(card.locator(".mark")).to_contain_text("Solved")
    page.set_viewport_size({"width": 420, "height": 900})
    page.goto(f"{base}/progress/")
    expect(page.locator('tr[data-slug="add-numbers"]')).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 420
