"""Structured logs: one JSON object per line, with the submission id of the work at hand.

Place in the flow: settings.LOGGING installs :class:`JsonFormatter` and
:class:`ContextFilter` on the console handler of every process (gunicorn,
the Celery worker and beat: see ``web/config/celery.py``). The web's
services and the grading task run inside :func:`submission_context`; every
record emitted there, including those of ``grader/`` and ``sandbox/``, which
know nothing of Django, carries ``submission_id`` because the filter reads it
from a context variable at emit time. Threads that work for a submission
(``sandbox.teardown.destroy_soon``) run in a copy of the caller's context.

A record's ``event`` (``extra={"event": "grading.stored"}``) names what
happened in a stable, greppable way; the other ``extra`` keys become fields.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_submission_id: contextvars.ContextVar[int | None] = contextvars.ContextVar("submission_id", default=None)
_task_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("task_id", default=None)

# Attributes every LogRecord has; anything else on a record came from ``extra``.
_RECORD_FIELDS = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}


@contextmanager
def submission_context(submission_id: int | None, *, task_id: str | None = None) -> Iterator[None]:
    """Within the block, every log record of this thread carries ``submission_id`` (and ``task_id``)."""
    tokens = [_submission_id.set(submission_id)]
    if task_id is not None:
        tokens.append(_task_id.set(task_id))
    try:
        yield
    finally:
        _submission_id.reset(tokens[0])
        if len(tokens) > 1:
            _task_id.reset(tokens[1])


# Celery's own lines about a task ("received", "succeeded", "retry") come from
# its main process, outside any submission context; their ``data`` names the
# task. These tasks take the submission id as their one argument.
_SUBMISSION_TASKS = frozenset({"submissions.grade_submission"})
_ONE_INT_ARGUMENT = re.compile(r"^\((\d+),\)$")


def _from_celery_data(record: logging.LogRecord) -> tuple[int | None, str | None]:
    """The submission and task ids a Celery record's ``data`` names, if any."""
    data = getattr(record, "data", None)
    if not isinstance(data, dict):
        return None, None
    task_id = data.get("id") if isinstance(data.get("id"), str) else None
    submission_id = None
    if data.get("name") in _SUBMISSION_TASKS and (match := _ONE_INT_ARGUMENT.match(str(data.get("args", "")))):
        submission_id = int(match.group(1))
    return submission_id, task_id


class ContextFilter(logging.Filter):
    """Adds ``submission_id`` and ``task_id`` from the context (or from a Celery record's ``data``)
    unless the record names them itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        celery_submission, celery_task = _from_celery_data(record)
        if getattr(record, "submission_id", None) is None:
            record.submission_id = _submission_id.get() or celery_submission
        if getattr(record, "task_id", None) is None:
            record.task_id = _task_id.get() or celery_task
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, event, message, ids, extra fields, exception."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "event": getattr(record, "event", None) or "log",
            "message": record.getMessage(),
            "submission_id": getattr(record, "submission_id", None),
            "task_id": getattr(record, "task_id", None),
            "pid": record.process,
        }
        for key, value in record.__dict__.items():
            if key not in _RECORD_FIELDS and key not in entry and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def logging_config(level: str, fmt: str) -> dict[str, Any]:
    """settings.LOGGING: JSON lines (``fmt="json"``, the default) or plain text for a terminal."""
    formatter = {"()": JsonFormatter} if fmt == "json" else {"format": "%(asctime)s %(levelname)s %(name)s [sub=%(submission_id)s] %(message)s"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": ContextFilter}},
        "formatters": {"default": formatter},
        "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["context"], "formatter": "default"}},
        "root": {"handlers": ["console"], "level": level},
    }
