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
from urllib.parse import unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

from web.config.settings import *  # noqa: F403
from web.config.settings import CACHE_URL, CACHES, CELERY_BROKER_URL, CHANNELS_URL, DATABASE_URL, DEBUG, SECRET_KEY

DEV_SECRET_KEY = "dev-only-insecure-secret-key-do-not-deploy"  # noqa: S105 - the key this module refuses
MIN_SECRET_KEY_LENGTH = 32
MIN_PASSWORD_LENGTH = 12
# Passwords that were defaults somewhere (this project's compose file used
# "mlprep") or are the first any scanner tries.
DEFAULT_PASSWORDS = frozenset({"mlprep", "postgres", "redis", "password", "changeme", "secret", "admin"})


def secret_key_problem(key: str) -> str | None:
    """What is wrong with a production SECRET_KEY, or None."""
    if not key:
        return "SECRET_KEY is not set"
    if key == DEV_SECRET_KEY or key.startswith("django-insecure-"):
        return "SECRET_KEY is a development placeholder"
    if len(key) < MIN_SECRET_KEY_LENGTH or len(set(key)) < 5:
        return f"SECRET_KEY is too weak (use at least {MIN_SECRET_KEY_LENGTH} random characters)"
    return None


def service_password_problem(name: str, url: str) -> str | None:
    """What is wrong with the password in a database or Redis URL, or None.

    ``name`` is the setting, named in the message. The password itself is never repeated.
    """
    if not url:
        return None
    password = unquote(urlsplit(url).password or "")
    if not password:
        return f"{name} has no password"
    if password.lower() in DEFAULT_PASSWORDS:
        return f"{name} uses a default password"
    if len(password) < MIN_PASSWORD_LENGTH or len(set(password)) < 5:
        return f"{name}'s password is too weak (use at least {MIN_PASSWORD_LENGTH} random characters)"
    return None


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
