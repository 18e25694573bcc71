"""Project configuration; exposes the Celery app so `celery -A web.config` finds it."""

from web.config.celery import app as celery_app

__all__ = ("celery_app",)
