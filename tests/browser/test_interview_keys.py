"""The interviewer follows the candidate keystroke by keystroke: two browsers, the ASGI server, the real Redis layer.

Headless Chromium with two contexts (two sessions): the coach's live view
and the candidate's interview page, served by the production ASGI app
(tests/browser/asgi_server.py) with the Redis channel layer and document
store of a real redis-server. The candidate types; the coach's view shows
the text, the cursor where the candidate's is and the selection, without
a reload and before any autosave could have shown it (the poll's block
stays hidden while the socket is live). The coach reloads and gets the
whole text and cursor at once; the candidate reloads and keeps what they
typed. No grading happens here, so no Celery worker is started.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, expect

from tests.browser.test_submit_in_browser import FIXTURES, log_in
from web.accounts.roles import coach_grant
from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir
from web.config.settings import channel_layers
from web.interviews.keys_store import doc_store
from web.interviews.services import interview_create

pytestmark = pytest.mark.browser

CURSOR = "(function (c) { return c.line + ':' + c.ch; })(window.interviewEditor.getCursor())"
SHOTS = Path(os.environ.get("KEYS_SCREENSHOTS", "/tmp/keys-screens"))



@pytest.fixture
def redis_layer(redis_url: str, settings: Any) -> Iterator[None]:
    """The keystroke relay on the real Redis (channel layer and document store), as deployed."""
    url = redis_url.rsplit("/", 1)[0] + "/2"
    settings.CHANNELS_URL = url
    settings.CHANNEL_LAYERS = channel_layers(url)
    yield
    doc_store.cache_clear()


def typed_view(coach: Page) -> Any:
    return coach.locator('.live-challenge[data-slug="add-numbers"] .keys-view')


def test_the_interviewer_sees_each_keystroke_cursor_and_selection_and_keeps_them_on_reload(
    live_server: Any, settings: Any, redis_layer: None, browser: Browser
) -> None:
    settings.CHALLENGES_DIR = FIXTURES
    assert challenge_sync_from_dir(FIXTURES).ok
    coach_user = User.objects.create_user("grace", password="pw-grace-hopper-1")
    coach_grant(coach_user)
    User.objects.create_user("ada", password="pw-ada-lovelace-1")
    interview = interview_create(coach_user, candidate_username="ada", challenges=[Challenge.objects.get(slug="add-numbers")], duration_minutes=30)
    base = live_server.url

    coach = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    log_in(coach, base, "grace", "pw-grace-hopper-1")
    coach.goto(f"{base}/interviews/{interview.pk}/live/")
    expect(coach.locator("#keys-status")).to_have_attribute("data-state", "live")

    candidate = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    log_in(candidate, base, "ada", "pw-ada-lovelace-1")
    candidate.goto(f"{base}/interviews/join/{interview.token}/")
    expect(candidate.locator(".editor-frame")).to_have_attribute("data-keys", "live")

    # The candidate's starter code reaches the coach's live editor (the page's first "reset").
    view = typed_view(coach)
    expect(view).to_be_visible()
    starter = candidate.evaluate("window.interviewEditor.getValue()")
    first_line = starter.splitlines()[0]
    expect(view.locator(".CodeMirror-code")).to_contain_text(first_line)
    expect(coach.locator('.live-challenge[data-slug="add-numbers"] .latest-code')).to_be_hidden()

    # Keystrokes, one by one: the text and the cursor follow.
    candidate.click(".CodeMirror")
    candidate.keyboard.press("Control+End")
    candidate.keyboard.press("Enter")
    candidate.keyboard.type("total = 42  # typed-live", delay=15)
    expect(view.locator(".CodeMirror-code")).to_contain_text("total = 42  # typed-live")
    cursor = candidate.evaluate(CURSOR)
    expect(view).to_have_attribute("data-cursor", cursor)
    expect(view.locator(".keys-cursor")).to_have_count(1)

    # A selection is drawn over the same text on the coach's side.
    candidate.keyboard.press("Shift+Home")
    selected = "Array.from(document.querySelectorAll('.keys-view .keys-selection')).map((e) => e.textContent).join('')"
    coach.wait_for_function(f"(t) => {selected} === t", arg="total = 42  # typed-live")
    moved = candidate.evaluate(CURSOR)
    assert moved != cursor
    expect(view).to_have_attribute("data-cursor", moved)
    SHOTS.mkdir(parents=True, exist_ok=True)
    coach.screenshot(path=str(SHOTS / "live-keys-1280.png"), full_page=True)
    coach.set_viewport_size({"width": 420, "height": 900})
    coach.screenshot(path=str(SHOTS / "live-keys-420.png"), full_page=True)
    assert coach.evaluate("document.documentElement.scrollWidth") <= 420
    coach.set_viewport_size({"width": 1280, "height": 900})
    candidate.screenshot(path=str(SHOTS / "candidate-1280.png"), full_page=True)

    # More typing over the selection, then the coach reloads: the whole text and the cursor at once.
    candidate.keyboard.type("answer = 6 * 7", delay=15)
    expect(view.locator(".CodeMirror-code")).to_contain_text("answer = 6 * 7")
    expect(view.locator(".CodeMirror-code")).not_to_contain_text("typed-live")
    coach.reload()
    expect(coach.locator("#keys-status")).to_have_attribute("data-state", "live")
    view = typed_view(coach)
    expect(view.locator(".CodeMirror-code")).to_contain_text("answer = 6 * 7")
    cursor = candidate.evaluate(CURSOR)
    expect(view).to_have_attribute("data-cursor", cursor)

    # The candidate reloads: the editor has what they typed, and typing goes on reaching the coach.
    candidate.reload()
    expect(candidate.locator(".editor-frame")).to_have_attribute("data-keys", "live")
    assert "answer = 6 * 7" in candidate.evaluate("window.interviewEditor.getValue()")
    candidate.click(".CodeMirror")
    candidate.keyboard.press("Control+End")
    candidate.keyboard.type("  # after-reload", delay=15)
    expect(view.locator(".CodeMirror-code")).to_contain_text("answer = 6 * 7  # after-reload")
    text = candidate.evaluate("window.interviewEditor.getValue()")
    assert coach.evaluate("document.querySelector('.keys-view .CodeMirror').CodeMirror.getValue()") == text

    # Following off: the coach's view stays where the coach scrolled while the candidate types far below.
    view = typed_view(coach)
    follow = coach.locator(".keys-follow input")
    expect(follow).to_be_checked()
    follow.uncheck()
    expect(view).to_have_attribute("data-follow", "off")
    scroller = ".keys-view .CodeMirror-scroll"
    coach.eval_on_selector(scroller, "node => { node.scrollTop = 0; }")
    candidate.keyboard.type("\n" * 40 + "far = 1", delay=5)
    coach.wait_for_function("() => document.querySelector('.keys-view .CodeMirror').CodeMirror.getValue().includes('far = 1')")
    assert coach.eval_on_selector(scroller, "node => node.scrollTop") == 0
    expect(view.locator(".CodeMirror-code")).not_to_contain_text("far = 1")  # drawn lines are the ones in view
    follow.check()  # on again: back to the cursor at once
    expect(view.locator(".CodeMirror-code")).to_contain_text("far = 1")

    # The replay steps through every keystroke the relay applied, not only the autosaves (issue 29).
    player = coach.locator('#replay .replay[data-slug="add-numbers"]')
    expect(player).to_have_attribute("data-code-source", "keys", timeout=20_000)
    coach.wait_for_function(
        "() => Number(document.querySelector('#replay .replay[data-slug=\"add-numbers\"]').dataset.keyStates) > 20"
    )
    player.locator("input[type=range]").evaluate("node => { node.value = String(Number(node.max) / 2); node.dispatchEvent(new Event('input')); }")
    expect(player.locator(".replay-code-note")).to_contain_text("as typed, keystroke at")


def test_the_candidate_cannot_watch_and_a_stranger_cannot_send(live_server: Any, settings: Any, browser: Browser) -> None:
    settings.CHALLENGES_DIR = FIXTURES
    assert challenge_sync_from_dir(FIXTURES).ok
    coach_user = User.objects.create_user("grace", password="pw-grace-hopper-1")
    coach_grant(coach_user)
    User.objects.create_user("ada", password="pw-ada-lovelace-1")
    User.objects.create_user("eve", password="pw-eve-intruder-1")
    interview = interview_create(coach_user, candidate_username="ada", challenges=[Challenge.objects.get(slug="add-numbers")], duration_minutes=30)
    base = live_server.url
    socket_base = base.replace("http://", "ws://")

    def socket_answer(page: Page, path: str) -> dict[str, Any]:
        """Open a socket from the page (its cookie, its origin) and report the first message and the close code."""
        return page.evaluate(
            """(url) => new Promise((resolve) => {
                const ws = new WebSocket(url); let first = null;
                ws.onmessage = (e) => { if (!first) first = JSON.parse(e.data); };
                ws.onclose = (e) => resolve({code: e.code, first: first});
            })""",
            socket_base + path,
        )

    eve = browser.new_context().new_page()
    log_in(eve, base, "eve", "pw-eve-intruder-1")
    answer = socket_answer(eve, f"/ws/interviews/join/{interview.token}/keys/")
    assert answer["code"] == 4404 and answer["first"]["type"] == "refused"
    answer = socket_answer(eve, f"/ws/interviews/{interview.pk}/keys/")
    assert answer["code"] == 4404

    ada = browser.new_context().new_page()
    log_in(ada, base, "ada", "pw-ada-lovelace-1")
    answer = socket_answer(ada, f"/ws/interviews/{interview.pk}/keys/")
    assert answer["code"] == 4404 and answer["first"] == {"type": "refused", "status": 404, "message": "No such interview."}


def test_with_the_socket_down_the_view_polls_and_nothing_typed_meanwhile_is_lost(
    live_server: Any, settings: Any, redis_layer: None, browser: Browser
) -> None:
    settings.CHALLENGES_DIR = FIXTURES
    assert challenge_sync_from_dir(FIXTURES).ok
    coach_user = User.objects.create_user("grace", password="pw-grace-hopper-1")
    coach_grant(coach_user)
    User.objects.create_user("ada", password="pw-ada-lovelace-1")
    interview = interview_create(coach_user, candidate_username="ada", challenges=[Challenge.objects.get(slug="add-numbers")], duration_minutes=30)
    base = live_server.url
    # The sockets of both pages go through these switches: closed by "the network" while off.
    up = {"coach": False, "candidate": True}
    open_sockets: dict[str, Any] = {}

    def switch(who: str) -> Any:
        def handler(ws: Any) -> None:
            if up[who]:
                ws.connect_to_server()
                open_sockets[who] = ws
            else:
                ws.close(code=1011, reason="network down")

        return handler

    candidate = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    candidate.route_web_socket("**/keys/", switch("candidate"))
    log_in(candidate, base, "ada", "pw-ada-lovelace-1")
    candidate.goto(f"{base}/interviews/join/{interview.token}/")
    expect(candidate.locator(".editor-frame")).to_have_attribute("data-keys", "live")
    candidate.click(".CodeMirror")
    candidate.keyboard.press("Control+End")
    candidate.keyboard.type("# saved-by-autosave")
    expect(candidate.locator("#autosave-status")).not_to_have_attribute("data-saved-at", "", timeout=10_000)

    # The coach's socket cannot connect: after a few tries the view says so and shows the autosave.
    coach = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    coach.route_web_socket("**/keys/", switch("coach"))
    log_in(coach, base, "grace", "pw-grace-hopper-1")
    coach.goto(f"{base}/interviews/{interview.pk}/live/")
    status = coach.locator("#keys-status")
    expect(status).to_have_attribute("data-state", "polling", timeout=15_000)
    expect(status).to_have_text("Polling autosaves")
    section = coach.locator('.live-challenge[data-slug="add-numbers"]')
    expect(section.locator(".latest-code")).to_contain_text("# saved-by-autosave", timeout=10_000)
    expect(section.locator(".keys-view")).to_be_hidden()
    coach.screenshot(path=str(SHOTS / "live-polling-1280.png"), full_page=True)

    # The candidate's socket drops too, and they type on: nothing of it reaches the server yet.
    up["candidate"] = False
    open_sockets["candidate"].close(code=1011, reason="network down")
    expect(candidate.locator(".editor-frame")).to_have_attribute("data-keys", "reconnecting", timeout=15_000)
    candidate.keyboard.press("Enter")
    candidate.keyboard.type("while_down = True")
    stored = doc_store().get_many([f"mlprep:keys:{interview.pk}:add-numbers"])[0]
    assert stored is not None and "# saved-by-autosave" in stored["text"] and "while_down" not in stored["text"]

    # Both come back: the coach's view goes live with everything, including what was typed while down.
    up["coach"] = True
    up["candidate"] = True
    expect(status).to_have_attribute("data-state", "live", timeout=20_000)
    view = section.locator(".keys-view")
    expect(view.locator(".CodeMirror-code")).to_contain_text("while_down = True", timeout=20_000)
    expect(section.locator(".latest-code")).to_be_hidden()
    assert coach.evaluate("document.querySelector('.keys-view .CodeMirror').CodeMirror.getValue()") == candidate.evaluate(
        "window.interviewEditor.getValue()"
    )
