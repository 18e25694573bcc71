"""State changes of submissions: create and queue, grade, fail, reveal hints.

The flow: a view calls ``submission_create`` (validates the code, saves a
``queued`` Submission, queues the Celery task once the transaction commits).
The worker's task calls ``submission_grade``, which claims the submission
(queued -> running), calls the grader through ``code_grade`` and stores the
result in one write. ``manage.py grade`` calls the same ``code_grade``, so
the command line grades exactly as the web does. If the platform keeps
failing, the task's failure handler calls ``submission_grade_failed``, and
the submission says so and offers a regrade (``submission_regrade_own``).

The database is the source of truth: a submission is saved before its task
is queued, and queued only once that transaction commits. A message can
still be lost (a broker restarted without its data, a worker killed holding
prefetched messages): ``submission_requeue_stale``, which Celery beat runs
every GRADING_SWEEP_SECONDS, queues again what has waited too long. Coaches
regrade with ``submissions_regrade`` (admin actions, ``manage.py
regrade_submissions``). Every step logs a JSON event with the submission id
(web/config/logs.py).

Grading is idempotent: a finished submission is never graded again, and a
worker stores its result only if it still holds the submission (see
``Submission.attempts``), so a duplicate or late delivery changes nothing.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any, Literal

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from grader import grade_submission
from grader.errors import InvalidSubmission, PlatformError
from grader.grade import MAX_CODE_BYTES as MAX_CODE_BYTES  # re-exported for the views
from grader.grade import decode_submission
from web.challenges.models import Challenge, ChallengeVersion
from web.challenges.services import challenge_package
from web.config.logs import submission_context
from web.submissions.heartbeat import heartbeat
from web.submissions.hints import hint_can_reveal, hint_is_shown
from web.submissions.limits import rate_limited
from web.submissions.models import HintReveal, Kind, Status, Submission, Verdict

logger = logging.getLogger(__name__)

PLATFORM_FAILURE_MESSAGE = (
    "The grading platform failed (a problem on our side, not in your code) and gave up after several tries. "
    "Press Regrade to grade the same code again."
)


class SubmissionRejected(Exception):
    """The request cannot be accepted; the message is for the candidate."""

    status_code = 400


class TooManyPending(SubmissionRejected):
    status_code = 429


class RateLimitExceeded(SubmissionRejected):
    """Too many runs or submits in the last minute (web/submissions/limits.py)."""

    status_code = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class HintUnavailable(Exception):
    """The hint cannot be shown (yet); the message is for the candidate."""


# --- Input ----------------------------------------------------------------------


def code_clean(raw: str | bytes, *, allow_empty: bool = False) -> str:
    """The code as text, or SubmissionRejected saying what is wrong with it.

    The grader's own rules (UTF-8, not empty, size, no NUL byte), applied
    before the submission is saved so that a bad paste is never queued.
    ``allow_empty`` drops "not empty" only (the interview's autosave).
    """
    try:
        return decode_submission(raw, allow_empty=allow_empty).decode("utf-8")
    except InvalidSubmission as exc:
        raise SubmissionRejected(str(exc)) from None


# --- Create -----------------------------------------------------------------------


def submission_create(user: AbstractBaseUser, challenge: Challenge, code: str | bytes, kind: str) -> Submission:
    """Save a queued submission on the challenge's current version and queue its grading."""
    if kind not in Kind.values:
        raise SubmissionRejected(f"Unknown kind {kind!r}; use run or submit.")
    text = code_clean(code)
    version = challenge.current_version
    if version is None or not challenge.published:
        raise SubmissionRejected("This challenge is not open for submissions.")
    if (limited := rate_limited(user, kind)) is not None:
        raise RateLimitExceeded(limited.message, limited.retry_after)

    if (pending := _pending_count(user)) >= settings.SUBMISSIONS_MAX_PENDING:
        raise TooManyPending(f"You already have {pending} runs waiting to be graded; wait for one to finish.")

    with transaction.atomic():
        submission = Submission.objects.create(user=user, challenge=challenge, version=version, kind=kind, code=text, status=Status.QUEUED)
        # After commit: the worker must find the row when the task arrives.
        transaction.on_commit(partial(_enqueue, submission.pk))
    with submission_context(submission.pk):
        logger.info("submission saved", extra={"event": "submission.created", "kind": kind, "challenge": challenge.slug, "user_id": user.pk})
    return submission


def grading_queue(runtime: str) -> str | None:
    """The Celery queue for a runtime profile (GRADING_QUEUES), or None for the default queue."""
    return settings.GRADING_QUEUES.get(runtime)


def _enqueue(submission_id: int) -> bool:
    """Send the grading task; whether the broker took it.

    If the broker is down the submission stays queued (it is saved): the
    sweeper sends it again once it has waited GRADING_QUEUED_SECONDS.
    """
    from web.submissions.tasks import grade_submission as grade_task  # tasks import this module

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


# --- Grade --------------------------------------------------------------------------


def code_grade(version: ChallengeVersion, code: str | bytes, *, public: bool) -> dict[str, Any]:
    """Grade code against a stored challenge version: GradeResult.to_dict().

    The one path to the grader: the worker (through submission_grade) and
    ``manage.py grade`` both come here. Raises InvalidSubmission and
    PlatformError as the grader does.
    """
    package = challenge_package(version)
    return grade_submission(package, code, public=public).to_dict()


@dataclass(frozen=True)
class GradeOutcome:
    state: Literal["graded", "already_done", "busy", "superseded", "missing", "given_up"]
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


def _abandoned(stale_before: datetime) -> Q:
    """Running, and its worker's last sign of life (heartbeat, else the claim) is older than ``stale_before``."""
    return Q(status=Status.RUNNING) & (
        Q(heartbeat_at__lt=stale_before) | Q(heartbeat_at__isnull=True, started_at__lt=stale_before)
    )


def _pending_count(user: AbstractBaseUser) -> int:
    """The user's submissions not yet graded, leaving out any stuck for longer than a grading can take."""
    recent = timezone.now() - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    return Submission.objects.filter(user=user, created_at__gte=recent).exclude(status=Status.DONE).count()


def _grade(submission_id: int) -> GradeOutcome:
    now = timezone.now()
    stale_before = now - timedelta(seconds=settings.GRADING_STALE_SECONDS)
    claimable = Q(status=Status.QUEUED) | _abandoned(stale_before)
    # A conditional UPDATE is the claim: atomic on SQLite and PostgreSQL alike,
    # so two workers cannot both move the same row to running.
    claimed = Submission.objects.filter(claimable, pk=submission_id).update(
        status=Status.RUNNING, started_at=now, heartbeat_at=now, attempts=F("attempts") + 1
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

    try:
        with heartbeat(stamp, settings.GRADING_HEARTBEAT_SECONDS):
            result = code_grade(submission.version, submission.code, public=submission.kind == Kind.RUN)
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


def _strict_json(value: Any) -> Any:
    """The value with what strict JSON cannot hold (inf, nan, complex, ...) turned into strings.

    PostgreSQL's json types refuse Infinity and NaN; a result the grader
    reports with such a number must still be storable, not crash the worker.
    """
    if isinstance(value, bool) or value is None or isinstance(value, int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {str(k): _strict_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_strict_json(v) for v in value]
    return str(value)


def _store_result(submission: Submission, attempt: int, result: dict[str, Any]) -> bool:
    now = timezone.now()
    result = _strict_json(result)
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
            logger.info(
                "result stored", extra={"event": "grading.result_stored", "attempt": attempt, "verdict": verdict, "score": result.get("score")}
            )
            # Tier-1 hints are shown with the result; record them like any
            # other reveal so a report of what a candidate saw is complete.
            for hint in hints:
                if int(hint.get("tier", 0)) == 1:
                    _record_reveal(submission.user_id, submission.challenge_id, submission.pk, hint, now)
    return bool(stored)


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


def submission_requeue_stale(*, older_than_seconds: float | None = None) -> list[int]:
    """Queue the grading task again for submissions nobody is working on; return their ids.

    A task can be lost without any handler running: the broker lost its
    data, a worker was killed holding prefetched or scheduled messages, or
    Celery's hard time limit killed the worker process (which acks the
    message without calling the failure handler). Such a submission sits
    queued or running forever. Celery beat runs this every
    GRADING_SWEEP_SECONDS (``submissions.requeue_stale``): queued ones are
    sent again once their last send is GRADING_QUEUED_SECONDS old, running
    ones once their worker's last heartbeat is GRADING_STALE_SECONDS old (the
    next claim takes them over). Grading is idempotent, so a submission that was merely slow
    or waiting in a long queue only costs its duplicate a no-op.
    ``older_than_seconds`` overrides both ages.
    """
    now = timezone.now()
    queued_age = settings.GRADING_QUEUED_SECONDS if older_than_seconds is None else older_than_seconds
    running_age = settings.GRADING_STALE_SECONDS if older_than_seconds is None else older_than_seconds
    queued_cutoff = now - timedelta(seconds=queued_age)
    stale = (
        Q(status=Status.QUEUED, queued_at__lt=queued_cutoff)
        | Q(status=Status.QUEUED, queued_at__isnull=True, created_at__lt=queued_cutoff)
        | _abandoned(now - timedelta(seconds=running_age))
    )
    ids = list(Submission.objects.filter(stale).order_by("created_at").values_list("pk", flat=True))
    for submission_id in ids:
        with submission_context(submission_id):
            logger.info("re-queueing a stale submission", extra={"event": "submission.requeued_stale"})
        _enqueue(submission_id)
    return ids


# --- Regrade ------------------------------------------------------------------------


class RegradeRefused(SubmissionRejected):
    status_code = 409


def submissions_for_regrade(
    *, ids: list[int] | None = None, version: ChallengeVersion | None = None, since: Any = None
) -> QuerySet[Submission]:
    """Finished submissions matching every criterion given (ids, graded on a version, created since a time)."""
    if ids is None and version is None and since is None:
        raise ValueError("name submissions to regrade: ids, a version or a time")
    rows = Submission.objects.filter(status=Status.DONE)
    if ids is not None:
        rows = rows.filter(pk__in=ids)
    if version is not None:
        rows = rows.filter(version=version)
    if since is not None:
        rows = rows.filter(created_at__gte=since)
    return rows.order_by("created_at", "pk")


def submissions_regrade(rows: QuerySet[Submission], *, on_current_version: bool = False) -> list[int]:
    """Grade finished submissions again, in place: back to queued, result cleared; their ids.

    The same code on the same version (a platform incident, a fixed grader),
    or with ``on_current_version`` on its challenge's current version (a
    fixed package). A submission not done (still queued or running) is left
    alone: it is being graded anyway. Each one is one conditional UPDATE, so
    a regrade racing another changes each submission once.
    """
    regraded: list[int] = []
    now = timezone.now()
    with transaction.atomic():
        for submission in rows.select_related("challenge"):
            fields: dict[str, Any] = {
                "status": Status.QUEUED, "verdict": "", "score": None, "categories": {}, "probes": [], "hints": [],
                "message": "", "timings": {}, "started_at": None, "heartbeat_at": None, "finished_at": None, "queued_at": now,
                "attempts_base": F("attempts"),
            }  # fmt: skip
            if on_current_version and submission.challenge.current_version_id:
                fields["version_id"] = submission.challenge.current_version_id
            if Submission.objects.filter(pk=submission.pk, status=Status.DONE).update(**fields):
                with submission_context(submission.pk):
                    logger.info(
                        "regrade requested",
                        extra={"event": "submission.regrade", "previous_verdict": submission.verdict, "previous_score": submission.score},
                    )
                regraded.append(submission.pk)
                transaction.on_commit(partial(_enqueue, submission.pk))
    return regraded


def submission_regrade_own(user: AbstractBaseUser, submission: Submission) -> Submission:
    """A candidate's regrade of their submission that the platform failed to grade (internal_error)."""
    if submission.user_id != user.pk:
        raise RegradeRefused("This is not your submission.")
    if submission.status != Status.DONE or submission.verdict != Verdict.INTERNAL_ERROR:
        raise RegradeRefused("Only a submission the platform failed to grade can be regraded; run or submit your code again instead.")
    if (pending := _pending_count(user)) >= settings.SUBMISSIONS_MAX_PENDING:
        raise TooManyPending(f"You already have {pending} runs waiting to be graded; wait for one to finish.")
    submissions_regrade(Submission.objects.filter(pk=submission.pk))
    submission.refresh_from_db()
    return submission


# --- Hints ------------------------------------------------------------------------


@dataclass(frozen=True)
class RevealedHint:
    id: str
    tier: int
    tags: list[str]
    text: str


def _record_reveal(user_id: int, challenge_id: int, submission_id: int, hint: dict[str, Any], now: Any) -> None:
    # A savepoint, so that a concurrent duplicate only loses its own insert.
    try:
        with transaction.atomic():
            HintReveal.objects.get_or_create(
                user_id=user_id,
                challenge_id=challenge_id,
                hint_id=str(hint["id"]),
                defaults={"tier": int(hint["tier"]), "submission_id": submission_id, "revealed_at": now},
            )
    except IntegrityError:
        pass


def hint_reveal(user: AbstractBaseUser, submission: Submission, hint_id: str) -> RevealedHint:
    """Show one hint that this submission unlocked, if its ladder allows; record it."""
    if submission.user_id != user.pk:
        raise HintUnavailable("This is not your submission.")
    if submission.status != Status.DONE:
        raise HintUnavailable("Hints are available once grading has finished.")
    unlocked = list(submission.hints or [])
    hint = next((h for h in unlocked if str(h.get("id")) == hint_id), None)
    if hint is None:
        raise HintUnavailable("This submission did not unlock that hint.")

    revealed = set(HintReveal.objects.filter(user=user, challenge_id=submission.challenge_id).values_list("hint_id", flat=True))
    if not hint_is_shown(hint, revealed) and not hint_can_reveal(hint, unlocked, revealed):
        raise HintUnavailable(f"Reveal a tier-{int(hint['tier']) - 1} hint on this topic first.")
    _record_reveal(user.pk, submission.challenge_id, submission.pk, hint, timezone.now())
    return RevealedHint(id=str(hint["id"]), tier=int(hint["tier"]), tags=list(hint.get("tags") or []), text=str(hint.get("text", "")))
