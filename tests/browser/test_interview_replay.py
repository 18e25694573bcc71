"""The interviewer's seat in two browsers: a failed run's probe details, markers, replay at 8x and a diff of two points.

Real everything, as in test_mock_interview.py: headless Chromium with two
browser contexts (the interviewer, the candidate), the live server, Redis,
a Celery worker and the bwrap sandbox, on the python-runtime fixture
package. The candidate runs wrong code (a failing Run), leaves the tab and
comes back, submits the same wrong code; the interviewer, in the live view,
follows the run to its page with every probe's values and diff, takes a
note at that moment, sees the markers (the submit with its verdict, the
focus change, the note), ends the interview and, from the scorecard, plays
the replay at 8x to its end and diffs the first code against the last.
Candidates and another coach get 404 on the run's page, its JSON and the replay.

Headless Chromium keeps every tab "visible" and focused whatever is in
front, so the tab switch is what the browser would tell the page:
document.visibilityState and hasFocus() changed, then visibilitychange and
blur (and back: visible, focus) dispatched.

With REPLAY_SCREENSHOTS=<folder>, the live view and the replay are saved at
1280 and 420 px wide; at 420 px nothing may overflow sideways either way.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, expect

from tests.browser.test_mock_interview import replace_code
from tests.browser.test_submit_in_browser import FIXTURES, fits_its_width_once_redrawn, log_in
from tests.services import Worker
from web.accounts.roles import coach_grant
from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir
from web.interviews.models import FocusEvent
from web.interviews.services import interview_create

pytestmark = pytest.mark.browser

WRONG = "import numpy as np\n\ndef add(a, b):\n    return np.subtract(a, b)  # first-try\n"
SOLUTION = "import numpy as np\n\ndef add(a, b):\n    # interview-solution-marker\n    return np.add(a, b)\n"
NOTE = "Reads the failing probe before changing anything."

LEAVE_TAB = """() => {
  const set = (hidden) => {
    Object.defineProperty(document, "visibilityState", { value: hidden ? "hidden" : "visible", configurable: true });
    Object.defineProperty(document, "hidden", { value: hidden, configurable: true });
    document.hasFocus = () => !hidden;
  };
  set(true);
  document.dispatchEvent(new Event("visibilitychange"));
  window.dispatchEvent(new Event("blur"));
  window.__comeBack = () => { set(false); document.dispatchEvent(new Event("visibilitychange")); window.dispatchEvent(new Event("focus")); };
}"""



def shoot(page: Page, name: str) -> None:
    """At 1280 and 420 px: saved when REPLAY_SCREENSHOTS names a folder; the 420 px page must not overflow sideways."""
    shots = os.environ.get("REPLAY_SCREENSHOTS")
    for width in (1280, 420):
        page.set_viewport_size({"width": width, "height": 900})
        if width == 420:
            fits = fits_its_width_once_redrawn(page, "html")
            wide = page.evaluate("""() => [...document.querySelectorAll('body *')]
                .filter(n => n.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
                .slice(0, 8).map(n => n.tagName + '.' + n.className + ' ' + Math.round(n.getBoundingClientRect().right))""")
            assert fits, f"{name} overflows at 420 px: {wide}"
        if shots:
            page.evaluate("window.scrollTo(0, 0)")  # the sticky header stays at the top of a full-page shot
            page.screenshot(path=str(Path(shots) / f"{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def test_the_interviewer_opens_a_failed_run_and_replays_with_markers(
    live_server: Any, settings: Any, celery_worker: Worker, browser: Browser
) -> None:
    settings.CHALLENGES_DIR = FIXTURES
    assert challenge_sync_from_dir(FIXTURES).ok
    coach_user = User.objects.create_user("grace", password="pw-grace-hopper-1")
    coach_grant(coach_user)
    other_coach = User.objects.create_user("otto", password="pw-otto-coach-1")
    coach_grant(other_coach)
    User.objects.create_user("ada", password="pw-ada-lovelace-1")
    interview = interview_create(coach_user, candidate_username="ada", challenges=[Challenge.objects.get(slug="add-numbers")], duration_minutes=30)
    base = live_server.url

    coach = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    log_in(coach, base, "grace", "pw-grace-hopper-1")
    coach.goto(f"{base}/interviews/{interview.pk}/live/")
    candidate = browser.new_context().new_page()
    log_in(candidate, base, "ada", "pw-ada-lovelace-1")
    candidate.goto(f"{base}/interviews/join/{interview.token}/")
    expect(candidate.locator("#countdown")).to_have_attribute("data-state", "live")
    expect(candidate.locator("#focus-notice")).to_contain_text("sees your code as you type it")
    expect(candidate.locator("#focus-notice")).to_contain_text("when this page is hidden")

    # The candidate runs wrong code: the public probes fail.
    replace_code(candidate, WRONG)
    candidate.click("#run")
    expect(candidate.locator("#verdict")).to_have_attribute("data-verdict", "wrong_answer", timeout=120_000)

    # ... leaves the tab and comes back (two moments, one each way) ...
    candidate.evaluate(LEAVE_TAB)
    wait_for(lambda: FocusEvent.objects.filter(state="lost").count() == 1)
    candidate.evaluate("() => window.__comeBack()")
    wait_for(lambda: FocusEvent.objects.filter(state="regained").count() == 1)

    # ... and submits the same wrong code: a failed submit.
    candidate.click("#submit")
    expect(candidate.locator("#result")).to_have_attribute("data-kind", "submit")
    expect(candidate.locator("#result")).to_have_attribute("data-status", "done", timeout=120_000)
    submit_verdict = candidate.locator("#verdict").get_attribute("data-verdict")
    assert submit_verdict and submit_verdict != "accepted"

    # The interviewer follows the failed run to its page: every probe, values and diff (a Run's probes are public).
    section = coach.locator('.live-challenge[data-slug="add-numbers"]')
    run_row = section.locator("tbody.submissions tr[data-kind=run]")
    expect(run_row).to_have_attribute("data-status", "done", timeout=15_000)
    expect(run_row.locator("td.verdict")).to_have_text("Wrong answer")
    shoot(coach, "live-view")
    with coach.expect_navigation():
        run_row.locator("a.run-link").click()
    run_url = coach.url
    assert f"/interviews/{interview.pk}/submissions/" in run_url
    expect(coach.locator("#run-facts")).to_have_attribute("data-verdict", "wrong_answer")
    failing = coach.locator("#probes li.probe-fail").first
    expect(failing).to_be_visible()
    expect(failing.locator(".diff, .compare")).not_to_have_count(0)
    expect(coach.locator("#submitted-code")).to_contain_text("first-try")
    shoot(coach, "run-details")

    # The submit's page shows the hidden probes' own messages to the interviewer.
    coach.go_back()
    submit_row = section.locator("tbody.submissions tr[data-kind=submit]")
    expect(submit_row).to_have_attribute("data-status", "done", timeout=15_000)
    submit_url = submit_row.locator("a.run-link").get_attribute("href")

    # A note at this moment, then the markers on the live view's replay.
    coach.fill("#moment-note", NOTE)
    coach.click("#add-moment-note")
    expect(coach.locator("#moment-note-status")).to_have_attribute("data-saved", "true")
    player = coach.locator('.replay[data-slug="add-numbers"]')
    expect(player.locator('.replay-marker[data-kind="note"]')).to_have_count(1, timeout=10_000)
    expect(player.locator(f'.replay-marker[data-kind="submit"][data-verdict="{submit_verdict}"]')).to_have_count(1)
    expect(player.locator('.replay-marker[data-kind="run"][data-verdict="wrong_answer"]')).to_have_count(1)
    expect(player.locator('.replay-marker[data-kind="focus"][data-state="lost"]')).to_have_count(1)
    expect(player.locator('.replay-marker[data-kind="focus"][data-state="regained"]')).to_have_count(1)
    # Markers a moment apart overlap on a short timeline (the candidate came back within a second): the keyboard
    # reaches each one whatever is drawn on top of it.
    press(player.locator('.replay-marker[data-kind="focus"][data-state="lost"]'))
    expect(player.locator(".replay-moment")).to_contain_text("Left the interview: tab hidden")
    player.locator(".replay-moments summary").click()
    shoot(coach, "live-replay")

    # The candidate writes the solution (autosaved); the interviewer ends the interview and replays from the scorecard.
    replace_code(candidate, SOLUTION)
    expect(section.locator(".latest-code")).to_contain_text("interview-solution-marker", timeout=10_000)
    coach.once("dialog", lambda dialog: dialog.accept())
    coach.click("#end-interview")
    expect(coach.locator("#scorecard")).to_have_attribute("data-state", "ended")
    expect(coach.locator('#events li[data-kind="note"]')).to_contain_text(NOTE)
    expect(coach.locator('#events li[data-kind="focus"]').first).to_contain_text("Left the interview")
    expect(coach.locator('#events li[data-kind="run"] a.run-link')).to_have_attribute("href", run_url.removeprefix(base))

    player = coach.locator('.replay[data-slug="add-numbers"]')
    expect(player.locator(f'.replay-marker[data-kind="submit"][data-verdict="{submit_verdict}"]')).to_have_count(1)
    expect(player).to_have_attribute("data-at-end", "true")
    # Two points: A at the failed run (the wrong code), B at the end (the solution); the diff is line by line.
    press(player.locator('.replay-marker[data-kind="run"]'))
    expect(player.locator(".replay-moment")).to_contain_text("Run #")
    expect(player.locator(".replay-code")).to_contain_text("first-try")
    player.locator(".replay-set-a").click()
    player.locator(".replay-seek").fill(player.locator(".replay-seek").get_attribute("max") or "0")
    player.locator(".replay-set-b").click()
    expect(player).to_have_attribute("data-diff", "shown")
    expect(player.locator(".replay-diff .rdiff-add")).to_contain_text(["interview-solution-marker"])
    expect(player.locator(".replay-diff .rdiff-del").first).to_contain_text("first-try")
    assert player.locator(".replay-diff").evaluate("pre => pre.querySelectorAll('*').length === pre.querySelectorAll('span.rdiff-line').length")
    # The player's arithmetic, on the page's own code: an idle stretch (over 10 s without a moment) is skipped only
    # after a look at the moment before it, landing just before the next one; a short gap plays through.
    steps = coach.evaluate("""() => [
      InterviewReplay.advance([0, 5, 60], 5, 0.5, 1, 10, 70),
      InterviewReplay.advance([0, 5, 60], 5.5, 0.5, 1, 10, 70),
      InterviewReplay.advance([0, 5, 12], 5.5, 0.5, 1, 10, 70),
      InterviewReplay.advance([0, 5, 60], 5.5, 0.5, 8, 10, 70),
    ]""")
    assert steps == [{"t": 5.5, "skipped": 0}, {"t": 59.25, "skipped": 53.25}, {"t": 6, "skipped": 0}, {"t": 6, "skipped": 0}]
    assert coach.evaluate('() => InterviewReplay.lineDiff("a\\nb\\nc", "a\\nx\\nc\\nd").map(l => l.op + l.text)') == [
        "samea", "delb", "addx", "samec", "addd",
    ]  # fmt: skip
    # Play from the start at 8x: it runs to the end by itself, idle stretches skipped.
    player.locator(".replay-seek").fill("0")
    player.locator(".replay-speed").select_option("8")
    expect(player).to_have_attribute("data-speed", "8")
    player.locator(".replay-play").click()
    expect(player).to_have_attribute("data-playing", "true")
    expect(player.locator(".replay-idle-note")).to_contain_text("more than 10 s")
    expect(player).to_have_attribute("data-at-end", "true", timeout=60_000)
    expect(player).to_have_attribute("data-playing", "false")
    # At the end the code is the scorecard's "Final code": said, not shown twice.
    expect(player.locator(".replay-code-note")).to_contain_text("“Final code” below")
    expect(player.locator(".replay-code")).to_be_hidden()
    expect(coach.locator(".final-code")).to_contain_text("interview-solution-marker")
    shoot(coach, "scorecard-replay")

    # Back on the live view of the ended interview: no more notes at a moment (the server would refuse them too).
    coach.goto(f"{base}/interviews/{interview.pk}/live/")
    expect(coach.locator("#add-moment-note")).to_be_disabled()
    expect(coach.locator("#moment-note-closed")).to_be_visible()

    # Nobody else gets any of it: not the candidate, not another coach.
    intruder = browser.new_context().new_page()
    log_in(intruder, base, "otto", "pw-otto-coach-1")
    for page in (candidate, intruder):
        for url in (run_url, f"{base}{submit_url}", run_url.rstrip("/") + ".json", f"{base}/interviews/{interview.pk}/replay.json"):
            response = page.goto(url)
            assert response is not None and response.status == 404, (url, response.status if response else None)
            assert NOTE not in page.content() and "first-try" not in page.content()


def press(marker: Any) -> None:
    """Activate a marker as a keyboard user does: focus it, press Enter."""
    marker.focus()
    marker.press("Enter")


def wait_for(condition: Any, attempts: int = 100) -> None:
    """Poll the database until the page's report arrived (each attempt waits on the browser's clock, not a fixed sleep)."""
    import time

    for _ in range(attempts):
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError("the page's report never arrived")


def test_the_interviewer_follows_a_submit_on_its_page_as_it_is_graded(
    live_server: Any, settings: Any, celery_worker: Worker, browser: Browser
) -> None:
    """count-slowly's probes each take most of a second: the interviewer's page of a Submit shows its probes'
    lines while it runs (every line, the interviewer's view), then the whole result of the hidden probes."""
    from django.urls import reverse

    from tests.browser.test_live_progress import LIVE_PACKAGES, RECORD_STATES
    from tests.browser.test_live_progress import WRONG as SLOW_WRONG
    from web.submissions.models import Submission

    settings.CHALLENGES_DIR = LIVE_PACKAGES
    assert challenge_sync_from_dir(LIVE_PACKAGES).ok
    User.objects.create_user("ada", password="pw-ada-lovelace-1")
    grace = User.objects.create_user("grace", password="pw-grace-hopper-1")
    coach_grant(grace)
    interview = interview_create(grace, candidate_username="ada", challenges=[Challenge.objects.get(slug="count-slowly")], duration_minutes=30)
    base = live_server.url
    candidate = browser.new_context().new_page()
    log_in(candidate, base, "ada", "pw-ada-lovelace-1")
    candidate.goto(f"{base}{reverse('interview-candidate', args=[interview.token])}")
    replace_code(candidate, SLOW_WRONG)
    coach = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    log_in(coach, base, "grace", "pw-grace-hopper-1")

    candidate.click("#submit")
    wait_for(lambda: Submission.objects.filter(kind="submit").exists())
    submit = Submission.objects.get(kind="submit")
    coach.goto(f"{base}{reverse('interview-run-detail', args=[interview.pk, submit.pk])}")
    coach.evaluate(RECORD_STATES)
    expect(coach.locator("#result")).to_have_attribute("data-status", "done", timeout=120_000)
    states: list[dict[str, Any]] = coach.evaluate("window.liveStates")
    running = [s for s in states if s["status"] == "running" and s["finished"]]
    assert running, f"the page never showed the grading while it ran: {states}"
    assert all(s["finished"] < 5 for s in running)  # lines before the verdict, not after
    # Done: the hidden probes' own messages, which the candidate's page never shows.
    triples = coach.locator('#probes li[data-probe="triples"]')
    expect(triples).to_have_attribute("data-passed", "false")
    coach_message = triples.locator(".probe-message").inner_text()
    expect(candidate.locator("#result")).to_have_attribute("data-status", "done", timeout=30_000)
    candidate_message = candidate.locator('#probes li[data-probe="triples"] .probe-message').inner_text()
    assert coach_message == "result: expected 4 items, got 3"  # the check's own words
    assert candidate_message == "result: the list does not have the length this probe expects"  # the policy's template
