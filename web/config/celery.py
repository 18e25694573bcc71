"""The Celery app: the worker process that grades submissions.

Start a worker with ``celery -A web.config worker``. The app reads every
``CELERY_*`` Django setting (see settings.py) and finds the tasks in each app's
``tasks.py``. Tasks are thin: they take ids and call a service. Beat
(``celery -A web.config beat``) schedules the sweeper (CELERY_BEAT_SCHEDULE).

Logging is Django's (settings.LOGGING: JSON lines with the submission id),
not Celery's own format; ``sandbox_health`` is a control command that
``manage.py health`` and ``/healthz`` broadcast to every worker.
"""

import logging
import logging.config
import os
from typing import Any

from celery import Celery
from celery.signals import setup_logging, worker_process_init, worker_process_shutdown
from celery.worker.control import inspect_command

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "web.config.settings")

app = Celery("web")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def _prepare_sandboxes(**_: object) -> None:
    """In each pool process, after the fork: create the sandbox backend now.

    Creating it removes what crashed workers left (scratch folders, cgroups,
    containers) and starts the warm pool's refill thread (``SANDBOX_POOL``),
    so the first submission does not pay for either. A backend that cannot start is
    logged here and reported again, as a platform error, by each grading.
    """
    from sandbox import SandboxStartError, get_backend
    from sandbox.pool import PooledBackend

    try:
        backend = get_backend()
    except SandboxStartError:
        logging.getLogger(__name__).exception("the sandbox backend is not available")
        return
    if isinstance(backend, PooledBackend):
        backend.fill(timeout=0)


@worker_process_shutdown.connect
def _finish_sandboxes(**_: object) -> None:
    """In each pool process, as it ends: let the sandboxes it just used finish going.

    Pool processes end without running atexit handlers, so the destroys that
    ``destroy_soon`` left running, and the warm pool, are finished here; a
    stopped worker then leaves no scratch folder or cgroup behind.
    """
    from sandbox import shutdown

    left = shutdown()
    if left:
        logging.getLogger(__name__).warning("%d sandbox(es) still being destroyed at exit", left)


@setup_logging.connect
def _django_logging(**_: object) -> None:
    """Worker and beat log as the web does: one JSON object per line (settings.LOGGING)."""
    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)


@inspect_command()
def sandbox_health(state: Any, **_: Any) -> dict[str, Any]:
    """This worker's sandbox backend readiness and pool sizes (answered by the main process).

    ``pool`` is the warm sandboxes each grading process keeps per profile;
    ``processes`` is how many grading processes the worker runs.
    """
    from sandbox.health import backend_health

    report = backend_health()
    consumer = state.consumer
    pool = getattr(consumer, "pool", None)
    report["processes"] = getattr(pool, "num_processes", None) or getattr(consumer.controller, "concurrency", None)
    report["queues"] = sorted(q.name for q in consumer.task_consumer.queues) if consumer.task_consumer else []
    return report
