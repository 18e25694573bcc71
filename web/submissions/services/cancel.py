"""The candidate's Cancel: stop a grading they no longer want (code that never ends, a Submit sent too soon).

Place in the flow: the page's, the API's and the interview's cancel
endpoints call ``submission_cancel``. A queued submission is finished at
once, cancelled, in one conditional UPDATE (a worker that claims it later
finds it done and leaves it). A running one is flagged: the worker's cancel
watch (``services.grading``) sees the flag within a second, the grader kills
the sandbox, and the worker stores it cancelled. A cancelled submission has
no verdict on the code and no score; it stays in the history, and counts
against the rate limits as the request it was.
"""

from __future__ import annotations

import logging

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from web.config.logs import submission_context
from web.submissions.errors import CancelRefused
from web.submissions.models import Status, Submission, Verdict

logger = logging.getLogger(__name__)

CANCELLED_MESSAGE = "Cancelled: you stopped this grading before it finished. Nothing was scored."


def submission_cancel(user: AbstractBaseUser, submission: Submission) -> Submission:
    """Cancel the user's own queued or running submission; the row as it is now. CancelRefused otherwise."""
    if submission.user_id != user.pk:
        raise CancelRefused("This is not your submission.")
    with submission_context(submission.pk):
        finished = Submission.objects.filter(pk=submission.pk, status=Status.QUEUED).update(
            status=Status.DONE, verdict=Verdict.CANCELLED, score=None, message=CANCELLED_MESSAGE, finished_at=timezone.now()
        )
        if not finished:
            flagged = Submission.objects.filter(pk=submission.pk, status=Status.RUNNING).update(cancel_requested=True)
            if not flagged:
                raise CancelRefused("This grading has already finished.")
        logger.info("cancel requested", extra={"event": "grading.cancel_requested", "queued": bool(finished)})
    submission.refresh_from_db()
    return submission
