"""Check the site's pages at a phone's width and take the challenge page's screenshots for the docs.

    .venv/bin/python scripts/screenshot_pages.py [--out-dir docs/screenshots] [--also-dir DIR]

It builds a throwaway site in a temporary folder the way
scripts/screenshot_progress.py does (SQLite, the repository's challenges
synced, a demo candidate with a history written straight into the database),
adds a coach and a mock interview, serves it with ``manage.py runserver`` on a
free local port and opens each page in headless Chromium (Debian's, driven by
Playwright). For every page it prints the horizontal overflow at 420 px (the
page's scrollWidth minus its clientWidth: 0 is right), the widest elements
when there is overflow, and any form field without a label. It saves in
docs/screenshots/ the implement-engine-execute page (a statement with long
code, a long starter): challenge-1280.png and challenge-420.png as the page
opens, challenge-420-editor.png scrolled down to the editor, and
challenge-1280-result.png, the result panel of a Submit with passed probes
folded and failed ones open; with ``--also-dir`` every page at 420 px too.
It exits 1 when a page overflows or a field has no label. Nothing outside the
temporary folder and the output files is touched; the server it started is
stopped at the end.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from screenshot_progress import CHROMIUM, PASSWORD, REPO, USERNAME, build_site, free_port, wait_for

COACH, COACH_PASSWORD = "grace", "pw-grace-hopper-1"
CHALLENGE = "implement-engine-execute"

# (file name, path, who is signed in: "candidate", "coach" or None)
PAGES: list[tuple[str, str, str | None]] = [
    ("login", "/accounts/login/", None),
    ("signup", "/accounts/signup/", None),
    ("catalogue", "/", "candidate"),
    ("track", "/tracks/framework-internals/", "candidate"),
    ("challenge", f"/challenges/{CHALLENGE}/", "candidate"),
    ("challenge-softmax", "/challenges/fp16-stable-softmax/", "candidate"),
    ("progress", "/progress/", "candidate"),
    ("history", "/submissions/", "candidate"),
    ("submission", "/submissions/1/", "candidate"),
    ("api-token", "/accounts/token/", "candidate"),
    ("my-interviews", "/interviews/mine/", "candidate"),
    ("interview-candidate", "{interview_url}", "candidate"),
    ("forbidden", "/author/", "candidate"),
    ("not-found", "/challenges/no-such-challenge/", "candidate"),
    ("api-docs", "/api/v1/docs/", "candidate"),
    ("author-home", "/author/", "coach"),
    ("author-new", "/author/new/", "coach"),
    ("author-import", "/author/import/", "coach"),
    ("interviews", "/interviews/", "coach"),
    ("interview-new", "/interviews/new/", "coach"),
    ("interview-live", "{live_url}", "coach"),
    ("coach-grading", "/coach/grading/", "coach"),
]

# The page's overflow, and the elements that reach past the viewport's right edge (the deepest ones first).
OVERFLOW_JS = """() => {
  const root = document.documentElement;
  const width = root.clientWidth;
  const wide = [];
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    const parent = el.parentElement.getBoundingClientRect();
    if (r.right > width + 1 && r.width > 0 && parent.right <= width + 1) {
      let clipped = false;
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
        const s = getComputedStyle(p);
        if (s.overflowX !== 'visible' && p.getBoundingClientRect().right <= width + 1) { clipped = true; break; }
      }
      const classes = typeof el.className === 'string' && el.className.trim() ? '.' + el.className.trim().split(/\\s+/).join('.') : '';
      if (!clipped) wide.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + classes + ' ' + Math.round(r.right));
    }
  }
  return {overflow: root.scrollWidth - width, wide: wide.slice(-8)};
}"""

# Form fields a person fills in that have no label: no <label for>, no wrapping <label>, no aria-label(ledby).
UNLABELLED_JS = """() => Array.from(document.querySelectorAll('input, select, textarea'))
  .filter(el => !['hidden', 'submit', 'button', 'reset'].includes(el.type))
  .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
  .map(el => el.outerHTML.slice(0, 160))"""


def add_coach_and_interview() -> dict[str, str]:
    """A coach, and a mock interview of the demo candidate on two challenges; the URLs of its two pages."""
    from django.contrib.auth.models import User
    from django.urls import reverse

    from web.accounts.roles import coach_grant
    from web.challenges.models import Challenge
    from web.interviews.services import interview_create

    coach = User.objects.create_user(COACH, password=COACH_PASSWORD)
    coach_grant(coach)
    chosen = list(Challenge.objects.filter(slug__in=[CHALLENGE, "fp16-stable-softmax"]).order_by("slug"))
    interview = interview_create(coach, candidate_username=USERNAME, challenges=chosen, duration_minutes=60)
    return {
        "interview_url": reverse("interview-candidate", args=[interview.token]),
        "live_url": reverse("interview-live", args=[interview.pk]),
    }


def add_latest_run() -> None:
    """The demo candidate's latest Submit of CHALLENGE: three probes passed, two failed, for the result panel's picture."""
    from django.contrib.auth.models import User
    from django.utils import timezone

    from web.challenges.models import Challenge
    from web.submissions.models import Submission

    challenge = Challenge.objects.get(slug=CHALLENGE)
    outcomes = [("single_leaf", True, ""), ("chain_of_ops", True, ""), ("shared_input_diamond", False, "x.grad: expected [3.0, 3.0], got [1.5, 1.5]"),
                ("retain_graph_twice", True, ""), ("create_graph_second_order", False, "RuntimeError: grad_fn missing on the gradient")]  # fmt: skip
    probes = [
        {"name": name, "category": "correctness", "weight": 1.0, "passed": passed, "status": "ok" if passed else "wrong_answer",
         "message": message, "description": name.replace("_", " "), "duration_ms": 4 + i}
        for i, (name, passed, message) in enumerate(outcomes)
    ]  # fmt: skip
    Submission.objects.create(
        user=User.objects.get(username=USERNAME), challenge=challenge, version=challenge.current_version, kind="submit", code="# demo\n",
        status="done", verdict="wrong_answer", score=60.0, probes=probes, message="3 of 5 probes passed", finished_at=timezone.now(),
    )  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=REPO / "docs" / "screenshots")
    parser.add_argument("--also-dir", type=Path, help="also save every page at 420 px here")
    parser.add_argument("--only", help="check only the pages whose name contains this")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    problems = 0
    with tempfile.TemporaryDirectory(prefix="pages-shot-") as tmp:
        port = free_port()
        env = {
            "DJANGO_SETTINGS_MODULE": "web.config.settings",
            "DEBUG": "0",
            "SECRET_KEY": "screenshot-only-key",
            "DATABASE_URL": f"sqlite:///{tmp}/db.sqlite3",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "GRADER_CACHE_DIR": f"{tmp}/cache",
            "LOG_LEVEL": "WARNING",
            "PYTHONPATH": str(REPO),
        }
        build_site(env)
        urls = add_coach_and_interview()
        add_latest_run()
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload", "--insecure"],
            cwd=REPO, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            base = f"http://127.0.0.1:{port}"
            wait_for(f"{base}/accounts/login/")
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
                narrow = {"width": 420, "height": 900}
                contexts = {None: browser.new_context(viewport=narrow)}
                for who, (name, password) in {"candidate": (USERNAME, PASSWORD), "coach": (COACH, COACH_PASSWORD)}.items():
                    contexts[who] = browser.new_context(viewport=narrow)
                    page = contexts[who].new_page()
                    page.goto(f"{base}/accounts/login/")
                    page.fill("input[name=username]", name)
                    page.fill("input[name=password]", password)
                    page.click("button[type=submit]")
                    page.wait_for_url(f"{base}/")
                    page.close()
                args.out_dir.mkdir(parents=True, exist_ok=True)
                if args.also_dir:
                    args.also_dir.mkdir(parents=True, exist_ok=True)
                for name, path, who in PAGES:
                    if args.only and args.only not in name:
                        continue
                    page = contexts[who].new_page()
                    response = page.goto(base + path.format(**urls))
                    page.wait_for_load_state("networkidle")
                    found = page.evaluate(OVERFLOW_JS)
                    unlabelled = page.evaluate(UNLABELLED_JS)
                    status = response.status if response else "?"
                    print(f"{name:22} {status}  overflow at 420 px: {found['overflow']:4} px  unlabelled fields: {len(unlabelled)}")
                    if found["overflow"] > 0:
                        problems += 1
                        for line in found["wide"]:
                            print(f"    too wide: {line}")
                    for field in unlabelled:
                        problems += 1
                        print(f"    no label: {field}")
                    if args.also_dir:
                        page.screenshot(path=str(args.also_dir / f"{name}-420.png"), full_page=True)
                    if name == "challenge":
                        # 420 px: the top of the page (statement first), then the editor and the buttons under it.
                        page.screenshot(path=str(args.out_dir / "challenge-420.png"))
                        page.evaluate(
                            "window.scrollTo(0, document.querySelector('.solve').getBoundingClientRect().top + window.scrollY"
                            " - document.querySelector('.topbar').offsetHeight - 8)"
                        )
                        page.screenshot(path=str(args.out_dir / "challenge-420-editor.png"))
                        page.set_viewport_size({"width": 1280, "height": 900})
                        page.evaluate("window.scrollTo(0, 0)")
                        page.locator("#panel-entry .CodeMirror").wait_for()
                        page.screenshot(path=str(args.out_dir / "challenge-1280.png"))
                        # The result panel under the editor: passed probes folded into one line, the failed ones open.
                        page.locator("#result[data-status=done]").wait_for()
                        page.evaluate("window.scrollTo(0, document.querySelector('#result').getBoundingClientRect().top + window.scrollY - 120)")
                        page.screenshot(path=str(args.out_dir / "challenge-1280-result.png"))
                        print(f"saved {args.out_dir}/challenge-420.png, challenge-420-editor.png, challenge-1280.png and challenge-1280-result.png")
                    page.close()
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
