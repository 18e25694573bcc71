"""Crafted statements, hints, probe messages and printed output stay inert in a real browser.

The server-side checks are in tests/web/test_security.py; this one renders
the challenge page in headless Chromium with a hostile statement and a stored
result whose every field carries markup, and looks at the live DOM: no
element from the payloads, no event-handler attribute, the payloads shown as
text. No worker is needed: the result is stored as a worker would store it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from playwright.sync_api import Browser, expect, sync_playwright

from grader import error_report
from grader.diff import expected_summary, structured_diff
from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir
from web.submissions.models import HintReveal, Status, Submission

WEB_FIXTURES = Path(__file__).resolve().parents[1] / "web" / "fixtures" / "challenges"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run", "--disable-quic"]
PAYLOADS = [
    "<script>window.__xss = 1</script>",
    '<img src="x" id="xss-img" onerror="window.__xss = 2">',
    '<svg id="xss-svg" onload="window.__xss = 3"></svg>',
    '<a id="xss-link" href="javascript:window.__xss = 4">click</a>',
]
TEXT = " ".join(PAYLOADS)

pytestmark = pytest.mark.browser


@pytest.fixture
def browser() -> Iterator[Browser]:
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # the live server runs an event loop
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield browser
        browser.close()


def test_hostile_statement_hints_and_output_render_as_text(live_server: Any, settings: Any, browser: Browser, tmp_path: Path) -> None:
    root = tmp_path / "challenges"
    shutil.copytree(WEB_FIXTURES, root)
    (root / "basics" / "add-two" / "statement.md").write_text("# Add two\n\n" + "\n\n".join(PAYLOADS) + "\n")
    settings.CHALLENGES_DIR = root
    assert challenge_sync_from_dir(root).ok
    challenge = Challenge.objects.select_related("current_version").get(slug="add-two")
    user = User.objects.create_user("eve", password="pw-eve-hostile-1")
    probe = {
        "name": "positives", "category": "correctness", "weight": 1.0, "passed": False, "status": "wrong_answer",
        "message": "message " + TEXT, "description": "description " + TEXT, "duration_ms": 3, "stdout": "stdout " + TEXT,
        "observation": TEXT, "expected": TEXT,
        # The structured diff quotes the observation's keys and values (grader/diff.py).
        "diff": structured_diff({p: p for p in PAYLOADS} | {"x": [TEXT]}, {p: "no" for p in PAYLOADS} | {"x": ["no"]}),
        # A custom check's label is the coach's text, and a report's path holds the observation's keys (grader/error_report.py);
        # a 1-D tensor is drawn as one strip.
        "error_report": {
            **error_report.build(np.array([0.5, 3.0, np.inf, 0.0]), dtype="float32", path=PAYLOADS, label="label " + TEXT),
            "summary": "summary " + TEXT,
        },
    }  # fmt: skip
    raised = {
        **probe, "name": "small", "status": "runtime_error", "message": "Traceback\nValueError: " + TEXT, "observation": None,
        "diff": expected_summary({p: [p] for p in PAYLOADS}), "error_report": None,
    }  # fmt: skip
    Submission.objects.create(
        user=user, challenge=challenge, version=challenge.current_version, kind="run", code="x = 1\n", status=Status.DONE,
        verdict="wrong_answer", score=0.0, categories={"correct<b>ness</b>": {"score": 0.0, "passed": 0, "total": 1}},
        probes=[probe, raised], hints=[{"id": "nudge", "tier": 1, "tags": ["sum"], "text": "hint " + TEXT, "probes": PAYLOADS}],
        message="result " + TEXT,
    )  # fmt: skip
    # Shown because eve asked for it (nothing is shown unasked).
    HintReveal.objects.create(user=user, challenge=challenge, hint_id="nudge", tier=1, revealed_at=timezone.now())

    page = browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "eve")
    page.fill("input[name=password]", "pw-eve-hostile-1")
    page.click("#login-submit")
    page.goto(f"{live_server.url}/challenges/add-two/")
    expect(page.locator('#result[data-status="done"]')).to_have_count(1, timeout=30_000)  # the page opened the stored result

    # The payloads are on the page as text...
    expect(page.locator("#result-message")).to_have_text("result " + TEXT)
    expect(page.locator("#probes .probe-message").first).to_have_text("message " + TEXT)
    expect(page.locator("#probes .diff-leaf").first).to_contain_text("<script>window.__xss = 1</script>")
    expect(page.locator("#probes .raised-summary")).to_have_text("ValueError: " + TEXT)
    expect(page.locator("#probes .expected-preview")).to_contain_text(PAYLOADS[1][:30])
    expect(page.locator("#hints .hint-about")).to_contain_text(PAYLOADS[0])
    expect(page.locator("#probes .probe-stdout pre").first).to_have_text("stdout " + TEXT)
    expect(page.locator("#hints .hint-body")).to_contain_text("hint")
    expect(page.locator("#probes .error-report-label")).to_have_text(("label " + TEXT)[:200])  # the grader keeps 200
    expect(page.locator("#probes .error-report-facts")).to_have_text("summary " + TEXT)
    # The 1-D strip: one row of four cells, no row axis.
    expect(page.locator("#probes .error-report")).to_have_attribute("data-drawn", "true")
    strip = page.locator("#probes canvas.error-map").evaluate(
        "c => { const ch = Chart.getChart(c), s = ch.options.scales; return [ch.data.datasets[0].data.length, s.y.display, s.x.title.text]; }"
    )
    assert strip == [4, False, "Columns: dim 0 (4)"]
    # ...and nowhere as live markup: no element they would create, no handler attribute, no javascript: link.
    for selector in ("#xss-img", "#xss-svg", "#statement script", "#result script", "#hints script", "[onerror]", "[onload]"):
        assert page.locator(selector).count() == 0, selector
    assert page.locator('a[href^="javascript:"]').count() == 0
    assert dialogs == []
