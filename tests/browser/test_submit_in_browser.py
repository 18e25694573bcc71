"""A candidate logs in, types a solution into the editor, submits and sees the score.

Real everything: headless Chromium (Debian's, driven by Playwright), the
Django live server, Redis, a Celery worker and the bwrap sandbox.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, expect

from tests.services import Worker
from web.challenges.services import challenge_sync_from_dir

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "packages"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic",
]  # fmt: skip

pytestmark = pytest.mark.browser



def log_in(page: Page, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit], input[type=submit]")
    expect(page).not_to_have_url(f"{base}/accounts/login/")


ADA, ADA_PASSWORD = "ada", "pw-ada-lovelace-1"


def candidate_on_challenge(browser: Browser, base: str, settings: Any, packages: Path, slug: str, *, viewport: dict | None = None) -> Page:
    """The usual start of a candidate's browser test: ``packages`` synced and served, ada signed in on ``slug``'s page."""
    settings.CHALLENGES_DIR = packages
    assert challenge_sync_from_dir(packages).ok
    User.objects.create_user(ADA, password=ADA_PASSWORD)
    page = browser.new_page(viewport=viewport or {"width": 1280, "height": 900})
    log_in(page, base, ADA, ADA_PASSWORD)
    page.goto(f"{base}/challenges/{slug}/")
    return page


def type_into_editor(page: Page, code: str) -> None:
    """Click into the CodeMirror editor, clear it, and type the code as text input."""
    page.click(".CodeMirror")
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    # insert_text sends the text as typed input without per-key auto-indentation.
    page.keyboard.insert_text(code)


def test_candidate_submits_in_the_browser_and_sees_the_score(live_server: Any, settings: Any, celery_worker: Worker, browser: Browser) -> None:
    page = candidate_on_challenge(browser, live_server.url, settings, FIXTURES, "add-numbers")
    expect(page.locator("#challenge-title")).to_have_text("Add numbers")
    type_into_editor(page, "import numpy as np\n\ndef add(a, b):\n    return np.add(a, b)\n")
    page.click("#submit")
    expect(page.locator("#score")).to_contain_text("100", timeout=120_000)
    expect(page.locator("#verdict")).to_contain_text("Accepted")

    # A wrong solution on Run: a lower score, and hints on request only, without a reload.
    type_into_editor(page, "def add(a, b):\n    return a\n")
    page.click("#run")
    expect(page.locator("#verdict")).to_contain_text("Wrong answer", timeout=120_000)
    expect(page.locator("#hints .hint-summary")).to_contain_text("None is shown until you ask")
    expect(page.locator("#hints")).not_to_contain_text("Check what your function returns")
    page.click("#hints .reveal-hint")  # the tier-1 hint of the failing probe is offered first
    expect(page.locator("#hints .hint-body")).to_contain_text("Check what your function returns")
    expect(page.locator("#hints .reveal-hint")).to_contain_text("Show the next hint")


def test_a_platform_failure_offers_regrade_and_the_page_shows_the_new_result(
    live_server: Any, settings: Any, celery_worker: Worker, browser: Browser
) -> None:
    """A submission the platform failed to grade (internal_error): the result panel offers Regrade,
    which grades the same code again in the real worker and shows the new result in place."""
    from web.challenges.models import Challenge
    from web.submissions.models import Status, Submission, Verdict

    settings.CHALLENGES_DIR = FIXTURES
    assert challenge_sync_from_dir(FIXTURES).ok
    ada = User.objects.create_user("ada", password="pw-ada-lovelace-1")
    challenge = Challenge.objects.get(slug="add-numbers")
    failed = Submission.objects.create(
        user=ada, challenge=challenge, version=challenge.current_version, kind="submit", status=Status.DONE,
        code="import numpy as np\n\ndef add(a, b):\n    return np.add(a, b)\n", verdict=Verdict.INTERNAL_ERROR,
        message="The platform could not grade this submission; press Regrade.",
    )  # fmt: skip
    page = browser.new_page()
    log_in(page, live_server.url, "ada", "pw-ada-lovelace-1")

    page.goto(f"{live_server.url}/challenges/add-numbers/")  # the latest submission is shown on load
    expect(page.locator("#verdict")).to_contain_text("Internal error")
    regrade = page.locator("#regrade")
    expect(regrade).to_be_visible()
    regrade.click()

    expect(page.locator("#verdict")).to_contain_text("Accepted", timeout=120_000)
    expect(page.locator("#score")).to_contain_text("100")
    expect(regrade).to_be_hidden()
    failed.refresh_from_db()
    assert (failed.verdict, failed.score, Submission.objects.count()) == ("accepted", 100.0, 1)  # graded in place
