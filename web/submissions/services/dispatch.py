"""Hand a saved submission to the graders: the Celery task, on its runtime's queue.

Called after the transaction that saved (or reset) the submission commits,
by intake, regrade and the sweeper. The send may fail (the broker is down):
the submission is saved and stays queued, and the sweeper sends it again.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from web.config.logs import submission_context
from web.submissions.models import Status, Submission

logger = logging.getLogger(__name__)


def grading_queue(runtime: str) -> str | None:
    """The Celery queue for a runtime profile (GRADING_QUEUES), or None for the default queue."""
    return settings.GRADING_QUEUES.get(runtime)


def enqueue(submission_id: int) -> bool:
    """Send the grading task; whether the broker took it.

    If the broker is down the submission stays queued (it is saved): the
    sweeper sends it again once it has waited GRADING_QUEUED_SECONDS.
    """
    from web.submissions.tasks import grade_submission as grade_task  # the tasks import the services

    with submission_context(submission_id):
        runtime = Submission.objects.filter(pk=submission_id).values_list("version__runtime", flat=True).first()
        queue = grading_queue(runtime or "")
        # Stamped before sending: a worker may claim it before apply_async returns.
        Submission.objects.filter(pk=submission_id, status=Status.QUEUED).update(queued_at=timezone.now())
        try:
            grade_task.apply_async((submission_id,), queue=queue)
        except BrokerError as exc:
            logger.warning("could not queue the grading; the sweeper will", extra={"event": "submission.queue_failed", "error": str(exc)})
            return False
        logger.info("grading queued", extra={"event": "submission.queued", "queue": queue or "celery"})
        return True
