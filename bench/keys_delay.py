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

``--sockets`` leaves the browsers out: two websocket clients (the
``websockets`` library, each with its user's session cookie) stand in for
the pages, the candidate's sends the same one-character edits and the
coach's receives them; what remains is the server's part (the socket, the
checks, the Redis store and the channel layer, and the hop between the
gunicorn workers the two sockets landed on).

Usage::

    python -m bench.keys_delay --url http://127.0.0.1:8000 --coach grace --candidate ada --password ... \
        --interview 1 --token ... [--keys 300] [--gap 40] [--sockets]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

import requests
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


def session_cookie(url: str, user: str, password: str) -> str:
    """Log in as a browser would (CSRF cookie and token) and return the session cookie."""
    http = requests.Session()
    http.get(f"{url}/accounts/login/", timeout=30)
    token = http.cookies["csrftoken"]
    answer = http.post(
        f"{url}/accounts/login/", data={"username": user, "password": password, "csrfmiddlewaretoken": token},
        headers={"Referer": f"{url}/accounts/login/"}, timeout=30,
    )  # fmt: skip
    answer.raise_for_status()
    return f"sessionid={http.cookies['sessionid']}"


async def sockets(args: argparse.Namespace) -> tuple[list[float], bool]:
    """Send ``args.keys`` one-character edits from the candidate's socket; the delays until the coach's socket has each."""
    from websockets.asyncio.client import connect

    ws_url = args.url.replace("http://", "ws://")
    candidate_cookie = session_cookie(args.url, args.candidate, args.password)
    coach_cookie = session_cookie(args.url, args.coach, args.password)
    requests.get(f"{args.url}/interviews/join/{args.token}/", headers={"Cookie": candidate_cookie}, timeout=30)  # starts the clock
    origin = args.url
    async with (
        connect(f"{ws_url}/ws/interviews/join/{args.token}/keys/", origin=origin, additional_headers={"Cookie": candidate_cookie}) as typist,
        connect(f"{ws_url}/ws/interviews/{args.interview}/keys/", origin=origin, additional_headers={"Cookie": coach_cookie}) as watcher,
    ):
        hello = json.loads(await typist.recv())
        slug, doc = next(iter(hello["docs"].items()))
        text, seq = doc["text"] or "", doc["seq"] + 1
        await typist.send(json.dumps({"type": "reset", "slug": slug, "seq": seq, "text": text, "sel": []}))
        # The watcher has the reset either in its hello (it joined after) or relayed (it joined before).
        message = json.loads(await asyncio.wait_for(watcher.recv(), 10))
        while message.get("seq", message.get("docs", {}).get(slug, {}).get("seq")) != seq:
            message = json.loads(await asyncio.wait_for(watcher.recv(), 10))
        sent: dict[int, float] = {}
        arrived: dict[int, float] = {}
        last = seq + args.keys

        async def receive() -> None:
            while True:
                message = json.loads(await watcher.recv())
                if message.get("type") == "edit":
                    arrived[message["seq"]] = time.perf_counter()
                    if message["seq"] == last:
                        return

        async def drain_acks() -> None:
            while True:
                if json.loads(await typist.recv()).get("seq") == last:
                    return

        receiving, acks = asyncio.create_task(receive()), asyncio.create_task(drain_acks())
        chars = (WORDS * (args.keys // len(WORDS) + 1))[: args.keys]
        for ch in chars:
            lines = text.split("\n")
            end = [len(lines) - 1, len(lines[-1].encode("utf-16-le")) // 2]
            seq += 1
            text += ch
            after = [end[0], end[1] + 1]
            op = {"from": end, "to": end, "text": ch}
            edit = {"type": "edit", "slug": slug, "seq": seq, "ops": [op], "sel": [{"anchor": after, "head": after}]}
            sent[seq] = time.perf_counter()
            await typist.send(json.dumps(edit))
            await asyncio.sleep(args.gap / 1000)
        await asyncio.wait_for(asyncio.gather(receiving, acks), timeout=60)
    delays = [(arrived[s] - sent[s]) * 1000 for s in sorted(sent)]
    return delays, len(arrived) == len(sent)


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
    parser.add_argument("--sockets", action="store_true", help="two websocket clients instead of two browsers")
    parser.add_argument("--json", help="write the samples here")
    args = parser.parse_args()
    if args.sockets:
        delays, complete = asyncio.run(sockets(args))
        report(args, delays, {"mode": "sockets", "all_arrived": complete})
        return

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
    report(args, delays, {"mode": "browsers", "edits": len(edits), "texts_agree": typed == shown})


def report(args: argparse.Namespace, delays: list[float], extra: dict[str, Any]) -> None:
    figures = {
        "keys": args.keys,
        "gap_ms": args.gap,
        "measured": len(delays),
        **extra,
        "p50_ms": round(statistics.median(delays), 1),
        "p95_ms": round(percentile(delays, 0.95), 1),
        "max_ms": round(max(delays), 1),
        "mean_ms": round(statistics.fmean(delays), 1),
    }
    print(json.dumps(figures))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"report": figures, "delays_ms": delays}, f)


if __name__ == "__main__":
    main()
