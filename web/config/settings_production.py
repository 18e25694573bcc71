"""Settings for a deployed site: web.config.settings plus checks that refuse an unsafe configuration.

The app image runs with ``DJANGO_SETTINGS_MODULE=web.config.settings_production``
(deploy/app.Dockerfile). Importing this module raises ImproperlyConfigured,
so gunicorn, Celery and every manage.py command fail at start-up, when:

- DEBUG is on (tracebacks with settings and code would be shown to anyone);
- SECRET_KEY is missing, the development key, a Django placeholder
  ("django-insecure-...") or too short to resist guessing;
- the cache is not Redis (the login throttle must count across processes);
- the sandbox backend is ``local`` (candidates' code without isolation);
- the database (PostgreSQL) or Redis (the broker, the cache) is reached
  without a password, or with a default or short one: the compose stack's
  old default ``mlprep`` is public in the repository.
"""

import os

from django.core.exceptions import ImproperlyConfigured

from web.config.secret_rules import secret_key_problem, service_password_problem
from web.config.settings import *  # noqa: F403
from web.config.settings import CACHE_URL, CACHES, CELERY_BROKER_URL, CHANNELS_URL, DATABASE_URL, DEBUG, SECRET_KEY

if DEBUG:
    raise ImproperlyConfigured("DEBUG is on in production settings; unset DEBUG (or set DEBUG=0).")

_problem = secret_key_problem(SECRET_KEY)
if _problem:
    raise ImproperlyConfigured(f"{_problem}: generate one with `openssl rand -hex 32` and set SECRET_KEY.")

if CACHES["default"]["BACKEND"] != "django.core.cache.backends.redis.RedisCache":
    raise ImproperlyConfigured("The cache must be shared by every web process (the login throttle counts in it): set CACHE_URL=redis://host:6379/1.")

if CHANNELS_URL.startswith("memory://"):
    raise ImproperlyConfigured(
        "The interview's keystroke relay must be shared by every web process: set CHANNELS_URL=redis://host:6379/2."
    )

if os.environ.get("SANDBOX_BACKEND", "bwrap") == "local":
    raise ImproperlyConfigured("SANDBOX_BACKEND=local runs code without isolation; use docker or bwrap.")

_redis_urls = [("CELERY_BROKER_URL", CELERY_BROKER_URL), ("CACHE_URL", CACHE_URL), ("CHANNELS_URL", CHANNELS_URL)]
_postgres = [("DATABASE_URL", DATABASE_URL)] if DATABASE_URL.startswith(("postgres://", "postgresql://")) else []
for _name, _url in _postgres + [(n, u) for n, u in _redis_urls if u.startswith(("redis://", "rediss://"))]:
    _problem = service_password_problem(_name, _url)
    if _problem:
        raise ImproperlyConfigured(
            f"{_problem}: generate one with `openssl rand -hex 24`, set it in .env (POSTGRES_PASSWORD, REDIS_PASSWORD) "
            "and in the URL (see .env.example)."
        )
