"""Load test of the running service over HTTP: ``make loadtest`` (or ``python -m bench.loadtest --url ...``).

A benchmark, not a test: it drives a running service and prints figures;
it asserts nothing (the machine is shared and noisy). Each simulated
candidate is a thread with its own HTTP session (requests), which signs up
through the sign-up page (or logs in if the account exists), then until the
time is up: opens the catalogue, a challenge page and its track page, thinks,
presses Run with the starter code and polls the result as the page does,
then Submit and polls again. A candidate waits for its verdict before its
next submission, like a person. ``--readers`` adds candidates who only read
pages (the catalogue, statements, track pages) with a few seconds between them.

Reported: pages served per second and page latency p50/p95/p99 (HTML pages;
the sign-up and login posts apart, as password hashing is slow on purpose),
the JSON API (run/submit and polls) the same way, submit-to-verdict latency
(the server's created_at -> finished_at, and as the candidate saw it),
errors (any 5xx, any unexpected 4xx, any connection failure), submissions
lost (not done when the drain ends), and the queue depth over time: LLEN of
each grading queue in Redis (kombu's priority lists included) and the
messages taken but not yet acknowledged (Celery's ``unacked`` hash), sampled
every second.

Usage::

    python -m bench.loadtest --url http://127.0.0.1:8000 --redis-url redis://127.0.0.1:6379/0 \\
        [--candidates 20] [--duration 120] [--slugs a,b] [--json out.json]

``scripts/loadtest.sh`` (``make loadtest``) starts a throwaway stack when no URL is given.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import redis
import requests

PRIORITY_SEPARATOR = "\x06\x16"  # kombu's Redis transport: "<queue>\x06\x16<priority>" lists
PRIORITY_STEPS = (3, 6, 9)
PASSWORD = "load-Test-pass-9137"  # noqa: S105 - the simulated candidates' password on a throwaway stack


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


@dataclass
class Stats:
    """Everything the candidates measured; one lock, appended from every thread."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    pages: list[float] = field(default_factory=list)  # seconds per HTML page
    api: list[float] = field(default_factory=list)  # seconds per JSON request
    auth: list[float] = field(default_factory=list)  # sign-up and login posts (password hashing is slow on purpose)
    verdict_server: list[float] = field(default_factory=list)  # created_at -> finished_at
    verdict_client: list[float] = field(default_factory=list)  # POST sent -> done seen
    errors: list[str] = field(default_factory=list)
    refused: int = 0  # 429s: the service said "wait" (too many pending)
    submissions: dict[int, tuple[str, Candidate]] = field(default_factory=dict)  # id -> (status URL, owner)
    done: set[int] = field(default_factory=set)
    verdicts: dict[str, int] = field(default_factory=dict)
    page_kinds: dict[str, list[float]] = field(default_factory=dict)  # "catalogue", "challenge", "track" -> seconds

    def add(self, bucket: str, seconds: float) -> None:
        with self.lock:
            getattr(self, bucket).append(seconds)

    def error(self, what: str) -> None:
        with self.lock:
            self.errors.append(what)


class Clock:
    """The activity window: opens when every candidate has signed up."""

    def __init__(self, candidates: int) -> None:
        self.go = threading.Event()
        self.stop_at = float("inf")
        self._waiting = candidates
        self._lock = threading.Lock()
        self.all_arrived = threading.Event()

    def arrived(self) -> None:
        with self._lock:
            self._waiting -= 1
            if self._waiting <= 0:
                self.all_arrived.set()

    def start(self, duration: float) -> float:
        started = time.monotonic()
        self.stop_at = started + duration
        self.go.set()
        return started


class Candidate(threading.Thread):
    def __init__(self, index: int, args: argparse.Namespace, stats: Stats, slugs: list[str], clock: Clock, *, submits: bool = True) -> None:
        super().__init__(name=f"candidate-{index}", daemon=True)
        self.args = args
        self.base = args.url.rstrip("/")
        self.stats = stats
        self.slugs = slugs
        self.clock = clock
        self.submits = submits  # False: reads pages only (a candidate reading statements between attempts)
        self.username = f"{args.user_prefix}{index}"
        self.rng = random.Random(index)
        self.session = requests.Session()

    # --- HTTP helpers -----------------------------------------------------------------------

    def request(
        self, method: str, path: str, bucket: str, expect: tuple[int, ...] = (200,), label: str = "", **kwargs: Any
    ) -> requests.Response | None:
        started = time.monotonic()
        try:
            response = self.session.request(method, self.base + path, timeout=30, allow_redirects=False, **kwargs)
        except requests.RequestException as exc:
            self.stats.error(f"{method} {path}: {type(exc).__name__}: {exc}")
            return None
        self.stats.add(bucket, time.monotonic() - started)
        if label:
            with self.stats.lock:
                self.stats.page_kinds.setdefault(label, []).append(time.monotonic() - started)
        if response.status_code == 429 and bucket == "api":
            with self.stats.lock:
                self.stats.refused += 1
            return response
        if response.status_code not in expect:
            self.stats.error(f"{method} {path}: HTTP {response.status_code} {response.text[:200]!r}")
            return None
        return response

    def csrf(self) -> str:
        return self.session.cookies.get("csrftoken") or ""

    def think(self, low: float, high: float) -> None:
        time.sleep(self.rng.uniform(low, high) * self.args.think)

    # --- What a candidate does --------------------------------------------------------------------

    def sign_up(self) -> bool:
        if self.request("GET", "/accounts/signup/", "auth") is None:
            return False
        form = {"username": self.username, "password1": PASSWORD, "password2": PASSWORD, "csrfmiddlewaretoken": self.csrf()}
        response = self.request("POST", "/accounts/signup/", "auth", expect=(200, 302), data=form, headers={"Referer": self.base + "/"})
        if response is not None and response.status_code == 302:
            return True
        # The account exists from an earlier run: log in instead.
        self.request("GET", "/accounts/login/", "auth")
        form = {"username": self.username, "password": PASSWORD, "csrfmiddlewaretoken": self.csrf()}
        response = self.request("POST", "/accounts/login/", "auth", expect=(302,), data=form, headers={"Referer": self.base + "/"})
        return response is not None

    def grade(self, slug: str, kind: str, code: str) -> None:
        sent = time.monotonic()
        response = self.request(
            "POST", f"/challenges/{slug}/{kind}", "api", expect=(202,), data=code.encode(),
            headers={"Content-Type": "text/plain; charset=utf-8", "X-CSRFToken": self.csrf(), "Referer": self.base + "/"},
        )  # fmt: skip
        if response is None or response.status_code != 202:
            return
        created = response.json()
        with self.stats.lock:
            self.stats.submissions[int(created["id"])] = (created["url"], self)
        deadline = time.monotonic() + self.args.verdict_timeout
        delay = 0.5
        while time.monotonic() < deadline:
            time.sleep(delay)
            delay = min(delay + 0.15, 2.0)  # the page's own polling schedule
            answer = self.request("GET", created["url"], "api")
            if answer is None:
                continue
            data = answer.json()
            if data.get("done"):
                self.record_done(data, time.monotonic() - sent)
                return

    def record_done(self, data: dict[str, Any], seen_after: float) -> None:
        from datetime import datetime

        server = (datetime.fromisoformat(data["finished_at"]) - datetime.fromisoformat(data["created_at"])).total_seconds()
        with self.stats.lock:
            self.stats.done.add(int(data["id"]))
            self.stats.verdicts[data["verdict"]] = self.stats.verdicts.get(data["verdict"], 0) + 1
            self.stats.verdict_server.append(server)
            self.stats.verdict_client.append(seen_after)

    def run(self) -> None:
        # Every candidate signs up first, and the clock starts when all have: a
        # burst of sign-ups is password hashing (slow on purpose), measured apart.
        try:
            signed_up = self.sign_up()
        finally:
            self.clock.arrived()
        self.clock.go.wait()
        if not signed_up:
            return
        time.sleep(self.rng.uniform(0, 3))  # candidates do not all arrive in the same second
        while time.monotonic() < self.clock.stop_at:
            self.request("GET", "/", "pages", label="catalogue")
            slug = self.rng.choice(self.slugs)
            page = self.request("GET", f"/challenges/{slug}/", "pages", label="challenge")
            if page is None:
                self.think(2, 4)
                continue
            track = re.search(r'href="/\?track=([\w-]+)"', page.text)
            if track:
                self.request("GET", f"/tracks/{track.group(1)}/", "pages", label="track")
            if not self.submits:
                self.think(2, 6)
                continue
            starter = re.search(r'<script id="starter-code" type="application/json">(.*?)</script>', page.text, re.S)
            code = json.loads(starter.group(1)) if starter else "x = 1\n"
            self.think(2, 5)
            if time.monotonic() >= self.clock.stop_at:
                break
            self.grade(slug, "run", code)
            self.think(1, 3)
            if time.monotonic() >= self.clock.stop_at:
                break
            self.grade(slug, "submit", code)
            self.think(1, 3)


class QueueSampler(threading.Thread):
    """LLEN of the grading queues and the unacknowledged messages, once a second."""

    def __init__(self, redis_url: str, queues: list[str], started: float) -> None:
        super().__init__(name="queue-sampler", daemon=True)
        self.client = redis.Redis.from_url(redis_url, socket_timeout=2)
        self.queues = queues
        self.started = started
        self.samples: list[tuple[float, int, int]] = []  # (t, waiting, unacked)
        self.stopped = threading.Event()

    def sample(self) -> tuple[int, int]:
        with self.client.pipeline(transaction=False) as pipe:
            for name in self.queues:
                pipe.llen(name)
                for step in PRIORITY_STEPS:
                    pipe.llen(f"{name}{PRIORITY_SEPARATOR}{step}")
            pipe.hlen("unacked")
            *lengths, unacked = pipe.execute()
        return int(sum(lengths)), int(unacked)

    def run(self) -> None:
        while not self.stopped.is_set():
            try:
                waiting, unacked = self.sample()
                self.samples.append((time.monotonic() - self.started, waiting, unacked))
            except redis.RedisError as exc:
                print(f"queue sampler: {exc}", file=sys.stderr)
            self.stopped.wait(1.0)


def settle(sampler: QueueSampler, timeout: float) -> float:
    """Wait until nothing waits in the queues and nothing is being worked on, up to ``timeout``; the seconds waited.

    A stack that has just synced holds a preparation per challenge (the
    reference run ahead of the first candidate); a service that has been up
    a while has run them, and the clock should not count them.
    """
    started = time.monotonic()
    quiet = 0
    while time.monotonic() - started < timeout and quiet < 3:
        waiting, unacked = sampler.sample()
        quiet = quiet + 1 if waiting == unacked == 0 else 0
        time.sleep(1.0)
    return time.monotonic() - started


def discover_slugs(base: str) -> list[str]:
    page = requests.get(base.rstrip("/") + "/", timeout=30)
    page.raise_for_status()
    return sorted(set(re.findall(r'href="/challenges/([\w-]+)/"', page.text)))


def load_average() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "n/a"


def fmt_ms(values: list[float]) -> str:
    if not values:
        return "-"
    return " / ".join(f"{percentile(values, q) * 1000:.0f}" for q in (50, 95, 99))


def fmt_s(values: list[float]) -> str:
    if not values:
        return "-"
    return " / ".join(f"{percentile(values, q):.1f}" for q in (50, 95, 99))


def drain(stats: Stats, timeout: float) -> None:
    """Wait for every submission made to be done (the candidates stopped submitting)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with stats.lock:
            pending = [pk for pk in stats.submissions if pk not in stats.done]
        if not pending:
            return
        time.sleep(2)


def final_check(stats: Stats) -> list[int]:
    """Ask the service, as its owner, about every submission not seen done; return those still not done."""
    lost = []
    for pk, (url, owner) in sorted(stats.submissions.items()):
        if pk in stats.done:
            continue
        try:
            response = owner.session.get(owner.base + url, timeout=30)
            data = response.json() if response.status_code == 200 else {}
        except (requests.RequestException, ValueError):
            data = {}
        if data.get("done"):
            owner.record_done(data, float("nan"))
        else:
            lost.append(pk)
    return lost


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the running service, e.g. http://127.0.0.1:8000")
    parser.add_argument("--redis-url", required=True, help="its Celery broker, for the queue depth")
    parser.add_argument("--queues", default="celery", help="grading queues to sample, comma-separated")
    parser.add_argument("--candidates", type=int, default=20)
    parser.add_argument("--readers", type=int, default=0, help="more candidates who only read pages (no run or submit)")
    parser.add_argument("--duration", type=float, default=120, help="seconds of activity before the drain")
    parser.add_argument("--drain", type=float, default=300, help="seconds to wait for the last verdicts")
    parser.add_argument("--verdict-timeout", type=float, default=600)
    parser.add_argument("--think", type=float, default=1.0, help="scale of the candidates' think times")
    parser.add_argument("--slugs", default="", help="challenges to use (default: every one in the catalogue)")
    parser.add_argument("--user-prefix", default=f"load-{int(time.time())}-")
    parser.add_argument("--json", default="", help="also write the figures to this file")
    parser.add_argument(
        "--settle", type=float, default=0,
        help="before the clock starts, wait up to this many seconds for the queues to empty (a fresh stack's expectation preparations)",
    )  # fmt: skip
    args = parser.parse_args(argv)

    slugs = [s for s in args.slugs.split(",") if s] or discover_slugs(args.url)
    if not slugs:
        print("no challenges found in the catalogue", file=sys.stderr)
        return 2
    stats = Stats()
    clock = Clock(args.candidates + args.readers)
    candidates = [Candidate(i, args, stats, slugs, clock, submits=i < args.candidates) for i in range(args.candidates + args.readers)]
    for c in candidates:
        c.start()
    clock.all_arrived.wait()
    print(f"{args.candidates + args.readers} candidates signed up; sign-up posts p50/p95/p99 {fmt_ms(stats.auth)} ms", flush=True)
    if args.settle > 0:
        waited = settle(QueueSampler(args.redis_url, [q for q in args.queues.split(",") if q], time.monotonic()), args.settle)
        print(f"queues empty after {waited:.0f} s (expectation preparations of the sync done)", flush=True)
    load_before = load_average()
    started = clock.start(args.duration)
    stop_at = clock.stop_at
    sampler = QueueSampler(args.redis_url, [q for q in args.queues.split(",") if q], started)
    sampler.start()
    loads = []
    while any(c.is_alive() for c in candidates) and time.monotonic() < stop_at:
        time.sleep(5)
        loads.append(os.getloadavg()[0])
    active = time.monotonic() - started
    pages_in_window = len(stats.pages)
    api_in_window = len(stats.api)
    for c in candidates:
        c.join(timeout=args.drain)
    drain(stats, args.drain)
    lost = final_check(stats)
    sampler.stopped.set()
    sampler.join(5)

    waiting = [w for _, w, _ in sampler.samples]
    unacked = [u for _, _, u in sampler.samples]
    saturated = [t for t, w, u in sampler.samples if t <= active and w > 0]
    in_window = [s for s in sampler.samples if s[0] <= active]
    figures = {
        "url": args.url, "candidates": args.candidates, "readers": args.readers, "duration_s": round(active, 1), "slugs": slugs,
        "load_average_before": load_before, "load_average_during_max": max(loads, default=float("nan")),
        "load_average_after": load_average(),
        "pages": len(stats.pages), "pages_per_s": round(pages_in_window / active, 2),
        "page_ms_p50_p95_p99": fmt_ms(stats.pages), "api_requests": len(stats.api), "api_per_s": round(api_in_window / active, 2),
        "api_ms_p50_p95_p99": fmt_ms(stats.api), "auth_ms_p50_p95_p99": fmt_ms(stats.auth),
        "page_kinds_ms_p50_p95_p99": {k: fmt_ms(v) for k, v in stats.page_kinds.items()},
        "submissions": len(stats.submissions), "done": len(stats.done), "lost": lost, "verdicts": stats.verdicts,
        "verdict_server_s_p50_p95_p99": fmt_s(stats.verdict_server),
        "verdict_client_s_p50_p95_p99": fmt_s([v for v in stats.verdict_client if v == v]),
        "errors": len(stats.errors), "error_samples": stats.errors[:10], "refused_429": stats.refused,
        "queue_waiting_max": max(waiting, default=0), "queue_waiting_mean": round(statistics.fmean(waiting), 1) if waiting else 0,
        "queue_unacked_max": max(unacked, default=0),
        "queue_busy_share": round(len(saturated) / len(in_window), 2) if in_window else 0,
        "queue_series": [(round(t), w, u) for t, w, u in sampler.samples[::10]],
    }  # fmt: skip
    print()
    print(f"load test of {args.url}: {args.candidates} candidates and {args.readers} readers for {active:.0f} s on {', '.join(slugs)}")
    print(f"load average: before {load_before}, max during {figures['load_average_during_max']:.2f}, after {figures['load_average_after']}")
    print(f"pages: {len(stats.pages)} served, {figures['pages_per_s']} per s; latency p50/p95/p99 {figures['page_ms_p50_p95_p99']} ms")
    for kind, values in sorted(stats.page_kinds.items()):
        print(f"  {kind}: {len(values)}, p50/p95/p99 {fmt_ms(values)} ms")
    print(f"sign-up/login (before the clock): {len(stats.auth)} requests; latency p50/p95/p99 {fmt_ms(stats.auth)} ms")
    print(f"json api: {len(stats.api)} requests, {figures['api_per_s']} per s; latency p50/p95/p99 {figures['api_ms_p50_p95_p99']} ms")
    print(f"submissions: {len(stats.submissions)}, done {len(stats.done)}, lost {len(lost)} {lost[:10]}; verdicts {stats.verdicts}")
    print(
        f"submit to verdict p50/p95/p99: server {figures['verdict_server_s_p50_p95_p99']} s,",
        f"as seen by the candidate {figures['verdict_client_s_p50_p95_p99']} s",
    )
    print(f"errors: {len(stats.errors)}; refused (429, too many pending): {stats.refused}")
    for e in stats.errors[:10]:
        print(f"  {e}")
    print(
        f"queue: waiting max {figures['queue_waiting_max']}, mean {figures['queue_waiting_mean']}; unacked max {figures['queue_unacked_max']}; "
        f"non-empty in {figures['queue_busy_share']:.0%} of the samples while candidates were active"
    )
    print("queue over time (s: waiting/unacked): " + "  ".join(f"{t}:{w}/{u}" for t, w, u in figures["queue_series"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)
    return 0 if not stats.errors and not lost else 1


if __name__ == "__main__":
    sys.exit(main())
