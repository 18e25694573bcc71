"""Keystroke-to-interviewer delay of the mock interview's live view: ``scripts/keys-delay.sh``.

A benchmark, not a test: it drives a running service in headless Chromium
and prints figures; it asserts nothing. Two browser contexts (two
sessions) open the same interview: the coach's live view and the
candidate's page. The candidate types ``--keys`` characters with Playwright's
keyboard (``--gap`` ms apart: a fast typist is 100-150 ms); the candidate's
page records when each keydown reached it, the coach's page when each edit
was applied to its live editor (the ``data-seq`` attribute that
interview-keys.js sets right after the ops are in CodeMirror's DOM), with
the length of its text then. Both pages live in one browser, so
``performance.timeOrigin + performance.now()`` is one clock. The keys are
appended at the end (letters, digits and spaces: no auto-closed bracket),
so keystroke i has arrived once the coach's text is i + 1 characters
longer than before; two keys that CodeMirror read in one go (a loaded
machine) count from their own keydowns to their common edit. The run
checks that both texts agree at the end.

Usage::

    python -m bench.keys_delay --url http://127.0.0.1:8000 --coach grace --candidate ada --password ... --interview 1
"""

from __future__ import annotations

import argparse
import json
import statistics
from typing import Any

from playwright.sync_api import expect, sync_playwright

CHROMIUM = "/usr/bin/chromium"
NOW = "performance.timeOrigin + performance.now()"
RECORD_KEYS = "() => { window.keyTimes = []; document.addEventListener('keydown', () => window.keyTimes.push(" + NOW + "), true); }"
RECORD_EDITS = (
    "() => { window.edits = []; const view = document.querySelector('.keys-view'); const cm = view.querySelector('.CodeMirror').CodeMirror;"
    " new MutationObserver(() => { window.edits.push([" + NOW + ", cm.getValue().length]); })"
    ".observe(view, {attributes: true, attributeFilter: ['data-seq']}); }"
)
SHOWN = "document.querySelector('.keys-view .CodeMirror').CodeMirror.getValue()"
WORDS = "total of the probes passed in this run is 42 and the tolerance is 1e 5 for float32 "


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def log_in(page: Any, url: str, user: str, password: str) -> None:
    page.goto(f"{url}/accounts/login/")
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", password)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_load_state()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--coach", required=True)
    parser.add_argument("--candidate", required=True)
    parser.add_argument("--password", required=True, help="both users' password")
    parser.add_argument("--interview", type=int, required=True)
    parser.add_argument("--token", required=True, help="the interview's private link token")
    parser.add_argument("--keys", type=int, default=300)
    parser.add_argument("--gap", type=int, default=40, help="ms between keystrokes")
    parser.add_argument("--json", help="write the samples here")
    args = parser.parse_args()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        coach = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        log_in(coach, args.url, args.coach, args.password)
        coach.goto(f"{args.url}/interviews/{args.interview}/live/")
        candidate = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        log_in(candidate, args.url, args.candidate, args.password)
        candidate.goto(f"{args.url}/interviews/join/{args.token}/")
        expect(candidate.locator(".editor-frame")).to_have_attribute("data-keys", "live", timeout=15_000)
        expect(coach.locator("#keys-status")).to_have_attribute("data-state", "live", timeout=15_000)
        view = coach.locator(".keys-view").first
        expect(view).to_be_visible(timeout=15_000)

        candidate.click(".CodeMirror")
        candidate.keyboard.press("Control+End")
        candidate.keyboard.press("Enter")  # its own edit, before the timed keys
        coach.wait_for_function(f"(t) => {SHOWN} === t", arg=candidate.evaluate("window.interviewEditor.getValue()"), timeout=15_000)
        start_length = len(coach.evaluate(SHOWN))
        coach.evaluate(RECORD_EDITS)
        candidate.evaluate(RECORD_KEYS)
        text = (WORDS * (args.keys // len(WORDS) + 1))[: args.keys]
        candidate.keyboard.type(text, delay=args.gap)
        coach.wait_for_function(f"(n) => {SHOWN}.length >= n", arg=start_length + args.keys, timeout=60_000)
        key_times: list[float] = candidate.evaluate("window.keyTimes")
        edits: list[list[float]] = coach.evaluate("window.edits")
        typed = candidate.evaluate("window.interviewEditor.getValue()")
        shown = coach.evaluate(SHOWN)
        browser.close()

    delays = []
    for i, pressed in enumerate(key_times):
        arrived = next((at for at, length in edits if length >= start_length + i + 1), None)
        if arrived is not None:
            delays.append(arrived - pressed)
    report = {
        "keys": args.keys,
        "gap_ms": args.gap,
        "measured": len(delays),
        "edits": len(edits),
        "texts_agree": typed == shown,
        "p50_ms": round(statistics.median(delays), 1),
        "p95_ms": round(percentile(delays, 0.95), 1),
        "max_ms": round(max(delays), 1),
        "mean_ms": round(statistics.fmean(delays), 1),
    }
    print(json.dumps(report))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"report": report, "delays_ms": delays}, f)


if __name__ == "__main__":
    main()
