"""Drafts in Chromium: code typed on one device opens on another, and survives a new version of the challenge.

An unsent draft lived in one browser's local storage, per version: a second device opened the starter, and a
coach's new version (only its statement changed) silently replaced the code by the starter.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from tests.browser.test_submit_in_browser import ADA, ADA_PASSWORD, FIXTURES, candidate_on_challenge, log_in, type_into_editor
from web.challenges.services import challenge_sync_from_dir
from web.submissions.models import Draft

pytestmark = pytest.mark.browser

MINE = "import numpy as np\n\n\ndef add(a, b):\n    return np.add(a, b)  # typed on the laptop\n"


def test_a_draft_follows_the_user_to_another_device_and_a_new_version(live_server: Any, settings: Any, browser: Browser, tmp_path: Path) -> None:
    packages = tmp_path / "packages"
    shutil.copytree(FIXTURES, packages)
    laptop = candidate_on_challenge(browser, live_server.url, settings, packages, "add-numbers")
    type_into_editor(laptop, MINE)
    # Saved a moment after typing stops.
    for _ in range(50):
        if Draft.objects.filter(code=MINE).exists():
            break
        laptop.wait_for_timeout(100)
    assert Draft.objects.filter(code=MINE).exists(), "the draft never reached the server"

    phone = browser.new_context(viewport={"width": 420, "height": 900}).new_page()  # another device: no local storage
    log_in(phone, live_server.url, ADA, ADA_PASSWORD)
    phone.goto(f"{live_server.url}/challenges/add-numbers/")
    expect(phone.locator(".CodeMirror-code")).to_contain_text("# typed on the laptop")
    expect(phone.locator("#draft-changed")).to_have_count(0)

    statement = packages / "demo" / "add-numbers" / "statement.md"
    statement.write_text(statement.read_text() + "\nBoth arrays have the same shape.\n")
    assert challenge_sync_from_dir(packages).ok
    phone.reload()
    expect(phone.locator(".CodeMirror-code")).to_contain_text("# typed on the laptop")
    expect(phone.locator("#draft-changed")).to_contain_text("its statement")
