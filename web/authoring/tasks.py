"""The Celery task behind Validate: take the run's id, call the service.

A crash inside the validation is caught by ``validation_execute`` and ends
the run failed. If the task itself fails (the database is gone, the hard
time limit killed it), the failure handler ends the run failed too; and if
the worker dies without running either, ``validation_run_status`` expires
the run when the page polls it.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Task, shared_task

from web.authoring.services import validation_execute, validation_fail

logger = logging.getLogger(__name__)


class ValidateTask(Task):
    def on_failure(self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        run_id = (kwargs or {}).get("run_id") or (args[0] if args else None)
        if run_id is not None:
            validation_fail(int(run_id), f"The validation task failed: {type(exc).__name__}: {exc}")


@shared_task(bind=True, base=ValidateTask, name="authoring.validate_version", acks_late=True)
def validate_version(self: Task, run_id: int) -> str:
    run = validation_execute(run_id)
    return "skipped" if run is None else run.status
