"""The interviewer's seat from end to end, as issue 14's "done when" reads, in two browsers on the real stack.

Headless Chromium with a context for the interviewer and one for the
candidate, the ASGI server (pages and keystroke sockets), the Redis channel
layer, a real Celery worker and the bwrap sandbox. The interviewer builds a
session from a template with hints off, watches the candidate type (each
keystroke in the live editor, before any autosave), opens the failed
Submit's probe details (the hidden probe's own message, which the candidate
never sees), cites two timeline moments in the rubric (the failed probe and
an autosave), ends the session and prints a scorecard whose rubric carries
both citations with their links. The candidate and another coach get 404 on
all of it. Each part has its own, finer browser test (test_interview_settings,
test_interview_keys, test_interview_replay, test_interview_evidence).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, expect

from tests.browser.test_interview_keys import redis_layer  # noqa: F401 - pytest fixtures
from tests.browser.test_mock_interview import replace_code
from tests.browser.test_submit_in_browser import FIXTURES, log_in
from tests.services import Worker
from web.accounts.roles import coach_grant
from web.challenges.services import challenge_sync_from_dir
from web.interviews.models import Citation, HintPolicy, Interview, InterviewTemplate
from web.submissions.models import Submission

pytestmark = pytest.mark.browser

# Integers where floats are expected: the float probes fail, the integer one passes.
WRONG = "import numpy as np\n\ndef add(a, b):\n    return (np.asarray(a) + np.asarray(b)).astype(int)\n"
TYPED = "# thinking: cast back to the inputs' dtype"


def test_an_interviewer_runs_a_session_from_a_template_and_prints_a_scorecard_backed_by_evidence(
    live_server: Any,
    settings: Any,
    celery_worker: Worker,
    redis_layer: None,  # noqa: F811 - the imported fixture
    browser: Browser,
    tmp_path: Path,
) -> None:
    settings.CHALLENGES_DIR = FIXTURES
    assert challenge_sync_from_dir(FIXTURES).ok
    grace = User.objects.create_user("grace", password="pw-grace-hopper-1")
    coach_grant(grace)
    otto = User.objects.create_user("otto", password="pw-otto-other-coach-1")
    coach_grant(otto)
    User.objects.create_user("ada", password="pw-ada-lovelace-1")
    base = live_server.url

    # 1. A template with hints off, then a session from it that only names the candidate.
    coach = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    log_in(coach, base, "grace", "pw-grace-hopper-1")
    coach.goto(f"{base}/interviews/templates/new/")
    coach.fill("#id_name", "Dtypes, 20 minutes")
    row = coach.locator('.picker-row[data-slug="add-numbers"]')
    row.locator('input[name="challenges"]').check()
    row.locator('input[name="minutes-add-numbers"]').fill("20")
    coach.check('input[name="hint_policy"][value="off"]')
    coach.click("#save-template")
    template = InterviewTemplate.objects.get(name="Dtypes, 20 minutes")
    coach.locator(f'#templates tr[data-template="{template.pk}"] a.use-template').click()
    coach.fill("#id_candidate", "ada")
    coach.click("#create-interview")
    expect(coach.locator("#session-settings")).to_have_attribute("data-hint-policy", "off")
    interview = Interview.objects.get()
    assert (interview.template_id, interview.hint_policy) == (template.pk, HintPolicy.OFF)
    link = coach.locator("#candidate-link").inner_text().strip()
    expect(coach.locator("#keys-status")).to_have_attribute("data-state", "live")

    # 2. The candidate types; the interviewer's live editor follows keystroke by keystroke.
    candidate = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    log_in(candidate, base, "ada", "pw-ada-lovelace-1")
    candidate.goto(link)
    expect(candidate.locator("#session-rules")).to_contain_text("Hints are off")
    expect(candidate.locator(".editor-frame")).to_have_attribute("data-keys", "live")
    candidate.click(".CodeMirror")
    candidate.keyboard.press("Control+End")
    candidate.keyboard.press("Enter")
    candidate.keyboard.type(TYPED, delay=10)
    view = coach.locator('.live-challenge[data-slug="add-numbers"] .keys-view')
    expect(view.locator(".CodeMirror-code")).to_contain_text(TYPED)

    # 3. A failing Submit: the interviewer opens its probe details, with the hidden probe's own message.
    replace_code(candidate, WRONG)
    candidate.click("#submit")
    expect(candidate.locator("#result")).to_have_attribute("data-status", "done", timeout=120_000)
    failed = Submission.objects.get(kind="submit")
    failing = [p["name"] for p in failed.probes if not p["passed"]]
    assert failing, "the wrong code must fail a hidden probe, or the checks below prove nothing"
    expect(candidate.locator("#hints .reveal-hint")).to_have_count(0)
    submit_row = coach.locator(f'tbody.submissions tr[data-submission="{failed.pk}"]')
    expect(submit_row).to_have_attribute("data-status", "done", timeout=30_000)
    submit_row.locator("a.run-link").click()
    expect(coach.locator("#run-facts")).to_have_attribute("data-kind", "submit")
    probe = coach.locator(f'#probes li[data-probe="{failing[0]}"]')
    coach_message = probe.locator(".probe-message").inner_text()
    stored = next(p for p in failed.probes if p["name"] == failing[0])
    assert coach_message.strip() == str(stored["message"]).strip(), "the interviewer reads the check's own words"
    candidate_message = candidate.locator(f'#probes li[data-probe="{failing[0]}"]').inner_text()
    assert coach_message.strip() not in candidate_message, "the candidate sees only the summary of a hidden probe"

    # 4. Two moments cited in the rubric: the failed probe of that Submit, and an autosave.
    coach.goto(f"{base}/interviews/{interview.pk}/live/")
    coach.click('button.cite-open[data-criterion="correctness"]')
    coach.locator(f'#moment-list label.moment[data-key="submit:{failed.pk}"]').click()
    expect(coach.locator("#moment-probe")).to_have_value(failing[0])
    coach.fill("#cite-comment", "cast to int lost the fractions")
    coach.click("#cite-save")
    coach.click('button.cite-open[data-criterion="communication"]')
    coach.select_option("#moment-kind", "snapshot")
    coach.locator("#moment-list label.moment").first.click()
    coach.click("#cite-save")
    expect(coach.locator("ul.citations li.citation")).to_have_count(2)
    assert Citation.objects.filter(interview=interview).count() == 2

    # 5. The end, and the printed scorecard citing both moments with their links.
    coach.once("dialog", lambda d: d.accept())
    coach.click("#end-interview")
    expect(coach.locator("#scorecard")).to_have_attribute("data-state", "ended")
    correctness = coach.locator('#rubric tr[data-criterion="correctness"] li.citation')
    expect(correctness).to_contain_text(re.compile(rf"\w+: failed {failing[0]} at \d\d:\d\d"))  # the probe's category first
    expect(correctness.locator("a.citation-submission")).to_have_attribute("href", f"/interviews/{interview.pk}/submissions/{failed.pk}/")
    communication = coach.locator('#rubric tr[data-criterion="communication"] li.citation')
    expect(communication).to_contain_text("Code autosaved")
    expect(communication.locator("a.citation-text")).to_have_attribute("href", re.compile(rf"^/interviews/{interview.pk}/live/#t=\d+$"))
    coach.emulate_media(media="print")
    pdf = coach.pdf(path=str(tmp_path / "scorecard.pdf"))
    assert pdf.startswith(b"%PDF") and f"/interviews/{interview.pk}/submissions/{failed.pk}/".encode() in pdf

    # 6. The candidate and another coach get 404 on every page of the interviewer's seat.
    other = browser.new_context().new_page()
    log_in(other, base, "otto", "pw-otto-other-coach-1")
    for page in (candidate, other):
        for path in ("live/", "scorecard/", f"submissions/{failed.pk}/", f"submissions/{failed.pk}.json", "replay.json", "moments.json"):
            response = page.request.get(f"{base}/interviews/{interview.pk}/{path}")
            assert response.status == 404, f"{path}: {response.status}"
