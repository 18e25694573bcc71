"""The Celery tasks: grade one submission (take the id, call the service), and the sweeper.

Retries: the grader raises PlatformError when the sandbox or the platform
failed (never for the candidate's code), and the database can be briefly
locked or unreachable. The task retries both with exponential backoff, three
times; when it finally fails for any reason, the failure handler gives the
submission the internal_error verdict (whose message offers a regrade) so
that the candidate is not left watching "running" forever.

Delivery: tasks are acknowledged late and rejected back to the queue when
their worker process dies (settings: CELERY_TASK_ACKS_LATE,
CELERY_TASK_REJECT_ON_WORKER_LOST), so a killed worker's job is delivered
again; ``submission_grade`` is idempotent, so a second delivery changes
nothing. ``requeue_stale`` (scheduled by Celery beat) re-sends what was lost
anyway.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Task, shared_task
from django.db import OperationalError as DatabaseUnavailable

from grader.errors import PlatformError
from web.config.logs import submission_context
from web.submissions.services.expected import expected_prepare
from web.submissions.services.grading import submission_grade, submission_grade_failed
from web.submissions.services.sweeper import submission_requeue_stale

logger = logging.getLogger(__name__)


class GradeTask(Task):
    def on_failure(self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        submission_id = kwargs.get("submission_id") if kwargs else None
        if submission_id is None and args:
            submission_id = args[0]
        if submission_id is None:
            return
        with submission_context(int(submission_id), task_id=task_id):
            try:
                submission_grade_failed(int(submission_id))
            except DatabaseUnavailable:
                # Nothing more to do here: the sweeper finds it queued or running and sends it again.
                logger.exception("could not mark the failure", extra={"event": "grading.fail_unrecorded"})


@shared_task(
    bind=True,
    base=GradeTask,
    name="submissions.grade_submission",
    autoretry_for=(PlatformError, DatabaseUnavailable),
    max_retries=3,
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    acks_late=True,
)
def grade_submission(self: Task, submission_id: int) -> str:
    with submission_context(submission_id, task_id=self.request.id):
        outcome = submission_grade(submission_id)
        if outcome.state == "busy" and not self.request.is_eager:
            # Another worker holds it. Look again when its heartbeat would turn
            # stale: by then it has finished (a no-op), died, or beaten on. Not in
            # eager mode (tests), where it would run again at once, forever.
            # Back to the queue it came from (GRADING_QUEUES routes by runtime).
            # With the time limits it was sent with (dispatch.task_time_limits).
            queue = (self.request.delivery_info or {}).get("routing_key")
            hard, soft = self.request.timelimit or (None, None)
            self.apply_async((submission_id,), countdown=outcome.retry_after, queue=queue, time_limit=hard, soft_time_limit=soft)
        return outcome.state


@shared_task(name="submissions.requeue_stale", ignore_result=True)
def requeue_stale() -> int:
    """The sweeper: send again the gradings that waited too long (see submission_requeue_stale)."""
    ids = submission_requeue_stale()
    if ids:
        logger.info("re-queued %d stale submission(s)", len(ids), extra={"event": "sweeper.requeued", "ids": ids})
    return len(ids)


@shared_task(
    name="submissions.prepare_expected",
    ignore_result=True,
    autoretry_for=(PlatformError, DatabaseUnavailable),
    max_retries=3,
    retry_backoff=5,
    retry_backoff_max=120,
    retry_jitter=True,
    acks_late=True,
)
def prepare_expected(version_id: int) -> str:
    """Run a version's reference before any candidate needs it (services/expected.py)."""
    return expected_prepare(version_id).state
