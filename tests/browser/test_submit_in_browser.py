"""A candidate logs in, types a solution into the editor, submits and sees the score.

Real everything: headless Chromium (Debian's, driven by Playwright), the
Django live server, Redis, a Celery worker and the bwrap sandbox.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.services import Worker
from web.challenges.services import challenge_sync_from_dir
from web.submissions.models import Submission

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


def fits_its_width_once_redrawn(page: Page, selector: str) -> bool:
    """Whether the node ``selector`` names is no wider than its box, once the page has settled after a viewport resize.

    Chart.js redraws its canvases a moment after the viewport changes, so a
    check made at once can see the old, wider canvas; this waits up to 5 s
    for the node to fit and answers False only if it never does.
    """
    fits = f"() => {{ const node = document.querySelector({selector!r}); return node.scrollWidth <= node.clientWidth; }}"
    try:
        page.wait_for_function(fits, timeout=5_000)
    except PlaywrightTimeout:
        return False
    return True


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
    expect(page.locator("#action-status")).to_have_text(re.compile(r"Run #\d+ · Wrong answer · \d"))
    expect(page.locator("#verdict")).to_be_in_viewport()  # the page scrolled to the result it was waiting for
    expect(page.locator("#hints .hint-summary")).to_contain_text("None is shown until you ask")
    expect(page.locator("#hints")).not_to_contain_text("Check what your function returns")
    page.click("#hints .reveal-hint")  # the tier-1 hint of the failing probe is offered first
    expect(page.locator("#hints .hint-body")).to_contain_text("Check what your function returns")
    expect(page.locator("#hints .reveal-hint")).to_contain_text("Show the next hint")


def test_a_syntax_error_is_one_message_and_a_marked_line_in_the_editor(
    live_server: Any, settings: Any, celery_worker: Worker, browser: Browser
) -> None:
    """It was said once in words and then as one identical "not run" card per probe, with the line unmarked."""
    page = candidate_on_challenge(browser, live_server.url, settings, FIXTURES, "add-numbers")
    type_into_editor(page, "import numpy as np\n\n\ndef add(a, b)\n    return np.add(a, b)\n")
    page.click("#submit")
    expect(page.locator("#verdict")).to_contain_text("Syntax error", timeout=120_000)
    # Said where the candidate looks (beside the buttons), whole, with the editor and its marked line left in view.
    status = page.locator("#action-status")
    expect(status).to_have_text(re.compile(r"Submit #\d+ · SyntaxError on line 4: expected ':'"))
    expect(page.locator("#result-message")).to_contain_text("SyntaxError on line 4")
    expect(page.locator("#probes > li")).to_have_count(1)
    expect(page.locator("#probes .probes-not-run")).to_have_text(re.compile(r"None of the \d+ probes ran: the code does not compile\."))
    marked = page.locator(".CodeMirror .cm-error-line")
    expect(marked).to_have_count(1)
    expect(page.locator(".CodeMirror-code > div").nth(3).locator(".cm-error-line")).to_have_count(1)  # line 4, the def
    expect(marked).to_be_in_viewport()
    if os.environ.get("RESULT_PANEL_SCREENSHOTS"):
        page.screenshot(path=str(Path(os.environ["RESULT_PANEL_SCREENSHOTS"]) / "syntax-error-1280.png"))
    # Fixed and run again: the mark goes with the error.
    type_into_editor(page, "import numpy as np\n\n\ndef add(a, b):\n    return np.add(a, b)\n")
    page.click("#run")
    expect(page.locator("#verdict")).to_contain_text("Accepted", timeout=120_000)
    expect(marked).to_have_count(0)
    expect(status).to_have_attribute("data-verdict", "accepted")
    # A refusal is said there too, at once, in the editor's view (it rendered below the fold, unseen).
    page.evaluate("window.scrollTo(0, 0)")
    type_into_editor(page, "   \n")
    page.click("#run")
    expect(status).to_have_attribute("data-state", "refused")
    expect(status).to_contain_text("empty")
    expect(status).to_be_in_viewport()


def test_a_grading_that_never_ends_is_cancelled_from_the_page(live_server: Any, settings: Any, celery_worker: Worker, browser: Browser) -> None:
    """Code that never ends: the Cancel beside the result stops it within seconds; nothing is scored (issue 29)."""
    page = candidate_on_challenge(browser, live_server.url, settings, FIXTURES, "add-numbers")
    type_into_editor(page, "import time\n\ndef add(a, b):\n    time.sleep(3600)\n")
    page.click("#submit")
    expect(page.locator("#result")).to_have_attribute("data-status", "running", timeout=120_000)
    cancel = page.locator("#cancel")
    expect(cancel).to_be_visible()
    expect(cancel).to_have_text("Cancel")
    cancel.click()
    # Within the cancel watch's second and the sandbox's kill: well before the first probe's 3 s limit runs out twice.
    expect(page.locator("#verdict")).to_have_text("Cancelled", timeout=30_000)
    expect(page.locator("#score")).to_have_text("\u2013")  # no score
    expect(page.locator("#result-message")).to_contain_text("Nothing was scored")
    expect(page.locator("#action-status")).to_have_text(re.compile(r"Submit #\d+ · Cancelled"))
    expect(cancel).to_be_hidden()
    expect(page.locator("#submit")).to_be_enabled()  # the page is free for the next try
    submission = Submission.objects.get()
    assert (submission.status, submission.verdict, submission.score) == ("done", "cancelled", None)


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
