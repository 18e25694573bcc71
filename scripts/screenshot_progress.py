"""Take the progress page's screenshot for the docs: docs/screenshots/progress.png.

    .venv/bin/python scripts/screenshot_progress.py [--out PATH] [--width 1280] [--also-dir DIR]

It builds a throwaway site in a temporary folder (SQLite, the repository's
challenges synced), gives a demo candidate a history of Runs and Submits
written straight into the database (no grading runs: the page only reads
submissions, so their rows are all it needs), serves it with ``manage.py
runserver`` on a free local port, signs in with headless Chromium (Debian's,
driven by Playwright) and saves the whole page. ``--also-dir`` saves the
history and a narrow (420 px) progress page there too, for a look at the
layout. Nothing outside the temporary folder and the output files is touched;
the server it started is stopped at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
USERNAME, PASSWORD = "ada", "pw-ada-lovelace-1"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

# (challenge slug, [(kind, verdict, score)] oldest first): a candidate two weeks into the tracks.
STORY: list[tuple[str, list[tuple[str, str, float | None]]]] = [
    ("implement-engine-execute", [("run", "wrong_answer", 40.0), ("submit", "partial", 45.0), ("submit", "partial", 72.5),
                                  ("run", "accepted", 100.0), ("submit", "accepted", 100.0)]),
    ("fp16-stable-softmax", [("submit", "wrong_answer", 20.0), ("submit", "partial", 60.0), ("submit", "partial", 85.0),
                             ("submit", "accepted", 100.0)]),
    ("custom-autograd-function", [("run", "runtime_error", 0.0), ("submit", "partial", 50.0), ("submit", "partial", 66.7)]),
    ("register-meta-kernel", [("submit", "wrong_answer", 12.5), ("submit", "accepted", 100.0)]),
    ("compensated-summation", [("run", "wrong_answer", 33.3)]),
    ("onnx-export-verify", [("submit", "partial", 55.0), ("submit", "partial", 80.0), ("submit", "accepted", 100.0)]),
    ("onnx-fold-batchnorm", [("submit", "wrong_answer", 25.0), ("submit", "partial", 62.5)]),
    ("find-drifting-stage", [("run", "wrong_answer", 0.0), ("submit", "wrong_answer", 0.0), ("submit", "partial", 50.0)]),
    ("tf-stale-closure", [("submit", "accepted", 100.0)]),
]  # fmt: skip
CATEGORIES = ("correctness", "gradients", "numerics")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def build_site(env: dict[str, str]) -> None:
    """Migrate, sync the challenges and write the demo candidate's history (in this process, on the temporary database)."""
    os.environ.update(env)
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.utils import timezone

    from web.challenges.models import Challenge
    from web.submissions.models import Submission

    call_command("migrate", verbosity=0)
    call_command("sync_challenges", verbosity=0)
    user = User.objects.create_user(USERNAME, password=PASSWORD)
    challenges = {c.slug: c for c in Challenge.objects.select_related("current_version")}
    when = timezone.now() - timedelta(days=14)
    # Interleave the challenges as a person would: a few attempts here, then there.
    queue = [(slug, i, attempt) for slug, attempts in STORY for i, attempt in enumerate(attempts)]
    queue.sort(key=lambda item: (item[1] // 2, [s for s, _ in STORY].index(item[0]), item[1]))
    for slug, _, (kind, verdict, score) in queue:
        challenge = challenges.get(slug)
        if challenge is None or challenge.current_version is None:
            continue
        when += timedelta(hours=7, minutes=13)
        share = (score or 0.0) / 100.0
        categories = {
            name: {"score": round(100 * min(1.0, share * (1.15 - 0.1 * i)), 1), "passed": round(4 * min(1.0, share * (1.15 - 0.1 * i))), "total": 4}
            for i, name in enumerate(CATEGORIES[: 1 + len(slug) % 3])
        }
        row = Submission.objects.create(
            user=user, challenge=challenge, version=challenge.current_version, kind=kind, code="# demo\n", status="done",
            verdict=verdict, score=score, categories=categories, message="", finished_at=when,
        )  # fmt: skip
        Submission.objects.filter(pk=row.pk).update(created_at=when)


def wait_for(url: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):  # noqa: S310 - our own local server
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots" / "progress.png")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--also-dir", type=Path, help="also save the history and a 420 px progress page here")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="progress-shot-") as tmp:
        port = free_port()
        env = {
            "DJANGO_SETTINGS_MODULE": "web.config.settings",
            "DEBUG": "1",
            "DATABASE_URL": f"sqlite:///{tmp}/db.sqlite3",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "GRADER_CACHE_DIR": f"{tmp}/cache",
            "LOG_LEVEL": "WARNING",
            "PYTHONPATH": str(REPO),
        }
        build_site(env)
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            cwd=REPO, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            base = f"http://127.0.0.1:{port}"
            wait_for(f"{base}/accounts/login/")
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
                page = browser.new_page(viewport={"width": args.width, "height": 900})
                page.goto(f"{base}/accounts/login/")
                page.fill("input[name=username]", USERNAME)
                page.fill("input[name=password]", PASSWORD)
                page.click("button[type=submit]")
                page.wait_for_url(f"{base}/")
                page.goto(f"{base}/progress/")
                page.wait_for_selector('#score-canvas[data-view="all"]')
                args.out.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(args.out), full_page=True)
                print(f"saved {args.out}")
                if args.also_dir:
                    args.also_dir.mkdir(parents=True, exist_ok=True)
                    shots = {
                        "progress-1280-one-challenge.png": (1280, "/progress/", "fp16-stable-softmax"),
                        "progress-420.png": (420, "/progress/", None),
                        "history-1280.png": (1280, "/submissions/?kind=submit", None),
                        "history-420.png": (420, "/submissions/", None),
                        "catalogue-1280.png": (1280, "/", None),
                        "catalogue-420.png": (420, "/", None),
                        "track-1280.png": (1280, "/tracks/framework-internals/", None),
                        "submission-420.png": (420, "/submissions/1/", None),
                    }
                    for name, (width, path, pick) in shots.items():
                        page.set_viewport_size({"width": width, "height": 900})
                        page.goto(base + path)
                        if pick:
                            page.select_option("#chart-challenge", pick)
                            page.wait_for_selector(f'#score-canvas[data-view="{pick}"]')
                        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
                        page.screenshot(path=str(args.also_dir / name), full_page=True)
                        print(f"saved {args.also_dir / name} (horizontal overflow {overflow} px)")
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
