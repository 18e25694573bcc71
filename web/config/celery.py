"""The Celery app: the worker process that grades submissions.

Start a worker with ``celery -A web.config worker``. The app reads every
``CELERY_*`` Django setting (see settings.py) and finds the tasks in each app's
``tasks.py``. Tasks are thin: they take ids and call a service.
"""

import logging
import os

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "web.config.settings")

app = Celery("web")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def _prepare_sandboxes(**_: object) -> None:
    """In each pool process, after the fork: create the sandbox backend now.

    Creating it removes containers left by a crashed worker (docker) and
    starts the warm pool's refill thread (``SANDBOX_POOL``), so the first
    submission does not pay for either. A backend that cannot start is
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
