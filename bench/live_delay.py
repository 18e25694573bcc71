"""The delay from a probe finishing in the sandbox to its line on the page: ``scripts/live-delay.sh``.

A benchmark, not a test: it drives a running service in headless Chromium and
prints figures; it asserts nothing. It logs in, opens ``count-slowly``
(tests/browser/fixtures/live_packages/: four public probes that each sleep
0.8 s, then print ``finished_at=<Unix time>`` as they return), presses Run
``--runs`` times with a correct solution, and for each probe whose line the
page showed before the verdict takes: the time the probe printed (in the
sandbox: same host, same clock), the time the worker judged it (the stored
line's ``at``, read from the database when ``--db`` is given) and the time
the page first showed it (``data-shown-at``, recorded by a MutationObserver).

Usage::

    python -m bench.live_delay --url http://127.0.0.1:8000 --user ada --password ... [--runs 10] [--db var/db.sqlite3]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
from typing import Any

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
CORRECT = "def scale(x, k):\n    return [v * k for v in x]\n"
RECORD = """() => { window.shownAt = {}; new MutationObserver(() => document.querySelectorAll("#live .live-probe").forEach(li => {
  if (!(li.dataset.probe in window.shownAt)) window.shownAt[li.dataset.probe] = Number(li.dataset.shownAt); })
).observe(document.getElementById("result"), {subtree: true, childList: true}); }"""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--db", help="the service's SQLite file, to split the delay at the worker")
    parser.add_argument("--json", help="write the samples here")
    args = parser.parse_args()

    samples: list[dict[str, Any]] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{args.url}/accounts/login/")
        page.fill("input[name=username]", args.user)
        page.fill("input[name=password]", args.password)
        page.click("button[type=submit], input[type=submit]")
        page.wait_for_load_state()
        page.goto(f"{args.url}/challenges/count-slowly/")
        page.evaluate("() => { window.challengeEditor.setValue(arguments[0]); }".replace("arguments[0]", json.dumps(CORRECT)))
        for run in range(args.runs):
            page.evaluate(RECORD)
            before = page.locator("#result").get_attribute("data-submission") or ""
            page.click("#run")
            # This run's verdict, not the one before it still on the panel.
            page.wait_for_function(
                "b => { const r = document.getElementById('result'); return r.dataset.submission && r.dataset.submission !== b"
                " && r.dataset.status === 'done'; }",
                arg=before,
                timeout=180_000,
            )
            submission = page.locator("#result").get_attribute("data-submission")
            shown: dict[str, float] = page.evaluate("window.shownAt")
            judged: dict[str, float] = {}
            if args.db:
                with sqlite3.connect(args.db) as db:
                    row = db.execute("select live from submissions_submission where id = ?", (submission,)).fetchone()
                judged = {line["name"]: line["at"] for line in json.loads(row[0]).get("probes", [])} if row else {}
            for name, at_ms in shown.items():
                stdout = page.locator(f'#probes .probe[data-probe="{name}"] .probe-stdout pre').text_content() or ""
                finished = float(stdout.split("finished_at=")[1].split()[0])
                sample = {"run": run, "probe": name, "to_page_s": at_ms / 1000 - finished}
                if name in judged:
                    sample["to_worker_s"] = judged[name] - finished
                samples.append(sample)
            page.wait_for_timeout(500)
        browser.close()

    delays = [s["to_page_s"] for s in samples]
    worker = [s["to_worker_s"] for s in samples if "to_worker_s" in s]
    print(f"{len(delays)} probe lines over {args.runs} runs (the last probe of a run usually arrives with its verdict)")
    if delays:
        print(f"probe finished -> line on the page: p50 {statistics.median(delays) * 1000:.0f} ms, "
              f"p90 {percentile(delays, 0.9) * 1000:.0f} ms, max {max(delays) * 1000:.0f} ms")  # fmt: skip
    if worker:
        print(f"probe finished -> judged in the worker: p50 {statistics.median(worker) * 1000:.1f} ms, max {max(worker) * 1000:.1f} ms")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(samples, fh, indent=1)


if __name__ == "__main__":
    main()
