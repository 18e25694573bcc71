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

from grader.errors import PackageError
from grader.package_load import limits_from_toml
from web.config.logs import submission_context
from web.submissions.models import Status, Submission

logger = logging.getLogger(__name__)


def grading_queue(runtime: str) -> str | None:
    """The Celery queue for a runtime profile (GRADING_QUEUES), or None for the default queue."""
    return settings.GRADING_QUEUES.get(runtime)


# A grading runs up to three sandboxes one after another: the reference's run
# for the expected observations (the first grading of a version), the
# submission's run, and a sandbox for a browser-authored package's custom
# checks. Each stops at the package's wall clock.
GRADING_RUNS = 3
# Starting the sandboxes, loading the package, storing the result.
TASK_SLACK_SECONDS = 60.0


def task_time_limits(wall_seconds: float, runs: int = GRADING_RUNS) -> tuple[float, float]:
    """(soft, hard) Celery time limits for a task of ``runs`` sandbox runs of up to ``wall_seconds`` each.

    The settings' limits (CELERY_TASK_SOFT_TIME_LIMIT, CELERY_TASK_TIME_LIMIT)
    only catch a stuck worker: the grader enforces the package's own limits.
    A package may allow its runs more than they do (up to 1800 s of wall
    clock each), and a limit below what the grader allows would end a slow
    but correct submission, or a package's validation, as a failure of the
    platform. So each task gets the larger of the two, with the settings'
    gap between soft and hard.
    """
    soft = max(float(settings.CELERY_TASK_SOFT_TIME_LIMIT), runs * wall_seconds + TASK_SLACK_SECONDS)
    return soft, soft + max(0.0, float(settings.CELERY_TASK_TIME_LIMIT - settings.CELERY_TASK_SOFT_TIME_LIMIT))


def version_wall_seconds(toml_text: str | None) -> float:
    """The package's wall clock per run, from its stored challenge.toml.

    None (no stored challenge.toml) reads as an empty one: the grader's
    default limits. Text that does not parse gives 0, which leaves the
    settings' limits.
    """
    try:
        return limits_from_toml(toml_text or "").wall_seconds
    except PackageError:
        # A stored version was validated when it was saved; if it no longer
        # parses, grading will say why. The settings' limits stand meanwhile.
        return 0.0


def enqueue(submission_id: int) -> bool:
    """Send the grading task; whether the broker took it.

    If the broker is down the submission stays queued (it is saved): the
    sweeper sends it again once it has waited GRADING_QUEUED_SECONDS.
    """
    from web.submissions.tasks import grade_submission as grade_task  # the tasks import the services

    with submission_context(submission_id):
        # Only challenge.toml's text, not the whole package's files.
        row = Submission.objects.filter(pk=submission_id).values_list("version__runtime", "version__files__challenge.toml__content").first()
        runtime, toml_text = row if row is not None else ("", None)
        queue = grading_queue(runtime or "")
        soft, hard = task_time_limits(version_wall_seconds(toml_text))
        # Stamped before sending: a worker may claim it before apply_async returns.
        Submission.objects.filter(pk=submission_id, status=Status.QUEUED).update(queued_at=timezone.now())
        try:
            grade_task.apply_async((submission_id,), queue=queue, soft_time_limit=soft, time_limit=hard)
        except BrokerError as exc:
            logger.warning("could not queue the grading; the sweeper will", extra={"event": "submission.queue_failed", "error": str(exc)})
            return False
        logger.info("grading queued", extra={"event": "submission.queued", "queue": queue or "celery"})
        return True
