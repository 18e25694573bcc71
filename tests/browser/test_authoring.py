"""A coach writes a challenge in the browser, validates and publishes it; a candidate then opens it.

Real everything, as in test_submit_in_browser.py: headless Chromium, the
live server, Redis, a Celery worker and the bwrap sandbox. The package is
tiny (python runtime, two probes), so Validate takes seconds.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, expect

from tests.browser.test_submit_in_browser import log_in
from tests.services import Worker
from web.accounts.roles import coach_grant
from web.challenges.models import Challenge

pytestmark = pytest.mark.browser

REFERENCE = "def solve(x):\n    return 3 * x\n"
PUBLIC = (
    "from probekit import probe\n\n\n"
    '@probe(category="correctness")\ndef small(solution):\n    """Triples 0, 1 and 2."""\n'
    "    return [solution.solve(x) for x in (0, 1, 2)]\n"
)
HIDDEN = (
    "from probekit import probe\n\n\n"
    '@probe(category="correctness", hints=["basics"])\ndef many(solution):\n    """Triples -20..20."""\n'
    "    return [solution.solve(x) for x in range(-20, 21)]\n"
)


def type_into_code_editor(page: Page, name: str, code: str) -> None:
    """Replace the text of the CodeMirror editor that stands for textarea[name=name]."""
    editor = page.locator(f"textarea[name={name}] + .CodeMirror")
    editor.click()
    # CodeMirror moves the focus to its input a moment after the click; keys sent before go to the page.
    expect(editor).to_have_class(re.compile(r"\bCodeMirror-focused\b"))
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(code)  # as typed input, without auto-indentation


def test_a_coach_authors_validates_and_publishes_and_a_candidate_opens_it(
    live_server: Any, celery_worker: Worker, browser: Browser
) -> None:
    coach = User.objects.create_user("grace", password="pw-grace-hopper-1")
    coach_grant(coach)
    User.objects.create_user("ada", password="pw-ada-lovelace-1")
    base = live_server.url

    page = browser.new_page()
    log_in(page, base, "grace", "pw-grace-hopper-1")
    page.click("#author-link")
    page.click("#new-challenge")
    page.fill("#id_slug", "triple-it")
    page.fill("#id_title", "Triple it")
    page.fill("#id_track", "basics")
    page.fill("#id_summary", "Return three times the input.")
    page.select_option("#id_runtime", "python")
    page.fill("#id_statement", "# Triple it\n\nReturn **three times** the input.\n\n<script>window.__xss = 1</script>\n")
    # The preview arrives while typing, rendered and sanitised by the server.
    expect(page.locator("#statement-preview strong")).to_have_text("three times")
    expect(page.locator("#statement-preview h1")).to_have_text("Triple it")
    assert page.locator("#statement-preview script").count() == 0
    type_into_code_editor(page, "reference", REFERENCE)
    type_into_code_editor(page, "public_probes", PUBLIC)
    type_into_code_editor(page, "hidden_probes", HIDDEN)
    page.click("#save")

    expect(page).to_have_url(f"{base}/author/triple-it/")
    expect(page.locator("textarea[name=reference] + .CodeMirror")).to_contain_text("return 3 * x")
    expect(page.locator("#state")).to_have_attribute("data-state", "draft")
    expect(page.locator("#publish")).to_be_disabled()

    navigations: list[str] = []
    page.on("framenavigated", lambda frame: navigations.append(frame.url))
    page.click("#validate")
    expect(page.locator("#validation")).to_have_attribute("data-status", "done", timeout=60_000)
    expect(page.locator("#validation-verdict")).to_have_text("Passed")
    expect(page.locator("#validation-lines")).to_contain_text("reference, hidden: 100%")
    assert navigations == [], "the report must arrive without a reload"
    expect(page.locator("#publish")).to_be_enabled()
    page.click("#publish")
    expect(page.locator("#state")).to_have_attribute("data-state", "published")
    challenge = Challenge.objects.get(slug="triple-it")
    assert challenge.published and challenge.current_version == challenge.draft_version

    candidate = browser.new_page()
    log_in(candidate, base, "ada", "pw-ada-lovelace-1")
    candidate.goto(f"{base}/")
    candidate.click("text=Triple it")
    expect(candidate.locator("#challenge-title")).to_have_text("Triple it")
    expect(candidate.locator("#statement strong")).to_have_text("three times")
    assert candidate.locator("#author-link").count() == 0
    denied = candidate.goto(f"{base}/author/")
    assert denied is not None and denied.status == 403
