"""Live progress in Chromium: the probes of a running submission appear one by one before the verdict.

Real everything, as in test_submit_in_browser: the Django live server, Redis,
a Celery worker and the bwrap sandbox. ``count-slowly`` (fixtures/live_packages/
beside this file) has probes that each sleep most of a second, so a grading
has states to watch. The page records each distinct progress state it shows
(a MutationObserver installed before Submit), so the test does not race the
grading: it reads the record once the verdict is there.

With ``LIVE_SCREENSHOTS`` set to a folder, the running panel is saved there at
1280 and 420 px wide. With ``LIVE_DELAY_REPORT`` set to a file, the Run's delays
from each probe finishing in the sandbox (the time it printed) to its line
appearing on the page are appended to it as JSON (docs/performance.md).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from playwright.sync_api import Browser, expect

from tests.browser.test_mock_interview import replace_code
from tests.browser.test_submit_in_browser import candidate_on_challenge, log_in, type_into_editor
from tests.services import Worker
from web.accounts.roles import coach_grant
from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir
from web.interviews.services import interview_create

LIVE_PACKAGES = Path(__file__).resolve().parent / "fixtures" / "live_packages"
# Right on three hidden probes; drops the fourth element (triples) and the sign of k (negates).
WRONG = "def scale(x, k):\n    return [v * abs(k) for v in x][:3]\n"

pytestmark = pytest.mark.browser

# Every distinct state of the live box, in the order the page showed them.
RECORD_STATES = """
() => {
  window.liveStates = [];
  const record = () => {
    const box = document.getElementById("live");
    const lines = box ? Array.from(box.querySelectorAll(".live-probe")).map(li => li.dataset.probe + ":" + li.dataset.outcome) : [];
    const state = {
      finished: box && box.dataset.finished !== undefined ? Number(box.dataset.finished) : null,
      summary: box ? (box.querySelector(".live-summary") || {}).textContent || "" : "",
      lines: lines,
      status: document.getElementById("result").dataset.status,
    };
    const last = window.liveStates[window.liveStates.length - 1];
    if (!last || JSON.stringify(last) !== JSON.stringify(state)) window.liveStates.push(state);
  };
  new MutationObserver(record).observe(document.getElementById("result"), {subtree: true, childList: true, attributes: true, characterData: true});
}
"""


@pytest.fixture
def worker_extra_env() -> dict[str, str]:
    """Probes one at a time: count-slowly's probes all sleep alike, and side by side on spare cores two end together in either order.

    These tests watch the lines of a grading that runs one probe at a time
    (what a busy worker does); probes side by side, and their lines as they
    end, are tests/sandbox/test_probes_side_by_side.py's and tests/grader/test_live.py's.
    """
    return {"SANDBOX_PROBES_AT_ONCE": "1"}


def test_a_submit_shows_each_probe_as_it_finishes_before_the_verdict(
    live_server: Any,
    settings: Any,
    celery_worker: Worker,
    browser: Browser,
) -> None:
    page = candidate_on_challenge(browser, live_server.url, settings, LIVE_PACKAGES, "count-slowly")
    type_into_editor(page, WRONG)
    page.evaluate(RECORD_STATES)
    page.click("#submit")

    shots = os.environ.get("LIVE_SCREENSHOTS")
    if shots:
        # Mid-grading: two probes in, three to go (each takes most of a second).
        expect(page.locator("#live .live-probe")).to_have_count(2, timeout=120_000)
        page.add_style_tag(content=".topbar { position: static !important; }")
        Path(shots).mkdir(parents=True, exist_ok=True)
        page.locator("#result").screenshot(path=str(Path(shots) / "live-progress.png"))
        page.set_viewport_size({"width": 420, "height": 900})
        assert page.locator("#result").evaluate("node => node.scrollWidth <= node.clientWidth"), "the live panel overflows at 420 px"
        page.locator("#result").screenshot(path=str(Path(shots) / "live-progress-420.png"))
        page.set_viewport_size({"width": 1280, "height": 900})

    expect(page.locator("#result")).to_have_attribute("data-status", "done", timeout=120_000)
    expect(page.locator("#verdict")).to_contain_text("Partial")
    states: list[dict[str, Any]] = page.evaluate("window.liveStates")
    running = [s for s in states if s["status"] == "running" and s["finished"] is not None]
    intermediate = sorted({s["finished"] for s in running if 0 < s["finished"] < 5})
    assert len(intermediate) >= 2, states  # at least two states between the first probe and the verdict
    for s in running:
        if s["finished"]:
            assert re.fullmatch(rf"{s['finished']} of 5 probes finished · \d passed · \d failed", s["summary"]), s
    # Lines come in the order the probes ran, each with the outcome the result then gives it.
    last = max(running, key=lambda s: s["finished"])
    expected = ["triples:failed", "halves:passed", "negates:failed", "nothing:passed", "single:passed"]
    assert last["lines"] == expected[: last["finished"]]
    final = {p: page.locator(f'#probes .probe[data-probe="{p}"]').get_attribute("data-passed") for p in ["triples", "halves", "negates"]}
    assert final == {"triples": "false", "halves": "true", "negates": "false"}
    # The verdict replaces the live lines; a hidden probe's line never named its status.
    expect(page.locator("#live .live-probe")).to_have_count(0)
    assert not [s for s in states if "error" in " ".join(s["lines"])]


def test_a_run_shows_its_public_probes_live_and_the_delay_can_be_measured(
    live_server: Any,
    settings: Any,
    celery_worker: Worker,
    browser: Browser,
) -> None:
    page = candidate_on_challenge(browser, live_server.url, settings, LIVE_PACKAGES, "count-slowly")
    type_into_editor(page, "def scale(x, k):\n    return [v * k for v in x]\n")
    page.evaluate(RECORD_STATES)
    # Each line's first appearance, kept past the verdict (which empties the box).
    page.evaluate(
        """() => { window.shownAt = {}; new MutationObserver(() => document.querySelectorAll("#live .live-probe").forEach(li => {
             if (!(li.dataset.probe in window.shownAt)) window.shownAt[li.dataset.probe] = Number(li.dataset.shownAt); })
           ).observe(document.getElementById("result"), {subtree: true, childList: true}); }"""
    )
    page.click("#run")
    expect(page.locator("#result")).to_have_attribute("data-status", "done", timeout=120_000)
    expect(page.locator("#verdict")).to_contain_text("Accepted")
    states: list[dict[str, Any]] = page.evaluate("window.liveStates")
    assert len({s["finished"] for s in states if s["status"] == "running" and s["finished"]}) >= 2, states
    shown: dict[str, float] = page.evaluate("window.shownAt")
    assert set(shown) <= {"doubles", "zero", "negative", "empty"} and len(shown) >= 2, shown
    report = os.environ.get("LIVE_DELAY_REPORT")
    if report:
        finished = {}
        for name in shown:
            stdout = page.locator(f'#probes .probe[data-probe="{name}"] .probe-stdout pre').text_content() or ""
            finished[name] = float(stdout.split("finished_at=")[1].split()[0])
        delays = {name: round(shown[name] / 1000 - finished[name], 3) for name in shown}
        with open(report, "a") as fh:
            fh.write(json.dumps({"delays_s": delays}) + "\n")


def test_the_mock_interview_candidate_page_shows_the_same_live_lines(
    live_server: Any,
    settings: Any,
    celery_worker: Worker,
    browser: Browser,
) -> None:
    settings.CHALLENGES_DIR = LIVE_PACKAGES
    assert challenge_sync_from_dir(LIVE_PACKAGES).ok
    User.objects.create_user("ada", password="pw-ada-lovelace-1")
    cora = User.objects.create_user("cora", password="pw-cora-12345")
    coach_grant(cora)
    interview = interview_create(cora, candidate_username="ada", challenges=[Challenge.objects.get(slug="count-slowly")], duration_minutes=30)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    log_in(page, live_server.url, "ada", "pw-ada-lovelace-1")
    page.goto(f"{live_server.url}{reverse('interview-candidate', args=[interview.token])}")
    replace_code(page, WRONG)
    page.evaluate(RECORD_STATES)
    page.click("#submit")
    expect(page.locator("#result")).to_have_attribute("data-status", "done", timeout=120_000)
    states: list[dict[str, Any]] = page.evaluate("window.liveStates")
    running = [s for s in states if s["status"] == "running" and s["finished"]]
    assert len({s["finished"] for s in running if s["finished"] < 5}) >= 2, states
    last = max(running, key=lambda s: s["finished"])
    expected = ["triples:failed", "halves:passed", "negates:failed", "nothing:passed", "single:passed"]
    assert last["lines"] == expected[: last["finished"]]
