"""The Celery app: the worker process that grades submissions.

Start a worker with ``celery -A web.config worker``. The app reads every
``CELERY_*`` Django setting (see settings.py) and finds the tasks in each app's
``tasks.py``. Tasks are thin: they take ids and call a service.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "web.config.settings")

app = Celery("web")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
