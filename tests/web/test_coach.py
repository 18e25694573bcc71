"""The coach dashboard: web/coach/selectors.py (queue depth from a real Redis, last hour from the table) and its page."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from tests.services import _reset_producer_pool, redis_url  # noqa: F401 - pytest fixture
from web.challenges.models import Challenge
from web.coach.selectors import grading_health, percentile, queue_depths
from web.config.celery import app as celery_app
from web.submissions.models import Status, Submission, Verdict


@pytest.fixture
def broker(redis_url: str, settings: Any) -> Iterator[str]:  # noqa: F811 - the fixture above
    """The Celery app publishing to the test Redis, with a torch queue routed by GRADING_QUEUES."""
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    settings.CELERY_BROKER_URL = redis_url
    settings.GRADING_QUEUES = {"torch": "torch"}
    old = {k: celery_app.conf[k] for k in ("broker_url", "task_always_eager")}
    celery_app.conf.update(broker_url=redis_url, task_always_eager=False)
    _reset_producer_pool(celery_app)
    yield redis_url
    celery_app.conf.update(**old)
    _reset_producer_pool(celery_app)


def publish(queue: str, n: int, **options: Any) -> None:
    for i in range(n):
        celery_app.send_task("submissions.grade_submission", args=[i], queue=queue, **options)


def test_queue_depth_counts_what_waits_in_each_grading_queue(broker: str) -> None:
    publish("celery", 3)
    publish("torch", 2)
    publish("celery", 1, priority=9)  # kombu keeps prioritised messages in a list of their own

    assert queue_depths() == {"celery": 4, "torch": 2}


def test_an_unreachable_broker_is_reported_not_raised(db: None, settings: Any) -> None:
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:9/0"
    health = grading_health()
    assert health.queue_depth is None and health.queue_error and "Connection" in health.queue_error


def make(challenge: Challenge, user: User, *, age: float, waited: float, graded: float, verdict: str = Verdict.ACCEPTED) -> Submission:
    """A finished submission: created `age` s ago, started `waited` s later, done `graded` s after that."""
    now = timezone.now()
    created = now - timedelta(seconds=age)
    sub = Submission.objects.create(
        user=user, challenge=challenge, version=challenge.current_version, kind="submit", code="x", status=Status.DONE, verdict=verdict
    )
    started = created + timedelta(seconds=waited)
    Submission.objects.filter(pk=sub.pk).update(created_at=created, started_at=started, finished_at=started + timedelta(seconds=graded))
    return sub


def test_last_hour_latency_grading_time_and_failures(broker: str, challenge: Challenge, user: User) -> None:
    for i in range(1, 21):  # 20 in the window: waits 1..20 s, gradings 2 s
        make(challenge, user, age=600 + i, waited=i, graded=2)
    failed = make(challenge, user, age=300, waited=1, graded=50, verdict=Verdict.INTERNAL_ERROR)
    make(challenge, user, age=7200, waited=500, graded=500)  # two hours ago: outside the window
    Submission.objects.create(user=user, challenge=challenge, version=challenge.current_version, kind="run", code="x")
    Submission.objects.create(user=user, challenge=challenge, version=challenge.current_version, kind="run", code="x", status=Status.RUNNING)
    publish("celery", 1)

    health = grading_health()

    assert health.finished == 21 and health.failures == 1
    assert health.verdicts == {"accepted": 20, "internal_error": 1}
    assert health.latency_p50 == pytest.approx(13.0) and health.latency_p95 == pytest.approx(22.0)
    assert health.grading_p50 == pytest.approx(2.0) and health.grading_p95 == pytest.approx(2.0)  # a platform failure is not a grading time
    assert (health.queued, health.running, health.queue_depth) == (1, 1, 1)
    assert [f.id for f in health.recent_failures] == [failed.pk]


def test_percentile_is_nearest_rank() -> None:
    assert percentile([], 50) is None
    assert percentile([5.0], 95) == 5.0
    assert percentile([float(v) for v in range(1, 101)], 95) == 95.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0


def test_the_page_shows_the_figures_to_staff(broker: str, client: Client, challenge: Challenge, user: User) -> None:
    staff = User.objects.create_user("coach", password="pw-coach-123", is_staff=True)
    make(challenge, user, age=60, waited=3, graded=4)
    failed = make(challenge, user, age=30, waited=1, graded=1, verdict=Verdict.INTERNAL_ERROR)
    Submission.objects.filter(pk=failed.pk).update(message="The sandbox did not start.")
    publish("torch", 2)
    client.force_login(staff)

    html = client.get(reverse("coach-grading")).content.decode()

    assert 'id="queue-depth" data-depth="2"' in html and 'id="queue-torch"' in html
    assert 'id="failures" data-failures="1"' in html and "The sandbox did not start." in html
    assert '<span id="latency-p95">7.0</span>' in html


def test_the_page_says_when_the_broker_cannot_be_read(client: Client, db: None, settings: Any) -> None:
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:9/0"
    client.force_login(User.objects.create_user("coach", password="pw-coach-123", is_staff=True))
    response = client.get(reverse("coach-grading"))
    assert response.status_code == 200 and "The broker could not be read" in response.content.decode()


def test_candidates_and_visitors_are_kept_out(client: Client, user: User) -> None:
    anonymous = client.get(reverse("coach-grading"))
    assert anonymous.status_code == 302 and anonymous["Location"].startswith(reverse("login"))
    client.force_login(user)
    assert client.get(reverse("coach-grading")).status_code == 403
