"""Live progress: each probe's outcome stored on the running submission as the grader reports it.

Place in the flow: ``grading.submission_grade`` opens :func:`live_progress`
around the grading and passes its callback to the grader
(``grader.grade_submission(on_progress=...)``), which calls it in the
worker's thread as each probe finishes in the sandbox (``grader/live.py``).
The callback only appends a line in memory; a writer thread of its own
stores the lines in ``Submission.live`` (a small JSON field the status
endpoint already reads with the row) at most every
:data:`WRITE_INTERVAL_SECONDS`, so the grading never waits on the database
and a burst of fast probes costs a handful of UPDATEs. The first probe of a
quiet spell is written at once.

Each write is the conditional UPDATE the result uses (running, this claim's
``attempts``), so a late write never lands on a finished or re-claimed
submission. The claim empties ``live``; the stored result, not these lines,
gives the verdict. What a candidate sees of the lines is the feedback
policy's (``grader.feedback.candidate_progress``, in ``presenters``).
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connections

from grader.live import ProbeProgress
from web.submissions.models import Status, Submission

logger = logging.getLogger(__name__)

#: At most one write of the live lines per this many seconds (the page polls about as often while a grading runs).
WRITE_INTERVAL_SECONDS = 0.2


def live_write(submission_id: int, attempt: int, live: dict[str, Any]) -> bool:
    """Store ``live`` on the submission if this claim still holds it running; whether it did."""
    return bool(Submission.objects.filter(pk=submission_id, status=Status.RUNNING, attempts=attempt).update(live=live))


@contextmanager
def live_progress(submission_id: int, attempt: int, *, every: float = WRITE_INTERVAL_SECONDS) -> Iterator[Callable[[ProbeProgress], None]]:
    """A grader ``on_progress`` callback for this claim of the submission, written behind by a thread while the block runs."""
    lines: list[dict[str, Any]] = []
    total = 0
    lock = threading.Lock()
    changed = threading.Event()
    stop = threading.Event()
    context = contextvars.copy_context()  # log lines keep the submission id

    def on_progress(progress: ProbeProgress) -> None:
        nonlocal total
        with lock:
            total = progress.total
            lines.append(
                {"name": progress.name, "outcome": progress.outcome, "status": progress.status, "finished": progress.finished, "at": progress.at}
            )
        changed.set()

    def writer() -> None:
        try:
            while not stop.is_set():
                if not changed.wait(1.0):
                    continue
                changed.clear()
                if stop.is_set():
                    break  # the grading is over: its result replaces the lines
                with lock:
                    live = {"total": total, "probes": list(lines)}
                try:
                    live_write(submission_id, attempt, live)
                except Exception as exc:  # noqa: BLE001 - live lines are a courtesy: log, and the next write tries again
                    logger.warning("live progress could not be stored: %s", exc, extra={"event": "grading.live_failed"})
                stop.wait(every)
        finally:
            connections.close_all()  # this thread's connections only: they are per thread

    thread = threading.Thread(target=lambda: context.run(writer), name="live-progress", daemon=True)
    thread.start()
    try:
        yield on_progress
    finally:
        stop.set()
        changed.set()
        thread.join(10.0)
