"""WSGI entry point for gunicorn: ``gunicorn web.config.wsgi``."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "web.config.settings")

application = get_wsgi_application()
