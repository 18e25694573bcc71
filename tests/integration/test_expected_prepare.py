"""Expected observations are ready before the first candidate: a real worker prepares them after a sync.

Real Redis, a real Celery worker on bwrap, its own empty expected-results
cache: after ``sync_challenges`` the worker runs the reference on its own, so
the first candidate's submission is graded against the cache
(``reference_cached``) instead of waiting for the reference.
"""

from __future__ import annotations

import io
import time
from pathlib import Path
from typing import Any

import pytest
import redis
from django.contrib.auth.models import User
from django.core.management import call_command

from tests.services import Worker, wait_until_done
from web.challenges.models import Challenge
from web.submissions.services.intake import submission_create

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "packages"
REFERENCE = "import numpy as np\n\ndef add(a, b):\n    return np.add(a, b)\n"


@pytest.fixture
def worker_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("worker-expected-cache")


@pytest.fixture
def worker_extra_env(worker_cache: Path) -> dict[str, str]:
    return {"GRADER_CACHE_DIR": str(worker_cache), "EXPECTED_PREPARE": "1"}


def test_the_first_submission_after_a_sync_finds_its_expectations_ready(
    settings: Any, transactional_db: Any, celery_worker: Worker, worker_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from grader import expected as expected_cache

    settings.CHALLENGES_DIR = FIXTURES
    settings.EXPECTED_PREPARE = True
    call_command("sync_challenges", "--dir", str(FIXTURES), stdout=io.StringIO())
    challenge = Challenge.objects.get(slug="add-numbers")
    version = challenge.current_version
    assert version is not None

    monkeypatch.setenv("GRADER_CACHE_DIR", str(worker_cache))  # read what the worker wrote
    deadline = time.monotonic() + 120
    while expected_cache.load(version.version, True) is None or expected_cache.load(version.version, False) is None:
        assert time.monotonic() < deadline, "the worker never prepared the synced version"
        time.sleep(0.2)

    candidate = User.objects.create_user("first", password="pw-first-12345")
    done = wait_until_done(submission_create(candidate, challenge, REFERENCE, "submit").pk)
    assert done.verdict == "accepted"
    assert done.timings["reference_cached"] == 1, "the first candidate still waited for the reference"


def test_preparations_wait_behind_every_grading_on_the_broker(settings: Any, transactional_db: Any, redis_url: str) -> None:
    """No worker runs here: the messages stay in Redis, where their priority decides which list they wait in."""
    from web.config.celery import app
    from web.submissions.services.expected import PREPARE_PRIORITY, expected_prepare_catalogue

    settings.EXPECTED_PREPARE = True
    old = {k: app.conf[k] for k in ("broker_url", "task_always_eager")}
    app.conf.update(broker_url=redis_url, task_always_eager=False)
    app._pool = None
    try:
        call_command("sync_challenges", "--dir", str(FIXTURES), "--no-prepare", stdout=io.StringIO())
        client = redis.Redis.from_url(redis_url)
        client.flushdb()
        assert expected_prepare_catalogue() == Challenge.objects.filter(published=True).count() > 0
        candidate = User.objects.create_user("second", password="pw-second-12345")
        submission_create(candidate, Challenge.objects.get(slug="add-numbers"), REFERENCE, "submit")  # enqueued on commit
        lists = {key.decode(): client.llen(key) for key in client.keys("celery*") if client.type(key) == b"list"}
        # kombu's Redis transport: priority 0 in "celery", priority 9 in "celery\x06\x169"; a worker pops the first first.
        assert lists.get("celery", 0) >= 1
        assert lists.get(f"celery\x06\x16{PREPARE_PRIORITY}") == Challenge.objects.filter(published=True).count()
    finally:
        app.conf.update(**old)
        app._pool = None
