"""Issue 5's "done when", in one run: a coach writes a challenge in the browser, validates and
publishes it, runs a 30-minute mock interview with it in which the candidate submits, and ends
with a scorecard; the same code is then submitted from the command-line client.

Everything real except the browser (tests/browser covers the pages themselves): the site's
own URLs through Django's test client, a Celery worker on Redis grading and validating in bwrap,
the live server for the CLI. The challenge carries a custom check, which runs in a sandbox of
its own because a coach wrote it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from typing import Any

from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from tests.services import REPO, Worker, wait_until_done
from tests.web.test_authoring_services import FIXTURE, fixture_draft
from tests.web.test_authoring_views import form_data
from web.accounts.roles import coach_grant
from web.accounts.services import api_token_ensure
from web.authoring.zipfiles import write_package_zip
from web.challenges.models import Challenge
from web.challenges.storage import files_decode
from web.interviews.models import Interview
from web.submissions.models import Submission

SOLUTION = "def add(a, b):\n    return a + b\n"
CHECKS = "def same_values(actual, expected):\n    return actual == expected, f'got {actual}, expected {expected}'\n"


def logged_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def poll_json(client: Client, url: str, done: Any, timeout: float = 180) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        data = client.get(url, HTTP_ACCEPT="application/json").json()
        if done(data) or time.monotonic() > deadline:
            return data
        time.sleep(0.3)


def test_a_coach_writes_a_challenge_interviews_with_it_and_scores_it(live_server: Any, celery_worker: Worker, tmp_path: Any) -> None:
    coach_user = User.objects.create_user("grace", password="pw-grace-hopper-1")
    coach_grant(coach_user)
    candidate_user = User.objects.create_user("ada", password="pw-ada-lovelace-1")
    coach, candidate = logged_in(coach_user), logged_in(candidate_user)

    # 1. The coach writes the challenge in the browser's form and saves it; then, since the form has
    #    no field for probes/checks.py, imports a zip of it with a custom check added (an edit too).
    created = coach.post(reverse("author-create"), form_data(fixture_draft("add-three", title="Add three ways")))
    assert created.status_code == 302, re.findall(r"(?:error[^>]*>)([^<]+)", created.content.decode())
    challenge = Challenge.objects.get(slug="add-three")
    assert challenge.source == "browser" and not challenge.published and challenge.draft_version is not None
    hidden = FIXTURE.joinpath("probes", "hidden.py").read_text().replace('hints=["sum"])', 'hints=["sum"], check="same_values")')
    files = {**files_decode(challenge.draft_version.files), "probes/hidden.py": hidden.encode(), "probes/checks.py": CHECKS.encode()}
    imported = coach.post(reverse("author-import"), {"package": SimpleUploadedFile("add-three.zip", write_package_zip(files, "add-three"))})
    assert imported.status_code == 302, re.findall(r"(?:error[^>]*>)([^<]+)", imported.content.decode())
    challenge.refresh_from_db()
    version = challenge.draft_version
    assert version is not None and "probes/checks.py" in version.files

    # 2. Validate (a Celery task running check_challenges' checks in the sandbox), then publish.
    queued = coach.post(reverse("author-validate", args=["add-three", version.version]), HTTP_ACCEPT="application/json")
    assert queued.status_code == 202, queued.content
    report = poll_json(coach, queued.json()["url"], lambda d: d["finished"])
    assert report["passed"], report
    assert any("reference, hidden: 100%" in line for line in report["lines"])
    coach.post(reverse("author-publish", args=["add-three", version.version]))
    challenge.refresh_from_db()
    assert challenge.published and challenge.current_version == version

    # 3. A 30-minute mock interview with it; the candidate opens the private link (the clock starts).
    made = coach.post(reverse("interview-create"), {"candidate": "ada", "challenges": "add-three", "duration_minutes": "30"})
    assert made.status_code == 302, made.content.decode()[-2000:]
    interview = Interview.objects.get()
    join = reverse("interview-candidate", args=[interview.token])
    assert candidate.get(join).status_code == 200
    state = candidate.get(reverse("interview-candidate-state", args=[interview.token])).json()
    assert 29 * 60 < state["remaining_seconds"] <= 30 * 60, state

    # 4. The candidate autosaves and submits; the interviewer's live state shows the graded submission.
    candidate.post(reverse("interview-autosave", args=[interview.token, "add-three"]), data="def add(a, b):\n    pass\n",
                   content_type="text/plain")  # fmt: skip
    answer = candidate.post(reverse("interview-submit", args=[interview.token, "add-three"]), data=SOLUTION, content_type="text/plain")
    assert answer.status_code == 202, answer.content
    graded = wait_until_done(answer.json()["id"])
    assert (graded.verdict, graded.score, graded.version_id) == ("accepted", 100.0, version.pk)
    live = coach.get(reverse("interview-live-state", args=[interview.pk])).json()
    text = json.dumps(live)
    assert '"verdict": "accepted"' in text and json.dumps(SOLUTION)[1:-1] in text  # the score and the latest code

    # 5. The interviewer scores the rubric, ends the interview; the lock holds; the scorecard has it all.
    rubric = {c: {"score": 4, "comment": f"{c} ok"} for c in ("correctness", "debugging", "numerics", "communication")}
    assessed = coach.post(reverse("interview-assess", args=[interview.pk]),
                          data=json.dumps({"notes": "Clear and quick.", "rubric": rubric, "recommendation": "strong_yes"}),
                          content_type="application/json")  # fmt: skip
    assert assessed.status_code == 200, assessed.content
    coach.post(reverse("interview-end", args=[interview.pk]))
    late = candidate.post(reverse("interview-submit", args=[interview.token, "add-three"]), data=SOLUTION, content_type="text/plain")
    assert late.status_code == 409 and "ended" in late.json()["error"]
    card = coach.get(reverse("interview-scorecard", args=[interview.pk])).content.decode()
    for text in ("Add three ways", "100.0", "Clear and quick.", "numerics ok", 'data-recommendation="strong_yes"'):
        assert text in card, text
    assert "Clear and quick." not in candidate.get(join).content.decode()

    # 6. The same submission from the command-line client, through the API.
    solution = tmp_path / "solution.py"
    solution.write_text(SOLUTION)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO", "MLPREP"))}
    env.update(MLPREP_URL=live_server.url, MLPREP_TOKEN=api_token_ensure(candidate_user))
    done = subprocess.run([sys.executable, "-m", "web.cli", "submit", "add-three", str(solution)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Verdict: Accepted  score 100" in done.stdout
    from_cli = Submission.objects.exclude(pk=graded.pk).get(kind="submit")
    assert (from_cli.code, from_cli.version_id, from_cli.score) == (SOLUTION, version.pk, 100.0)
