"""A submission goes from queued to done through real Redis, a real Celery worker and bwrap."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from tests.services import Worker, wait_until_done
from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir
from web.submissions.models import Submission
from web.submissions.services.intake import submission_create

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "packages"
REFERENCE = "import numpy as np\n\ndef add(a, b):\n    return np.add(a, b)\n"


@pytest.fixture
def synced(settings: Any, transactional_db: Any) -> Challenge:
    settings.CHALLENGES_DIR = FIXTURES
    report = challenge_sync_from_dir(FIXTURES)
    assert report.ok, report.errors
    return Challenge.objects.get(slug="add-numbers")


@pytest.fixture
def candidate(transactional_db: Any) -> User:
    return User.objects.create_user("cand", password="pw-cand-12345")


def test_submission_is_graded_by_a_real_worker(synced: Challenge, candidate: User, celery_worker: Worker) -> None:
    submission = submission_create(candidate, synced, REFERENCE, "submit")
    assert Submission.objects.get(pk=submission.pk).status in ("queued", "running", "done")
    done = wait_until_done(submission.pk)
    assert done.verdict == "accepted"
    assert done.score == 100
    assert done.version_id == synced.current_version_id
    assert {p["name"] for p in done.probes} == {"floats", "keeps_float16", "integers"}

    starter = wait_until_done(submission_create(candidate, synced, "def add(a, b):\n    return a\n", "run").pk)
    assert starter.verdict == "wrong_answer"
    assert starter.hints, "a failed run unlocks hints"


def test_a_worker_killed_mid_grading_leaves_the_submission_to_be_graded_again(
    synced: Challenge, candidate: User, celery_worker: Worker
) -> None:
    slow = "import time\nimport numpy as np\n\ndef add(a, b):\n    time.sleep(1.0)\n    return np.add(a, b)\n"
    submission = submission_create(candidate, synced, slow, "submit")
    deadline = time.monotonic() + 60
    while Submission.objects.get(pk=submission.pk).status != "running":
        assert time.monotonic() < deadline, "never started"
        time.sleep(0.05)
    children = celery_worker.pool_children()
    assert children, "the prefork pool has a child process"
    for pid in children:
        os.kill(pid, signal.SIGKILL)  # the pool process dies mid-task, taking the job with it
    done = wait_until_done(submission.pk, timeout=180)
    assert done.verdict == "accepted", (done.verdict, done.message)
    assert done.attempts >= 2


@pytest.mark.parametrize("worker_extra_env", [{"CELERY_TASK_SOFT_TIME_LIMIT": "2", "CELERY_TASK_TIME_LIMIT": "4"}])
def test_a_grading_longer_than_the_workers_time_limit_gets_its_packages_own(
    synced: Challenge, candidate: User, celery_worker: Worker, settings: Any
) -> None:
    # The worker's limits (2 s soft, 4 s hard: 540 s and 600 s in production) are below what this package
    # lets a grading take (probes of 3 s, a 60 s wall clock). The task is sent with limits from the
    # package's wall clock, so a slow, correct submission is graded instead of ending internal_error.
    settings.CELERY_TASK_SOFT_TIME_LIMIT, settings.CELERY_TASK_TIME_LIMIT = 2, 4
    slow = "import time\nimport numpy as np\n\ndef add(a, b):\n    time.sleep(1.5)\n    return np.add(a, b)\n"
    done = wait_until_done(submission_create(candidate, synced, slow, "submit").pk)
    assert (done.verdict, done.score, done.attempts) == ("accepted", 100, 1), done.message
