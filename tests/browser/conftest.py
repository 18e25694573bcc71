"""Real services for these tests (see tests/services.py)."""

from tests.services import celery_worker, redis_url, worker_extra_env  # noqa: F401 - pytest fixtures
