"""A scorecard backed by evidence, in two browsers: the interviewer cites what the candidate did, then prints it.

Headless Chromium with separate contexts for the candidate, the interviewer
and another coach, on the live server. Grading is the in-memory sandbox of
the web tests (tests/web/conftest.py ``fake_sandbox``: Celery runs eagerly in
the server, so a Submit is graded as it is posted): what is under test here
is the rubric's citing and the scorecard, not the sandbox (the whole path
with a real worker is test_mock_interview.py's).

The candidate opens the private link, submits code that fails the hidden
"positives" probe and asks for a hint. The interviewer, in the live view,
cites in the Correctness row the failed probe of that Submit (picked from
the probe list, failed probes first) and the hint (found with the filter),
cites an autosave and takes it back; the candidate fixes the code and the
interviewer cites the fix. Then the interviewer ends the interview and
opens the scorecard: "failed positives at 00:0x, fixed at 00:0y" on one
line and the hint on another, with their links, in the page and the PDF.
The candidate and another coach get nothing of it. Set
EVIDENCE_SCREENSHOTS=<dir> to keep screenshots at 1280 and 420 px.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, expect

from tests.browser.test_mock_interview import replace_code
from tests.browser.test_submit_in_browser import log_in
from tests.fake_backend import FakeBackend
from tests.web.conftest import CORRECT, SUM_WRONG, fake_sandbox, package_root  # noqa: F401 - pytest fixtures
from web.accounts.roles import coach_grant
from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir
from web.interviews.models import Citation, Interview
from web.interviews.services import interview_create
from web.submissions.models import HintReveal, Submission

pytestmark = pytest.mark.browser

COMMENT = "Read the failing probe before touching the code"


def _shot(page: Page, name: str, *, full_page: bool = True) -> None:
    shots = os.environ.get("EVIDENCE_SCREENSHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        page.add_style_tag(content=".topbar { position: static !important; }")  # a sticky bar would repeat mid-page
        page.screenshot(path=str(Path(shots) / f"{name}.png"), full_page=full_page)


def _no_sideways_scroll(page: Page) -> None:
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "the page scrolls sideways"


def test_the_interviewer_cites_a_failed_probe_and_a_hint_and_prints_them(
    live_server: Any,
    settings: Any,
    package_root: Path,  # noqa: F811 - the imported fixture
    fake_sandbox: FakeBackend,  # noqa: F811
    browser: Browser,
    tmp_path: Path,
) -> None:
    settings.CHALLENGES_DIR = package_root
    assert challenge_sync_from_dir(package_root).ok
    grace = User.objects.create_user("grace", password="pw-grace-hopper-1")
    coach_grant(grace)
    otto = User.objects.create_user("otto", password="pw-otto-other-coach-1")
    coach_grant(otto)
    User.objects.create_user("ada", password="pw-ada-lovelace-1")
    interview = interview_create(grace, candidate_username="ada", challenges=[Challenge.objects.get(slug="add-two")], duration_minutes=30)
    base = live_server.url

    # The candidate opens the link, submits code that fails "positives", and asks for a hint.
    candidate = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    log_in(candidate, base, "ada", "pw-ada-lovelace-1")
    candidate.goto(f"{base}/interviews/join/{interview.token}/")
    expect(candidate.locator("#countdown")).to_have_attribute("data-state", "live")
    replace_code(candidate, SUM_WRONG)
    candidate.click("#submit")
    expect(candidate.locator("#verdict")).to_contain_text("Partial", timeout=30_000)
    candidate.locator("button.reveal-hint").first.click()
    expect(candidate.locator("#hints")).to_contain_text("returns", timeout=10_000)
    failed = Submission.objects.get(kind="submit")
    hint = HintReveal.objects.get(submission=failed)

    # The interviewer cites the failed probe of that Submit in the Correctness row.
    coach = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    log_in(coach, base, "grace", "pw-grace-hopper-1")
    coach.goto(f"{base}/interviews/{interview.pk}/live/")
    expect(coach.locator("tbody.submissions tr[data-kind=submit]")).to_have_attribute("data-status", "done", timeout=10_000)
    coach.click('button.cite-open[data-criterion="correctness"]')
    dialog = coach.locator("#cite-dialog")
    expect(dialog).to_be_visible()
    expect(coach.locator("#cite-criterion")).to_have_text("Correctness")
    moment = coach.locator(f'#moment-list label.moment[data-key="submit:{failed.pk}"]')
    expect(moment).to_contain_text("1 of 2 probes failed")
    # Newest first: the hint came after the Submit.
    keys = coach.locator("#moment-list label.moment").evaluate_all("nodes => nodes.map(n => n.dataset.key)")
    assert keys.index(f"hint:{hint.pk}") < keys.index(f"submit:{failed.pk}")
    coach.select_option("#moment-kind", "submit")
    expect(coach.locator("#moment-list label.moment")).to_have_count(1)
    moment.click()
    expect(coach.locator("#probe-pick")).to_be_visible()
    # Failed probes first, and the first failed one preselected.
    options = coach.locator("#moment-probe option").evaluate_all("nodes => nodes.map(n => [n.value, n.dataset.outcome || ''])")
    assert options == [["", ""], ["positives", "failed"], ["negatives", "passed"]]
    expect(coach.locator("#moment-probe")).to_have_value("positives")
    coach.fill("#cite-comment", COMMENT)
    _shot(coach, "cite-dialog-1280", full_page=False)
    coach.click("#cite-save")
    expect(dialog).to_be_hidden()
    row = coach.locator('ul.citations[data-criterion="correctness"]')
    expect(row.locator("li.citation")).to_have_count(1)
    expect(row.locator("li.citation").first).to_contain_text(re.compile(r"correctness: failed positives at 00:\d\d"))
    expect(row.locator("li.citation").first).to_contain_text(COMMENT)

    # Then the hint, found by the filter; and an autosave, cited and taken back.
    coach.click('button.cite-open[data-criterion="correctness"]')
    expect(coach.locator("#moment-count")).to_contain_text("moments")
    coach.select_option("#moment-kind", "")
    coach.fill("#moment-filter", "nudge tier")
    expect(coach.locator("#moment-list label.moment")).to_have_count(1)
    coach.click(f'#moment-list label.moment[data-key="hint:{hint.pk}"]')
    expect(coach.locator("#probe-pick")).to_be_hidden()
    coach.click("#cite-save")
    expect(row.locator("li.citation")).to_have_count(2)
    coach.click('button.cite-open[data-criterion="debugging"]')
    coach.select_option("#moment-kind", "snapshot")
    coach.locator("#moment-list label.moment").first.click()
    coach.click("#cite-save")
    debugging = coach.locator('ul.citations[data-criterion="debugging"] li.citation')
    expect(debugging).to_have_count(1)
    debugging.locator("button.uncite").click()
    expect(debugging).to_have_count(0)
    # Removed meanwhile in another tab: the row says so and drops it.
    coach.click('button.cite-open[data-criterion="debugging"]')
    coach.click(f'#moment-list label.moment[data-key="hint:{hint.pk}"]')
    coach.click("#cite-save")
    expect(debugging).to_have_count(1)
    Citation.objects.filter(criterion="debugging").delete()
    debugging.locator("button.uncite").click()
    expect(coach.locator(".rubric-row .citation-error")).to_contain_text("no such citation")
    expect(debugging).to_have_count(0)
    assert list(Citation.objects.values_list("criterion", "moment_key", "probe")) == [
        ("correctness", f"submit:{failed.pk}", "positives"), ("correctness", f"hint:{hint.pk}", ""),
    ]  # fmt: skip
    # A refusal is shown in the dialog: the same moment twice in one row.
    coach.click('button.cite-open[data-criterion="correctness"]')
    coach.click(f'#moment-list label.moment[data-key="hint:{hint.pk}"]')
    coach.click("#cite-save")
    expect(coach.locator("#cite-error")).to_have_text("Correctness already cites this moment.")
    coach.click("#cite-cancel")

    # The candidate fixes the code; the interviewer cites the fix of the same probe.
    replace_code(candidate, CORRECT)
    candidate.click("#submit")
    expect(candidate.locator("#verdict")).to_contain_text("Accepted", timeout=30_000)
    fixed = Submission.objects.filter(kind="submit").order_by("-pk").first()
    assert fixed is not None and fixed.pk != failed.pk
    coach.click('button.cite-open[data-criterion="correctness"]')
    fix = coach.locator(f'#moment-list label.moment[data-key="submit:{fixed.pk}"]')
    expect(fix).to_contain_text("all 2 probes passed")
    fix.click()
    expect(coach.locator("#moment-probe")).to_have_value("")  # nothing failed: the whole submit unless a probe is picked
    expect(coach.locator('#moment-probe option[value="positives"]')).to_have_attribute("data-outcome", "fixed")
    coach.select_option("#moment-probe", "positives")
    coach.click("#cite-save")
    expect(row.locator("li.citation")).to_have_count(3)
    expect(row.locator("li.citation").nth(2)).to_contain_text(re.compile(r"correctness: fixed positives at 00:\d\d"))

    coach.select_option('select[name="score-correctness"]', "3")
    coach.select_option("#recommendation", "yes")
    coach.click("#save-assessment")
    expect(coach.locator("#assess-status")).to_have_attribute("data-saved", "true")
    coach.locator(".assess").scroll_into_view_if_needed()
    _shot(coach, "live-rubric-1280")
    coach.set_viewport_size({"width": 420, "height": 900})
    _no_sideways_scroll(coach)
    _shot(coach, "live-rubric-420")
    coach.click('button.cite-open[data-criterion="numerics"]')
    expect(coach.locator("#moment-count")).to_contain_text("moments")
    coach.locator(f'#moment-list label.moment[data-key="submit:{failed.pk}"]').click()
    assert dialog.evaluate("d => d.scrollWidth <= d.clientWidth"), "the dialog overflows at 420 px"
    _shot(coach, "cite-dialog-420", full_page=False)
    coach.click("#cite-cancel")
    coach.set_viewport_size({"width": 1280, "height": 900})

    # The interviewer ends the interview and prints the scorecard.
    coach.once("dialog", lambda d: d.accept())
    coach.click("#end-interview")
    expect(coach.locator("#scorecard")).to_have_attribute("data-state", "ended")
    # Two lines: the probe's failure and fix together, then the hint.
    cited = coach.locator('#rubric tr[data-criterion="correctness"] li.citation')
    expect(cited).to_have_count(2)
    expect(cited.nth(0)).to_contain_text(re.compile(r"correctness: failed positives at 00:\d\d, fixed at 00:\d\d"))
    expect(cited.nth(0)).to_contain_text(COMMENT)
    expect(cited.nth(1)).to_contain_text(re.compile(rf"Hint nudge revealed \(tier 1, nudge\) after #{failed.pk} at 00:\d\d"))
    expect(cited.nth(1).locator("a.citation-submission")).to_have_text(f"Submit #{failed.pk}")  # the Submit that unlocked it
    details = cited.nth(0).locator("a.citation-submission")
    expect(details.nth(0)).to_have_attribute("href", f"/interviews/{interview.pk}/submissions/{failed.pk}/")
    expect(details.nth(1)).to_have_attribute("href", f"/interviews/{interview.pk}/submissions/{fixed.pk}/")
    moments_linked = cited.locator("a.citation-text")
    expect(moments_linked).to_have_count(3)
    for i in range(3):
        expect(moments_linked.nth(i)).to_have_attribute("href", re.compile(rf"^/interviews/{interview.pk}/live/#t=\d+$"))
    _shot(coach, "scorecard-1280")
    coach.emulate_media(media="print")
    expect(cited.nth(0)).to_be_visible()
    expect(coach.locator("#print")).to_be_hidden()
    _shot(coach, "scorecard-print")
    pdf = coach.pdf(path=str(tmp_path / "scorecard.pdf"))
    assert pdf.startswith(b"%PDF") and len(pdf) > 10_000
    # The links survive into the PDF as link annotations.
    assert f"/interviews/{interview.pk}/submissions/{failed.pk}/".encode() in pdf
    coach.emulate_media(media="screen")
    coach.set_viewport_size({"width": 420, "height": 900})
    _no_sideways_scroll(coach)
    _shot(coach, "scorecard-420")

    # The candidate and another coach get none of it.
    assert COMMENT not in candidate.content()
    for page in (candidate, _signed_in(browser, base, "otto", "pw-otto-other-coach-1")):
        response = page.goto(f"{base}/interviews/{interview.pk}/scorecard/")
        assert response is not None and response.status == 404
        assert COMMENT not in page.content()
        api = page.request.get(f"{base}/api/v1/interviews/{interview.pk}/scorecard")
        assert api.status == 404 and api.json() == {"error": "No such interview."}
        moments = page.request.get(f"{base}/interviews/{interview.pk}/moments.json")
        assert moments.status == 404 and COMMENT not in moments.text()
    # The interviewer's API answer is the same card.
    api = coach.request.get(f"{base}/api/v1/interviews/{interview.pk}/scorecard").json()
    correctness = next(r for r in api["rubric"] if r["criterion"] == "correctness")
    assert [c["key"] for c in correctness["citations"]] == [f"submit:{failed.pk}", f"hint:{hint.pk}", f"submit:{fixed.pk}"]
    assert correctness["score"] == 3 and correctness["evidence"][0]["keys"] == [f"submit:{failed.pk}", f"submit:{fixed.pk}"]
    assert Interview.objects.get().recommendation == api["recommendation"] == "yes"


def _signed_in(chromium: Browser, base: str, username: str, password: str) -> Page:
    page = chromium.new_context().new_page()
    log_in(page, base, username, password)
    return page
