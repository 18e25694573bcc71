"""The sweeper: queue again the gradings nobody is working on.

A task can be lost without any handler running: the broker lost its data,
a worker was killed holding prefetched or scheduled messages, or Celery's
hard time limit killed the worker process (which acks the message without
calling the failure handler). Such a submission would sit queued or running
forever. Celery beat runs ``submissions.requeue_stale`` every
GRADING_SWEEP_SECONDS, which calls :func:`submission_requeue_stale`;
grading is idempotent, so a submission that was merely slow costs its
duplicate a no-op.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from web.config.logs import submission_context
from web.submissions.models import Status, Submission
from web.submissions.services.dispatch import enqueue
from web.submissions.services.grading import abandoned

logger = logging.getLogger(__name__)


def submission_requeue_stale(*, older_than_seconds: float | None = None) -> list[int]:
    """Queue the grading task again for submissions nobody is working on; return their ids.

    Queued ones are sent again once their last send is GRADING_QUEUED_SECONDS
    old, running ones once their worker's last heartbeat is
    GRADING_STALE_SECONDS old (the next claim takes them over).
    ``older_than_seconds`` overrides both ages.
    """
    now = timezone.now()
    queued_age = settings.GRADING_QUEUED_SECONDS if older_than_seconds is None else older_than_seconds
    running_age = settings.GRADING_STALE_SECONDS if older_than_seconds is None else older_than_seconds
    queued_cutoff = now - timedelta(seconds=queued_age)
    stale = (
        Q(status=Status.QUEUED, queued_at__lt=queued_cutoff)
        | Q(status=Status.QUEUED, queued_at__isnull=True, created_at__lt=queued_cutoff)
        | abandoned(now - timedelta(seconds=running_age))
    )
    ids = list(Submission.objects.filter(stale).order_by("created_at").values_list("pk", flat=True))
    for submission_id in ids:
        with submission_context(submission_id):
            logger.info("re-queueing a stale submission", extra={"event": "submission.requeued_stale"})
        enqueue(submission_id)
    return ids
