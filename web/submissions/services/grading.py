"""The worker's state machine: claim a submission, grade it, store the result once; or give up on it.

``submission_grade`` is what the Celery task calls (web/submissions/tasks.py).
States: queued -> running (the claim: one conditional UPDATE, atomic on SQLite
and PostgreSQL alike, so two workers cannot both take a row) -> done. A
running submission whose worker stopped beating (``abandoned``) may be
claimed again; each claim adds one to ``attempts``, the fencing token that
lets only the latest claimant store its result. A PlatformError hands the
row back to queued and propagates, for the task's retry; after the last
retry the task's failure handler calls ``submission_grade_failed``.

``code_grade`` is the one path to the grader: ``manage.py grade`` calls it
too, so the command line grades exactly as the web does.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from grader import grade_submission
from grader.errors import GradingCancelled, InvalidSubmission, PlatformError
from grader.live import ProbeProgress
from sandbox.runner.codec import to_jsonable
from web.challenges.models import ChallengeVersion
from web.challenges.services import challenge_package
from web.config.logs import submission_context
from web.submissions.heartbeat import heartbeat
from web.submissions.models import Kind, Status, Submission, Verdict
from web.submissions.services.cancel import CANCELLED_MESSAGE
from web.submissions.services.live import live_progress

logger = logging.getLogger(__name__)

# How often a running grading looks for the candidate's Cancel (a query on its row).
CANCEL_POLL_SECONDS = 1.0

PLATFORM_FAILURE_MESSAGE = (
    "The grading platform failed (a problem on our side, not in your code) and gave up after several tries. "
    "Press Regrade to grade the same code again."
)


def code_grade(
    version: ChallengeVersion,
    code: str | bytes,
    *,
    public: bool,
    on_progress: Callable[[ProbeProgress], None] | None = None,
    stop: threading.Event | None = None,
) -> dict[str, Any]:
    """Grade code against a stored challenge version: GradeResult.to_dict().

    The one path to the grader: the worker (through submission_grade) and
    ``manage.py grade`` both come here. ``on_progress`` sees each probe as it
    finishes (the worker stores them: services/live.py). Raises
    InvalidSubmission and PlatformError as the grader does, and GradingCancelled when ``stop`` is set while it runs.
    """
    package = challenge_package(version)
    return grade_submission(package, code, public=public, on_progress=on_progress, stop=stop).to_dict()


@dataclass(frozen=True)
class GradeOutcome:
    state: Literal["graded", "already_done", "busy", "superseded", "missing", "given_up", "cancelled"]
    # For "busy": seconds until the running attempt counts as stale.
    retry_after: float = 0.0


def submission_grade(submission_id: int) -> GradeOutcome:
    """Grade one submission if nobody else is; safe to call any number of times.

    Claims the submission (queued, or running but stale because its worker
    died), grades it and stores the result. PlatformError propagates after the
    submission is handed back to the queue, so the task's retry can claim it.
    """
    with submission_context(submission_id):
        outcome = _grade(submission_id)
        logger.info("grading %s", outcome.state, extra={"event": f"grading.{outcome.state}", "retry_after": outcome.retry_after or None})
        return outcome


def abandoned(stale_before: datetime) -> Q:
    """Running, and its worker's last sign of life (heartbeat, else the claim) is older than ``stale_before``."""
    return Q(status=Status.RUNNING) & (
        Q(heartbeat_at__lt=stale_before) | Q(heartbeat_at__isnull=True, started_at__lt=stale_before)
    )


def _grade(submission_id: int) -> GradeOutcome:
    now = timezone.now()
    stale_before = now - timedelta(seconds=settings.GRADING_STALE_SECONDS)
    claimable = Q(status=Status.QUEUED) | abandoned(stale_before)
    claimed = Submission.objects.filter(claimable, pk=submission_id).update(
        status=Status.RUNNING, started_at=now, heartbeat_at=now, attempts=F("attempts") + 1, live={}
    )
    if not claimed:
        current = Submission.objects.filter(pk=submission_id).values("status", "started_at", "heartbeat_at").first()
        if current is None:
            return GradeOutcome("missing")
        if current["status"] == Status.DONE:
            return GradeOutcome("already_done")
        alive_at = current["heartbeat_at"] or current["started_at"] or now
        return GradeOutcome("busy", retry_after=max(1.0, (alive_at - stale_before).total_seconds() + 1))

    submission = Submission.objects.select_related("version").get(pk=submission_id)
    attempt = submission.attempts
    logger.info("grading claimed", extra={"event": "grading.claimed", "attempt": attempt})
    if attempt - submission.attempts_base > settings.GRADING_MAX_ATTEMPTS:
        # Started this often and never finished: the submission itself is
        # probably what kills the worker. Stop feeding it to workers.
        _finish_with_internal_error(submission_id, PLATFORM_FAILURE_MESSAGE, attempt=attempt)
        return GradeOutcome("given_up")

    def stamp() -> int:
        return Submission.objects.filter(pk=submission_id, status=Status.RUNNING, attempts=attempt).update(heartbeat_at=timezone.now())

    # The candidate's Cancel (services/cancel.py) sets a flag on the row; a second beat, faster than the heartbeat,
    # passes it to the grader, which kills the sandbox.
    stop = threading.Event()

    def watch_cancel() -> None:
        if Submission.objects.filter(pk=submission_id, cancel_requested=True).exists():
            stop.set()

    try:
        with (
            heartbeat(stamp, settings.GRADING_HEARTBEAT_SECONDS),
            heartbeat(watch_cancel, CANCEL_POLL_SECONDS),
            live_progress(submission_id, attempt) as on_progress,
        ):
            result = code_grade(submission.version, submission.code, public=submission.kind == Kind.RUN, on_progress=on_progress, stop=stop)
    except GradingCancelled:
        _finish_cancelled(submission_id, attempt)
        return GradeOutcome("cancelled")
    except PlatformError as exc:
        logger.warning(
            "the platform failed; handing the submission back", extra={"event": "grading.platform_error", "attempt": attempt, "error": str(exc)}
        )
        Submission.objects.filter(pk=submission_id, status=Status.RUNNING, attempts=attempt).update(status=Status.QUEUED, queued_at=timezone.now())
        raise
    except InvalidSubmission as exc:
        # submission_create applies the same rules, so this means the web's
        # and the grader's limits disagree: ours to fix, not the candidate's.
        logger.error("grader refused submission %s accepted by the web: %s", submission_id, exc)
        _finish_with_internal_error(submission_id, str(exc), attempt=attempt)
        return GradeOutcome("graded")

    stored = _store_result(submission, attempt, result)
    return GradeOutcome("graded" if stored else "superseded")


def _store_result(submission: Submission, attempt: int, result: dict[str, Any]) -> bool:
    now = timezone.now()
    # PostgreSQL's json types refuse Infinity and NaN: a result the grader
    # reports with such a number must still be storable, not crash the worker.
    result = to_jsonable(result)
    verdict = str(result.get("verdict", ""))
    if verdict not in Verdict.values:
        logger.error("grader returned unknown verdict %r for submission %s", verdict, submission.pk)
        verdict = Verdict.INTERNAL_ERROR
    hints = list(result.get("hints") or [])
    with transaction.atomic():
        stored = Submission.objects.filter(pk=submission.pk, status=Status.RUNNING, attempts=attempt).update(
            status=Status.DONE,
            verdict=verdict,
            score=float(result.get("score") or 0.0),
            categories=result.get("categories") or {},
            probes=result.get("probes") or [],
            hints=hints,
            message=str(result.get("message") or ""),
            timings=result.get("timings") or {},
            finished_at=now,
        )
    if stored:
        # Said once the row is committed, not before: a worker killed between its UPDATE and the commit has stored
        # nothing (the sweeper re-queues the submission), and its log must not claim a result the database never kept.
        logger.info("result stored", extra={"event": "grading.result_stored", "attempt": attempt, "verdict": verdict, "score": result.get("score")})
    return bool(stored)


def _finish_cancelled(submission_id: int, attempt: int) -> bool:
    """Store the candidate's Cancel: done, cancelled, nothing scored (the probes that finished are kept, unjudged)."""
    changed = Submission.objects.filter(pk=submission_id, status=Status.RUNNING, attempts=attempt).update(
        status=Status.DONE, verdict=Verdict.CANCELLED, score=None, categories={}, probes=[], hints=[], message=CANCELLED_MESSAGE,
        finished_at=timezone.now(),
    )  # fmt: skip
    logger.info("grading cancelled", extra={"event": "grading.cancelled", "attempt": attempt})
    return bool(changed)


def _finish_with_internal_error(submission_id: int, message: str, *, attempt: int | None = None) -> bool:
    rows = Submission.objects.filter(pk=submission_id).exclude(status=Status.DONE)
    if attempt is not None:
        rows = rows.filter(attempts=attempt)
    return bool(
        rows.update(
            status=Status.DONE,
            verdict=Verdict.INTERNAL_ERROR,
            score=None,
            categories={},
            probes=[],
            hints=[],
            message=message,
            finished_at=timezone.now(),
        )
    )


def submission_grade_failed(submission_id: int, *, message: str = PLATFORM_FAILURE_MESSAGE) -> bool:
    """Give up on a submission (retries exhausted, queueing failed): done, internal_error.

    A submission already done keeps its result. Returns whether it changed.
    """
    changed = _finish_with_internal_error(submission_id, message)
    if changed:
        with submission_context(submission_id):
            logger.warning("marked internal_error: %s", message, extra={"event": "grading.failed"})
    return changed
