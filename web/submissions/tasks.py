"""The Celery task that grades one submission: take the id, call the service.

Retries: the grader raises PlatformError when the sandbox or the platform
failed (never for the candidate's code). The task retries those with
exponential backoff, three times; when it finally fails for any reason, the
failure handler gives the submission the internal_error verdict so that the
candidate is not left watching "running" forever.
"""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task

from grader.errors import PlatformError
from web.submissions.services import submission_grade, submission_grade_failed


class GradeTask(Task):
    def on_failure(self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        submission_id = kwargs.get("submission_id") if kwargs else None
        if submission_id is None and args:
            submission_id = args[0]
        if submission_id is not None:
            submission_grade_failed(int(submission_id))


@shared_task(
    bind=True,
    base=GradeTask,
    name="submissions.grade_submission",
    autoretry_for=(PlatformError,),
    max_retries=3,
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    acks_late=True,
)
def grade_submission(self: Task, submission_id: int) -> str:
    outcome = submission_grade(submission_id)
    if outcome.state == "busy" and not self.request.is_eager:
        # Another worker holds it. Look again when its claim turns stale: by
        # then it has either finished (and this is a no-op) or died. Not in
        # eager mode (tests), where it would run again at once, forever.
        self.apply_async((submission_id,), countdown=outcome.retry_after)
    return outcome.state
