"""The Learn page in Chromium: a candidate gives up (two steps, no script) and reads the common mistakes.

With ``LEARN_SCREENSHOTS`` set to a folder, the page is saved there at 1280 and 420 px.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from tests.browser.test_submit_in_browser import FIXTURES, candidate_on_challenge

pytestmark = pytest.mark.browser


def test_a_candidate_gives_up_and_reads_each_mistake_beside_the_reference(live_server: Any, settings: Any, browser: Browser) -> None:
    page = candidate_on_challenge(browser, live_server.url, settings, FIXTURES, "add-numbers")
    expect(page.locator("#learn-link")).to_have_count(0)
    page.locator("#give-up summary").click()
    page.click("#give-up-confirm")
    expect(page).to_have_url(f"{live_server.url}/challenges/add-numbers/learn/")
    expect(page.locator("#learn-why-open")).to_contain_text("You gave up on this challenge")
    mistakes = page.locator("#mistakes .mistake")
    assert mistakes.count() >= 1
    first = mistakes.first
    expect(first.locator(".mistake-diff .diff-add").first).to_be_visible()
    expect(page.locator("#reference")).to_contain_text("def add")
    shots = os.environ.get("LEARN_SCREENSHOTS")
    if shots:
        page.screenshot(path=str(Path(shots) / "learn-1280.png"), full_page=True)
    page.set_viewport_size({"width": 420, "height": 900})
    assert page.evaluate("document.documentElement.scrollWidth") <= 420, "the Learn page scrolls sideways at 420 px"
    if shots:
        page.screenshot(path=str(Path(shots) / "learn-420.png"), full_page=True)
    # Back on the challenge: the way in is a link now, and the catalogue says it was given up.
    page.goto(f"{live_server.url}/challenges/add-numbers/")
    expect(page.locator("#learn-link")).to_be_visible()
    page.goto(f"{live_server.url}/")
    expect(page.locator('[data-slug="add-numbers"] .mark')).to_contain_text("gave up")
