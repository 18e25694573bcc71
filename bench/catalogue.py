"""What a candidate waits for on every challenge: ``make bench-catalogue``.

A benchmark, not a test: it prints a table and asserts nothing. It starts
its own stack in a temporary folder (Redis on a free port, SQLite, one
Celery worker with concurrency 1 and warm bwrap sandboxes, an empty
expected-results cache), syncs the catalogue without preparing anything,
and submits through the real path (``submission_create``: the database, the
broker, the worker, the sandbox), one submission at a time, waiting for
each verdict. Per challenge:

1. **first, unprepared**: the reference's first Submit on an empty cache, as
   the first candidate after a deploy waited before expectations were
   prepared (the reference runs first);
2. **warm**: ``--runs`` Submits of the reference and of the starter, p50 of
   submit-to-verdict, split into queue (created to claimed), sandbox start,
   the runner's run (probes in their forked children), and the rest (the
   platform: loading the package, judging, storing);
3. **first, prepared**: the cache emptied again, ``sync``'s preparations sent
   (web/submissions/services/expected.py) and waited for, then the first
   Submit of each challenge again: what a candidate now waits after a deploy.

The machine's load average is printed before and after. Usage::

    python -m bench.catalogue [--runs 3] [--slugs a,b] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Timing:
    total: float
    queue: float
    startup: float
    run: float
    reference: float
    cached: bool

    @property
    def platform(self) -> float:
        return max(0.0, self.total - self.queue - self.startup - self.run - self.reference)


@dataclass
class Row:
    slug: str
    runtime: str
    first_unprepared: Timing | None = None
    first_prepared: Timing | None = None
    reference: list[Timing] = field(default_factory=list)
    starter: list[Timing] = field(default_factory=list)


def p50(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


class Stack:
    """Redis, the database and one worker in a temporary folder; the bench process talks to them through Django."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.cache = folder / "expected"
        self.cache.mkdir()
        port = free_port()
        self.redis = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no", "--dir", str(folder)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "web.config.settings",
            "DEBUG": "1",
            "SECRET_KEY": "bench-catalogue-only",
            "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
            "CELERY_BROKER_URL": f"redis://127.0.0.1:{port}/0",
            "GRADER_CACHE_DIR": str(self.cache),
            "SANDBOX_BACKEND": os.environ.get("SANDBOX_BACKEND", "bwrap"),
            "SANDBOX_POOL": os.environ.get("SANDBOX_POOL", "python=1,torch=1,torch-eager=1,tensorflow=1,onnx=1,tvm=1,mlir=1"),
            "PYTHONPATH": str(REPO),
        }
        os.environ.update({k: v for k, v in self.env.items() if k != "PYTHONPATH"})
        os.environ["LOG_LEVEL"] = "WARNING"  # this process only: its submissions would log two lines each
        for _ in range(50):
            if subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        self.manage("migrate", "--noinput")
        self.manage("sync_challenges", "--no-prepare")
        self.log = open(folder / "worker.log", "w")  # closed in stop()
        self.worker = subprocess.Popen(
            [str(REPO / ".venv/bin/celery"), "-A", "web.config", "worker", "--loglevel=INFO", "--concurrency=1"],
            cwd=REPO, env=self.env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        import django

        django.setup()

    def manage(self, *args: str) -> None:
        subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=self.env, check=True, capture_output=True)

    def wait_ready(self, warmup: float) -> None:
        deadline = time.monotonic() + 300
        while "ready" not in (self.folder / "worker.log").read_text():
            if time.monotonic() > deadline:
                raise SystemExit("the worker did not start; see " + str(self.folder / "worker.log"))
            time.sleep(0.5)
        time.sleep(warmup)  # the warm pools fill, as on a service that has been up a while

    def stop(self) -> None:
        import contextlib
        import signal

        for process in (self.worker, self.redis):
            with contextlib.suppress(ProcessLookupError, subprocess.TimeoutExpired):  # already gone, or let it go
                if process is self.worker:
                    os.killpg(process.pid, signal.SIGTERM)
                else:
                    process.terminate()
                process.wait(timeout=60)
        self.log.close()


def submit(user: Any, challenge: Any, code: str, timeout: float = 600) -> Timing:
    from web.submissions.models import Submission
    from web.submissions.services.intake import submission_create

    submission = submission_create(user, challenge, code, "submit")
    deadline = time.monotonic() + timeout
    while True:
        row = Submission.objects.get(pk=submission.pk)
        if row.status == "done":
            break
        if time.monotonic() > deadline:
            raise SystemExit(f"{challenge.slug}: no verdict after {timeout} s")
        time.sleep(0.05)
    if row.verdict == "internal_error":
        raise SystemExit(f"{challenge.slug}: the platform failed to grade ({row.message[:200]}); see the worker's log")
    timings = row.timings or {}
    total = (row.finished_at - row.created_at).total_seconds()
    queue = (row.started_at - row.created_at).total_seconds() if row.started_at else 0.0
    return Timing(
        total=total, queue=queue, startup=timings.get("sandbox_startup_ms", 0) / 1000, run=timings.get("run_ms", 0) / 1000,
        reference=timings.get("reference_ms", 0) / 1000, cached=bool(timings.get("reference_cached", 0)),
    )  # fmt: skip


def wait_prepared(versions: list[Any], timeout: float = 1800) -> float:
    from grader import expected as expected_cache

    started = time.monotonic()
    while any(expected_cache.load(v.version, public) is None for v in versions for public in (True, False)):
        if time.monotonic() - started > timeout:
            raise SystemExit("the preparations did not finish")
        time.sleep(0.5)
    return time.monotonic() - started


def fmt(t: Timing | None) -> str:
    return "-" if t is None else f"{t.total:.1f}"


def table(rows: list[Row], load_before: str, load_after: str, runs: int) -> str:
    lines = [
        f"Load average before: {load_before}; after: {load_after}. Warm: p50 of {runs} Submits, one at a time, seconds.",
        "",
        "| challenge | runtime | first Submit, unprepared | first Submit, prepared | reference warm | queue | sandbox start "
        "| run (probes) | platform | starter warm |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ref = r.reference
        lines.append(
            f"| {r.slug} | {r.runtime} | {fmt(r.first_unprepared)} | {fmt(r.first_prepared)} | {p50([t.total for t in ref]):.1f} | "
            f"{p50([t.queue for t in ref]):.2f} | {p50([t.startup for t in ref]):.2f} | {p50([t.run for t in ref]):.1f} | "
            f"{p50([t.platform for t in ref]):.2f} | {p50([t.total for t in r.starter]):.1f} |"
        )
    warm = sorted(p50([t.total for t in r.reference]) for r in rows)
    if warm:
        lines += ["", f"Median challenge (reference, warm): {statistics.median(warm):.1f} s; slowest: {warm[-1]:.1f} s; "
                  f"within 10 s: {sum(1 for w in warm if w <= 10)} of {len(warm)}."]  # fmt: skip
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--slugs", default="", help="comma-separated; default: the whole catalogue")
    parser.add_argument("--warmup", type=float, default=20.0)
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="mlprep-bench-catalogue-"))
    load_before = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    stack = Stack(folder)
    try:
        from django.contrib.auth.models import User

        from web.challenges.models import Challenge
        from web.challenges.services import challenge_package
        from web.submissions.services.expected import expected_prepare_enqueue

        stack.wait_ready(args.warmup)
        challenges = list(Challenge.objects.filter(published=True).select_related("current_version").order_by("slug"))
        if args.slugs:
            wanted = set(args.slugs.split(","))
            challenges = [c for c in challenges if c.slug in wanted]
        rows = []
        for n, challenge in enumerate(challenges):
            package = challenge_package(challenge.current_version)
            # A user per challenge and kind: the per-user submit rate limit never applies.
            user = User.objects.create_user(f"bench{n}")
            row = Row(challenge.slug, challenge.current_version.runtime)
            row.first_unprepared = submit(user, challenge, package.reference_code)
            for i in range(args.runs):
                row.reference.append(submit(User.objects.create_user(f"bench{n}r{i}"), challenge, package.reference_code))
                row.starter.append(submit(User.objects.create_user(f"bench{n}s{i}"), challenge, package.starter_code))
            print(f"{challenge.slug}: first {fmt(row.first_unprepared)} s, reference p50 {p50([t.total for t in row.reference]):.1f} s", flush=True)
            rows.append(row)
        # After a deploy: an empty cache, the preparations, then the first candidate of each challenge.
        shutil.rmtree(stack.cache)
        stack.cache.mkdir()
        # What sync_challenges sends (for the challenges benched), and nothing submitted until all are done.
        expected_prepare_enqueue([c.current_version_id for c in challenges])
        prepared_in = wait_prepared([c.current_version for c in challenges])
        print(f"preparations done in {prepared_in:.0f} s", flush=True)
        for n, (challenge, row) in enumerate(zip(challenges, rows, strict=True)):
            package = challenge_package(challenge.current_version)
            row.first_prepared = submit(User.objects.create_user(f"bench{n}p"), challenge, package.reference_code)
            if not row.first_prepared.cached:
                print(f"{challenge.slug}: the first Submit after the preparations still ran the reference", flush=True)
        load_after = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        text = table(rows, load_before, load_after, args.runs)
        text += f"\n\nPreparing these {len(challenges)} challenges after the sync took {prepared_in:.0f} s."
        print(text)
        if args.markdown:
            args.markdown.write_text(text + "\n")
    finally:
        stack.stop()
        print(f"logs: {folder}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
