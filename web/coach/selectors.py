"""Read-only figures for the coach dashboard: the grading queue now and grading in the last hour.

``grading_health`` reads two sources: the broker (Redis) for what waits in
each Celery grading queue (LLEN of the queue's lists), and the submissions
table for what happened in the window: how many finished, the latency from
submit to verdict and the grading time (p50/p95), and the platform failures
(``internal_error``). Nothing here touches code or results of a submission
beyond its verdict and message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import redis
from django.conf import settings
from django.db.models import Count
from django.utils import timezone

from web.config.celery import app as celery_app
from web.submissions.models import Status, Submission, Verdict

# Kombu's Redis transport keeps a queue as one list per priority step; a
# message without a priority sits in the plain list, others in "<queue>\x06\x16<n>".
_PRIORITY_SEPARATOR = "\x06\x16"
_PRIORITY_STEPS = (3, 6, 9)


@dataclass(frozen=True)
class Failure:
    id: int
    challenge: str
    kind: str
    message: str
    finished_at: datetime


@dataclass(frozen=True)
class GradingHealth:
    window: timedelta
    queues: dict[str, int]  # Celery queue -> messages waiting in the broker
    queue_error: str | None  # why the broker could not be read, if it could not
    queued: int  # submissions in the database not started yet (all time)
    running: int
    finished: int  # in the window
    latency_p50: float | None  # seconds from submit to verdict, finished in the window
    latency_p95: float | None
    grading_p50: float | None  # seconds from the worker's start to the verdict
    grading_p95: float | None
    failures: int  # internal_error verdicts in the window
    verdicts: dict[str, int] = field(default_factory=dict)
    recent_failures: list[Failure] = field(default_factory=list)

    @property
    def queue_depth(self) -> int | None:
        return None if self.queue_error else sum(self.queues.values())


def grading_queue_names() -> list[str]:
    """Every Celery queue gradings can go to: the default one and those of GRADING_QUEUES."""
    names = {str(celery_app.conf.task_default_queue or "celery"), *settings.GRADING_QUEUES.values()}
    return sorted(names)


def queue_depths(broker_url: str | None = None) -> dict[str, int]:
    """{queue: messages waiting} read from the Redis broker; raises redis.RedisError or ValueError."""
    url = broker_url or str(settings.CELERY_BROKER_URL)
    if urlsplit(url).scheme not in {"redis", "rediss", "unix"}:
        raise ValueError(f"the broker is not Redis ({urlsplit(url).scheme}://)")
    client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
    try:
        with client.pipeline(transaction=False) as pipe:
            names = grading_queue_names()
            for name in names:
                pipe.llen(name)
                for step in _PRIORITY_STEPS:
                    pipe.llen(f"{name}{_PRIORITY_SEPARATOR}{step}")
            lengths = pipe.execute()
    finally:
        client.close()
    per_queue = 1 + len(_PRIORITY_STEPS)
    return {name: int(sum(lengths[i * per_queue : (i + 1) * per_queue])) for i, name in enumerate(names)}


def percentile(values: list[float], q: float) -> float | None:
    """The q-th percentile (nearest rank), or None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))  # ceil(n * q / 100)
    return ordered[int(rank) - 1]


def grading_health(*, window: timedelta = timedelta(hours=1), now: datetime | None = None, recent: int = 10) -> GradingHealth:
    now = now or timezone.now()
    since = now - window
    try:
        queues, queue_error = queue_depths(), None
    except (redis.RedisError, OSError, ValueError) as exc:
        queues, queue_error = {}, f"{type(exc).__name__}: {exc}"

    pending = Submission.objects.filter(status__in=[Status.QUEUED, Status.RUNNING]).values("status").annotate(n=Count("id"))
    counts = {row["status"]: row["n"] for row in pending}
    finished = Submission.objects.filter(status=Status.DONE, finished_at__gte=since, finished_at__lte=now)
    rows = list(finished.values_list("created_at", "started_at", "finished_at", "verdict"))
    latencies = [(done - created).total_seconds() for created, _, done, _ in rows]
    gradings = [(done - started).total_seconds() for _, started, done, verdict in rows if started and verdict != Verdict.INTERNAL_ERROR]
    verdicts: dict[str, int] = {}
    for *_, verdict in rows:
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
    failed = finished.filter(verdict=Verdict.INTERNAL_ERROR).select_related("challenge").order_by("-finished_at")[:recent]
    return GradingHealth(
        window=window,
        queues=queues,
        queue_error=queue_error,
        queued=int(counts.get(Status.QUEUED, 0)),
        running=int(counts.get(Status.RUNNING, 0)),
        finished=len(rows),
        latency_p50=percentile(latencies, 50),
        latency_p95=percentile(latencies, 95),
        grading_p50=percentile(gradings, 50),
        grading_p95=percentile(gradings, 95),
        failures=verdicts.get(Verdict.INTERNAL_ERROR, 0),
        verdicts=verdicts,
        recent_failures=[Failure(s.pk, s.challenge.slug, s.kind, s.message, s.finished_at) for s in failed if s.finished_at],
    )
