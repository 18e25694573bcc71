"""A thread that tells the database a long job in a worker is still alive.

Place in the flow: a grading (``services.grading.submission_grade``) or a validation
(``authoring.services.validation_execute``) runs for seconds to minutes in a
Celery pool process. A worker that dies (SIGKILL, the OOM killer, a lost
host) runs no handler, so its row stays "running". While the job runs, this
thread stamps the row's ``heartbeat_at`` every few seconds; the sweeper and
the status pages take a running row whose stamp is older than
``GRADING_STALE_SECONDS`` as abandoned. A dead worker then costs a candidate
about a minute, not the task's whole time limit; a slow but live grading is
never taken over, however long it runs (Celery's hard time limit still ends
it, and its beats with it).
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.db import connections

logger = logging.getLogger(__name__)


@contextmanager
def heartbeat(stamp: Callable[[], object], every: float) -> Iterator[None]:
    """Call ``stamp`` every ``every`` seconds on a thread of its own while the block runs.

    ``stamp`` is a conditional UPDATE of the job's row (this thread has its
    own database connection, closed when it ends). A beat that fails (a
    locked or unreachable database) is logged and the next one tries again.
    """
    stop = threading.Event()
    context = contextvars.copy_context()  # log lines keep the job's submission id

    def beat() -> None:
        try:
            while not stop.wait(every):
                try:
                    stamp()
                except Exception as exc:  # noqa: BLE001 - any failure: log it, beat again
                    logger.warning("a heartbeat could not be stored: %s", exc, extra={"event": "heartbeat.failed"})
        finally:
            connections.close_all()  # this thread's connections only: they are per thread

    thread = threading.Thread(target=lambda: context.run(beat), name="heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        # A beat may be waiting on a busy database; it ends on its own, and the
        # job's result does not wait for it longer than this.
        thread.join(10.0)
