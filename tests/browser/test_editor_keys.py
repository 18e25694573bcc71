"""The code editor as a keyboard user and a big paste meet it: Tab indents, Esc then Tab leaves, few lines drawn.

Real Chromium (Playwright) on the live server; nothing is graded, so no
worker is started.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, expect

from tests.browser.test_submit_in_browser import FIXTURES, log_in
from web.challenges.services import challenge_sync_from_dir

pytestmark = pytest.mark.browser


def open_challenge(page: Page, live_server: Any, settings: Any) -> None:
    settings.CHALLENGES_DIR = FIXTURES
    assert challenge_sync_from_dir(FIXTURES).ok
    User.objects.create_user("grace", password="pw-grace-hopper-1")
    log_in(page, live_server.url, "grace", "pw-grace-hopper-1")
    page.goto(f"{live_server.url}/challenges/add-numbers/")
    expect(page.locator(".CodeMirror")).to_be_visible()


def test_tab_indents_and_esc_then_tab_reaches_run(live_server: Any, settings: Any, browser: Browser) -> None:
    page = browser.new_page()
    open_challenge(page, live_server, settings)
    page.click(".CodeMirror")
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.press("Tab")
    page.keyboard.insert_text("pass")
    # Tab typed four spaces into the code, and the focus stayed in the editor.
    assert page.evaluate("document.querySelector('.CodeMirror').CodeMirror.getValue()") == "    pass"
    assert page.evaluate("document.activeElement.closest('.CodeMirror') !== null")

    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "run", page.evaluate("document.activeElement.outerHTML.slice(0, 300)")
    # The way out is written on the page, and so are the keys that run and submit.
    expect(page.locator("#editor-keys")).to_contain_text("Esc then Tab leaves the editor")
    expect(page.locator("#editor-keys")).to_contain_text("Ctrl+Enter runs, Ctrl+Shift+Enter submits")

    # Shift-Tab from Run goes back into the editor, which Tab typed into before: the loop is closed both ways.
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.closest('.CodeMirror') !== null")


def test_a_large_paste_draws_only_the_lines_in_view(live_server: Any, settings: Any, browser: Browser) -> None:
    page = browser.new_page()
    open_challenge(page, live_server, settings)
    lines = page.evaluate(
        """() => {
            const cm = document.querySelector('.CodeMirror').CodeMirror;
            cm.setValue(Array.from({length: 20000}, (_, i) => 'x_' + i + ' = ' + i).join('\\n'));
            return {drawn: document.querySelectorAll('.CodeMirror-code > div').length, total: cm.lineCount()};
        }"""
    )
    assert lines["total"] == 20000
    assert lines["drawn"] < 200, lines  # CodeMirror's viewport, not the 20,000 lines
    # The editor can be dragged taller or shorter.
    assert page.evaluate("getComputedStyle(document.querySelector('.CodeMirror')).resize") == "vertical"
