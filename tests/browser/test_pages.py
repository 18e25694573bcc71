"""The site's pages as a person sees them in Chromium: a phone's width, labels, error pages, the API docs, passed probes.

Real Chromium (Playwright) on the live server, with the repository's own
challenges synced (implement-engine-execute has a long statement with long
inline code, a long starter and a read-only given module: the page most likely
to spill sideways). Nothing is graded: the submissions the pages show are
written straight into the database, so no worker is started.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from playwright.sync_api import Browser, Page, expect

from tests.browser.test_submit_in_browser import log_in
from web.accounts.roles import coach_grant
from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir
from web.interviews.bank import template_save
from web.interviews.services import ChallengePlan, interview_create
from web.submissions.models import Status, Submission

pytestmark = pytest.mark.browser

CHALLENGES = Path(__file__).resolve().parents[2] / "challenges"
WIDE_CHALLENGE = "implement-engine-execute"
CANDIDATE, CANDIDATE_PW = "ada", "pw-ada-lovelace-1"
COACH, COACH_PW = "grace", "pw-grace-hopper-1"

# How far the page reaches past the viewport's right edge (0: no sideways scroll), and the outermost
# elements that stick out (their parent fits), to say what to fix.
OVERFLOW_JS = """() => {
  const width = document.documentElement.clientWidth;
  const culprits = [];
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > width + 1 && el.parentElement.getBoundingClientRect().right <= width + 1) {
      culprits.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + ' ' + (el.className || ''));
    }
  }
  return {overflow: document.documentElement.scrollWidth - width, culprits: culprits.slice(0, 6)};
}"""

# Fields a person fills in with no label: no <label> for it or around it, no aria-label(ledby).
UNLABELLED_JS = """() => Array.from(document.querySelectorAll('input, select, textarea'))
  .filter(el => !['hidden', 'submit', 'button', 'reset'].includes(el.type))
  .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
  .map(el => el.outerHTML.slice(0, 120))"""


def site() -> dict[str, str]:
    """The repository's challenges, a candidate with a graded history, a coach, and a mock interview between them."""
    assert challenge_sync_from_dir(CHALLENGES).ok
    ada = User.objects.create_user(CANDIDATE, password=CANDIDATE_PW)
    grace = User.objects.create_user(COACH, password=COACH_PW)
    coach_grant(grace)
    challenge = Challenge.objects.get(slug=WIDE_CHALLENGE)
    for kind, verdict, score in (("run", "wrong_answer", 40.0), ("submit", "partial", 72.5), ("submit", "accepted", 100.0)):
        Submission.objects.create(
            user=ada, challenge=challenge, version=challenge.current_version, kind=kind, code="# mine\n", status=Status.DONE,
            verdict=verdict, score=score, categories={"correctness": {"score": score, "passed": 1, "total": 2}}, finished_at=timezone.now(),
        )  # fmt: skip
    softmax = Challenge.objects.get(slug="fp16-stable-softmax")
    interview = interview_create(grace, candidate_username=CANDIDATE, challenges=[challenge, softmax], duration_minutes=60)
    template = template_save(grace, name="Softmax and more", challenges=[ChallengePlan(softmax, 25), ChallengePlan(challenge, 35)])
    return {
        "interview": f"/interviews/join/{interview.token}/", "live": f"/interviews/{interview.pk}/live/",
        "template": f"/interviews/templates/{template.pk}/", "from-template": f"/interviews/new/?template={template.pk}",
    }  # fmt: skip


def signed_in(browser: Browser, base: str, username: str, password: str, width: int = 420) -> Page:
    page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    log_in(page, base, username, password)
    return page


def check_page(page: Page, url: str) -> list[str]:
    """What is wrong with the page at 420 px: sideways overflow and unlabelled fields (empty when nothing is)."""
    page.goto(url)
    page.wait_for_load_state("load")
    found = page.evaluate(OVERFLOW_JS)
    problems = [f"{url}: {found['overflow']} px too wide at 420 px ({found['culprits']})"] if found["overflow"] > 0 else []
    problems += [f"{url}: no label on {field}" for field in page.evaluate(UNLABELLED_JS)]
    return problems


def test_no_page_scrolls_sideways_at_420_px_and_every_field_has_a_label(
    live_server: Any,
    settings: Any,
    browser: Browser,
) -> None:
    settings.CHALLENGES_DIR = CHALLENGES
    urls = site()
    base = live_server.url
    first = Submission.objects.order_by("pk").first()
    assert first is not None
    anonymous = browser.new_context(viewport={"width": 420, "height": 900}).new_page()
    candidate = signed_in(browser, base, CANDIDATE, CANDIDATE_PW)
    coach = signed_in(browser, base, COACH, COACH_PW)
    pages: list[tuple[Page, str]] = [
        (anonymous, "/accounts/login/"), (anonymous, "/accounts/signup/"), (anonymous, "/accounts/password-reset/"),
        (anonymous, "/accounts/reset/MQ/no-such-token/"),
        (candidate, f"/challenges/{WIDE_CHALLENGE}/"), (candidate, "/challenges/fp16-stable-softmax/"),
        (candidate, "/"), (candidate, "/tracks/framework-internals/"), (candidate, "/progress/"),
        (candidate, "/submissions/"), (candidate, f"/submissions/{first.pk}/"), (candidate, "/accounts/token/"),
        (candidate, "/interviews/mine/"), (candidate, urls["interview"]), (candidate, "/api/v1/docs/"),
        (coach, "/author/"), (coach, "/author/new/"), (coach, "/author/import/"), (coach, "/interviews/"),
        (coach, "/interviews/new/"), (coach, urls["live"]), (coach, "/coach/grading/"),
        (coach, "/interviews/templates/"), (coach, "/interviews/templates/new/"), (coach, urls["template"]),
        (coach, urls["from-template"]), (coach, "/interviews/statistics/"), (coach, "/author/tf-stale-closure/coverage"),
    ]  # fmt: skip
    problems = [problem for page, path in pages for problem in check_page(page, base + path)]
    assert problems == []

    # The challenge page really is the long one: its statement and editor are stacked, each inside the screen.
    page = candidate
    page.goto(f"{base}/challenges/{WIDE_CHALLENGE}/")
    statement, editor = page.locator("#statement").bounding_box(), page.locator("#panel-entry .CodeMirror").bounding_box()
    assert statement and editor
    assert editor["y"] >= statement["y"] + statement["height"]  # stacked
    assert statement["x"] + statement["width"] <= 420 and editor["x"] + editor["width"] <= 420
    # The statement's long code wraps or scrolls inside its own box.
    wide_pre = page.evaluate("Math.max(...Array.from(document.querySelectorAll('#statement pre')).map(p => p.scrollWidth - p.clientWidth))")
    assert wide_pre > 0  # some code block is wider than the screen...
    assert page.evaluate("document.documentElement.scrollWidth") <= 420  # ...and it scrolls in its box, not the page


def test_statement_and_editor_side_by_side_on_a_wide_screen_and_the_editor_fills_the_height(
    live_server: Any,
    settings: Any,
    browser: Browser,
) -> None:
    settings.CHALLENGES_DIR = CHALLENGES
    site()
    page = signed_in(browser, live_server.url, CANDIDATE, CANDIDATE_PW, width=1280)
    page.goto(f"{live_server.url}/challenges/{WIDE_CHALLENGE}/")
    statement, editor = page.locator("#statement").bounding_box(), page.locator("#panel-entry .CodeMirror").bounding_box()
    assert statement and editor
    assert editor["x"] >= statement["x"] + statement["width"]  # side by side
    assert editor["height"] >= 900 * 0.6, editor  # most of the window's height, not CodeMirror's 300 px
    # Run and Submit are still on the first screen, under the editor.
    run = page.locator("#run").bounding_box()
    assert run and run["y"] + run["height"] <= 900
    # The editor can be dragged taller (resize: vertical) and then draws the lines the new height shows.
    assert page.evaluate("getComputedStyle(document.querySelector('#panel-entry .CodeMirror')).resize") == "vertical"
    lines = page.locator("#panel-entry .CodeMirror-code > div")
    assert lines.count() < 50
    page.evaluate("document.querySelector('#panel-entry .CodeMirror').style.height = '1400px'")
    expect(page.locator("#panel-entry .CodeMirror-code > div:nth-child(50)")).to_be_attached()


def test_a_candidate_opening_a_coach_page_gets_a_styled_403_with_a_way_back(
    live_server: Any,
    settings: Any,
    browser: Browser,
) -> None:
    User.objects.create_user(CANDIDATE, password=CANDIDATE_PW)
    page = signed_in(browser, live_server.url, CANDIDATE, CANDIDATE_PW, width=1280)
    response = page.goto(f"{live_server.url}/author/")
    assert response is not None and response.status == 403
    expect(page.locator("h1")).to_have_text("Not for your account")
    expect(page.locator(".error-page")).to_contain_text("coaches")
    # The site's own look (its stylesheet loaded), not a bare "403 Forbidden".
    assert page.evaluate("getComputedStyle(document.querySelector('.topbar')).backgroundColor") == "rgb(21, 24, 39)"
    page.click("text=Back to the challenges")
    expect(page).to_have_url(f"{live_server.url}/")

    response = page.goto(f"{live_server.url}/challenges/no-such-challenge/")
    assert response is not None and response.status == 404
    assert page.evaluate("getComputedStyle(document.querySelector('.topbar')).backgroundColor") == "rgb(21, 24, 39)"
    expect(page.locator(".error-page a.button")).to_have_attribute("href", "/")


def test_the_api_docs_page_draws_every_endpoint_with_nothing_from_another_site(
    live_server: Any,
    settings: Any,
    browser: Browser,
) -> None:
    User.objects.create_user(CANDIDATE, password=CANDIDATE_PW)
    page = signed_in(browser, live_server.url, CANDIDATE, CANDIDATE_PW, width=1280)
    hosts: set[str] = set()
    page.on("request", lambda request: hosts.add(urlsplit(request.url).netloc))
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(f"{live_server.url}/accounts/token/")
    page.click("#api-docs-link")
    expect(page).to_have_url(f"{live_server.url}/api/v1/docs/")
    # Swagger UI read the schema and drew one block per operation.
    expect(page.locator(".swagger-ui .opblock")).to_have_count(10, timeout=20_000)  # 8, cancel, and the interview scorecard
    expect(page.locator(".swagger-ui .opblock-summary-path").first).to_contain_text("/api/v1/")
    # Signed in, "Try it out" calls the API as this user (the session) and shows the answer.
    listing = page.locator(".opblock").filter(has_text="/api/v1/challenges/").first
    listing.locator(".opblock-summary").click()
    listing.locator("button.try-out__btn").click()
    listing.locator("button.execute").click()
    expect(listing.locator(".live-responses-table tbody .response-col_status").first).to_have_text("200")
    assert hosts == {urlsplit(live_server.url).netloc}, hosts
    assert errors == []


def test_passed_probes_fold_into_one_line_and_failed_ones_stay_open(
    live_server: Any,
    settings: Any,
    browser: Browser,
) -> None:
    settings.CHALLENGES_DIR = CHALLENGES
    assert challenge_sync_from_dir(CHALLENGES).ok
    ada = User.objects.create_user(CANDIDATE, password=CANDIDATE_PW)
    challenge = Challenge.objects.get(slug=WIDE_CHALLENGE)
    names = ["leaf", "chain", "diamond", "retain", "double"]
    probes = [
        {"name": name, "category": "correctness", "weight": 1.0, "passed": name != "diamond", "duration_ms": 2,
         "status": "ok" if name != "diamond" else "wrong_answer", "message": "" if name != "diamond" else "gradient of x is wrong",
         "description": f"the {name} graph"}
        for name in names
    ]  # fmt: skip
    Submission.objects.create(
        user=ada, challenge=challenge, version=challenge.current_version, kind="submit", code="# mine\n", status=Status.DONE,
        verdict="partial", score=80.0, probes=probes, message="4 of 5 probes passed", finished_at=timezone.now(),
    )  # fmt: skip
    page = signed_in(browser, live_server.url, CANDIDATE, CANDIDATE_PW, width=1280)
    page.goto(f"{live_server.url}/challenges/{WIDE_CHALLENGE}/")  # the latest submission is shown on load
    expect(page.locator("#result")).to_have_attribute("data-status", "done")

    line = page.locator("#probes .probes-passed summary")
    expect(line).to_contain_text("4 passed of 5")
    expect(page.locator('#probes .probe[data-probe="diamond"]')).to_be_visible()
    expect(page.locator('#probes .probe[data-probe="diamond"] .probe-message')).to_be_visible()  # its message, as the feedback policy words it
    for name in ("leaf", "chain", "retain", "double"):
        expect(page.locator(f'#probes .probe[data-probe="{name}"]')).to_be_hidden()
    # The summary line comes first, above the failing probe.
    assert page.evaluate("document.querySelector('#probes').firstElementChild.className") == "probes-passed"

    line.click()
    for name in ("leaf", "chain", "retain", "double"):
        expect(page.locator(f'#probes .probe[data-probe="{name}"]')).to_be_visible()
    expect(line).to_contain_text("hide")


def test_a_wrong_runs_panel_keeps_the_challenge_page_within_420_px(
    live_server: Any,
    settings: Any,
    browser: Browser,
) -> None:
    import numpy as np

    from grader.diff import structured_diff
    from sandbox.runner.codec import TaggedArray

    settings.CHALLENGES_DIR = CHALLENGES
    assert challenge_sync_from_dir(CHALLENGES).ok
    ada = User.objects.create_user(CANDIDATE, password=CANDIDATE_PW)
    challenge = Challenge.objects.get(slug=WIDE_CHALLENGE)
    expected = TaggedArray(np.linspace(-1e6, 1e6, 64, dtype=np.float64).reshape(8, 8), "float64", "numpy")
    actual = TaggedArray(expected.data.copy(), "float64", "numpy")
    actual.data[3, 5], actual.data[7, 7] = np.nan, 123456789.123456789
    long_word = "grad_fn_of_the_shared_input_node_" * 8  # one unbroken word, wider than the screen
    probes = [
        {"name": "leaf", "category": "correctness", "weight": 1.0, "passed": True, "status": "ok", "message": "", "description": "",
         "duration_ms": 1, "stdout": ""},
        {"name": "shared_input_diamond_with_a_long_probe_name", "category": "correctness", "weight": 1.0, "passed": False,
         "status": "wrong_answer", "message": long_word, "description": long_word, "duration_ms": 3, "stdout": long_word,
         "observation": {"grad": long_word}, "expected": {"grad": "x"},
         "diff": structured_diff({"x.grad": actual, "name": long_word}, {"x.grad": expected, "name": "x"})},
    ]  # fmt: skip
    Submission.objects.create(
        user=ada, challenge=challenge, version=challenge.current_version, kind="run", code="# mine\n", status=Status.DONE,
        verdict="wrong_answer", score=50.0, probes=probes, message=long_word, finished_at=timezone.now(),
    )  # fmt: skip
    page = signed_in(browser, live_server.url, CANDIDATE, CANDIDATE_PW)
    page.goto(f"{live_server.url}/challenges/{WIDE_CHALLENGE}/")
    expect(page.locator("#result")).to_have_attribute("data-status", "done")
    expect(page.locator('#probes .probe[data-probe^="shared_input"] .diff')).to_be_visible()
    page.locator("#probes .probes-passed summary").click()
    page.locator("#probes details:not([open]) > summary").evaluate_all("nodes => nodes.forEach(n => n.click())")  # every fold open
    found = page.evaluate(OVERFLOW_JS)
    assert found["overflow"] <= 0, found


def test_a_coach_reads_a_packages_coverage_table_from_the_authoring_page(live_server: Any, settings: Any, browser: Browser, tmp_path: Path) -> None:
    settings.CHALLENGES_DIR = CHALLENGES
    site()
    page = signed_in(browser, live_server.url, COACH, COACH_PW, width=1280)
    page.goto(f"{live_server.url}/author/")
    page.locator('#repository tr[data-slug="tf-stale-closure"] a', has_text="Coverage").click()
    expect(page).to_have_url(re.compile(r"/author/tf-stale-closure/coverage$"))
    rows = page.locator("#coverage tbody tr")
    expect(rows.first).to_be_visible()
    # As many rows, and input classes, as the package's coverage table holds.
    table = tomllib.loads((CHALLENGES / "framework-internals" / "tf-stale-closure" / "coverage.toml").read_text())
    entries = table["entry"]
    assert rows.count() == len(entries)
    assert page.locator('#coverage tr[data-kind="input"]').count() == sum(1 for e in entries if e["kind"] == "input")
    method = page.locator('tr[data-entry="method-looked-up-before"]')
    expect(method).to_contain_text("So does a call made through a method looked up before the change")
    # Every probe the entry names is shown, each with its group and weight (the entry grows as red teams find
    # escapes, so the test reads its probes from the table instead of assuming how many there are).
    (entry,) = [e for e in entries if e["id"] == "method-looked-up-before"]
    expect(method.locator("code.probe-hidden")).to_have_count(len(entry["probes"]))
    for probe in entry["probes"]:
        expect(method.locator("code.probe-hidden", has_text=re.compile(rf"^{probe}$"))).to_have_attribute(
            "title", re.compile(r"^hidden · \w+ · weight \d")
        )
    cached = method.locator("code.probe-hidden", has_text=re.compile(r"^cached_train_step$"))
    expect(cached).to_have_attribute("title", re.compile(r"hidden · training · weight 1"))
    assert page.locator("#coverage-problems").count() == 0
    page.screenshot(path=str(tmp_path / "coverage.png"), full_page=True)  # looked at when the page changes (--basetemp)
