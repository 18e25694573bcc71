"""web/config/settings_production.py: a deployed site refuses to start with an unsafe configuration.

Each case starts a fresh interpreter (settings are read once, at import),
the way gunicorn, Celery or manage.py would, and looks for the message.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GOOD_KEY = "9f8e7d6c5b4a3928" * 4
REDIS_PW = "0a1b2c3d4e5f6a7b8c9d0e1f"
SAFE = {
    "SECRET_KEY": GOOD_KEY,
    "CACHE_URL": f"redis://:{REDIS_PW}@127.0.0.1:6379/1",
    "CELERY_BROKER_URL": f"redis://:{REDIS_PW}@127.0.0.1:6379/0",
    "CHANNELS_URL": f"redis://:{REDIS_PW}@127.0.0.1:6379/2",
    "DATABASE_URL": "postgres://mlprep:7c1e9a0b5d3f2e8a4b6c@db.internal:5432/mlprep",
    "SANDBOX_BACKEND": "docker",
    "ALLOWED_HOSTS": "prep.example",
}


def start(command: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    drop = {"DEBUG", "SECRET_KEY", "SECRET_KEY_FILE", "CACHE_URL", "CELERY_BROKER_URL", "CHANNELS_URL", "DATABASE_URL", "SANDBOX_BACKEND"}
    drop.add("HTTPS")
    drop.add("DJANGO_SETTINGS_MODULE")
    clean = {k: v for k, v in os.environ.items() if k not in drop}
    full = {**clean, "DJANGO_SETTINGS_MODULE": "web.config.settings_production", "SECRET_KEY_FILE": "/nonexistent/key", **env}
    return subprocess.run(command, cwd=REPO, env=full, capture_output=True, text=True, timeout=120)


def import_settings(**env: str) -> subprocess.CompletedProcess[str]:
    return start([sys.executable, "-c", "import web.config.settings_production as s; print(s.DEBUG, s.CACHES['default']['BACKEND'])"], **env)


def test_a_safe_configuration_starts() -> None:
    result = import_settings(**SAFE)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "django.core.cache.backends.redis.RedisCache"]


def test_manage_py_refuses_to_start_with_debug_on() -> None:
    result = start([sys.executable, "manage.py", "check"], **SAFE, DEBUG="1")
    assert result.returncode != 0
    assert "DEBUG is on in production settings" in result.stderr


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("dev-only-insecure-secret-key-do-not-deploy", "development placeholder"),
        ("django-insecure-" + "x1y2z3" * 8, "development placeholder"),
        ("short-key", "too weak"),
        ("a" * 64, "too weak"),
    ],
)
def test_a_default_or_weak_secret_key_is_refused(key: str, message: str) -> None:
    result = import_settings(**{**SAFE, "SECRET_KEY": key})
    assert result.returncode != 0 and message in result.stderr


def test_a_missing_secret_key_is_refused() -> None:
    result = import_settings(**{k: v for k, v in SAFE.items() if k != "SECRET_KEY"})
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


def test_a_per_process_cache_is_refused() -> None:
    result = import_settings(**{k: v for k, v in SAFE.items() if k != "CACHE_URL"})
    assert result.returncode != 0 and "CACHE_URL=redis://" in result.stderr


def test_a_per_process_keystroke_relay_is_refused() -> None:
    result = import_settings(**{**SAFE, "CHANNELS_URL": "memory://"})
    assert result.returncode != 0 and "CHANNELS_URL=redis://" in result.stderr


def test_the_unisolated_sandbox_is_refused() -> None:
    result = import_settings(**{**SAFE, "SANDBOX_BACKEND": "local"})
    assert result.returncode != 0 and "without isolation" in result.stderr


def test_the_app_image_runs_on_production_settings() -> None:
    dockerfile = (REPO / "deploy" / "app.Dockerfile").read_text()
    assert "DJANGO_SETTINGS_MODULE=web.config.settings_production" in dockerfile


@pytest.mark.parametrize(
    ("setting", "url", "message"),
    [
        ("DATABASE_URL", "postgres://mlprep@db:5432/mlprep", "DATABASE_URL has no password"),
        ("DATABASE_URL", "postgres://mlprep:mlprep@db:5432/mlprep", "DATABASE_URL uses a default password"),
        ("DATABASE_URL", "postgresql://mlprep:abc123@db/mlprep", "DATABASE_URL's password is too weak"),
        ("CELERY_BROKER_URL", "redis://redis:6379/0", "CELERY_BROKER_URL has no password"),
        ("CACHE_URL", "redis://:changeme@redis:6379/1", "CACHE_URL uses a default password"),
        ("CACHE_URL", "redis://:aaaaaaaaaaaaaaaa@redis:6379/1", "CACHE_URL's password is too weak"),
        ("CHANNELS_URL", "redis://redis:6379/2", "CHANNELS_URL has no password"),
    ],
)
def test_a_service_without_a_real_password_is_refused(setting: str, url: str, message: str) -> None:
    result = import_settings(**{**SAFE, setting: url})
    assert result.returncode != 0 and message in result.stderr
    assert "REDIS_PASSWORD" in result.stderr and ".env.example" in result.stderr  # where to fix it
    for weak in ("abc123", "changeme", "aaaaaaaaaaaaaaaa"):
        assert f":{weak}@" not in result.stderr and f" {weak}" not in result.stderr, "the refusal never repeats the password"


def test_https_turns_on_secure_cookies_hsts_and_the_proxy_header() -> None:
    show = "import web.config.settings_production as s; print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, {})"
    on = start([sys.executable, "-c", show.format("s.SECURE_HSTS_SECONDS, s.SECURE_PROXY_SSL_HEADER")], **SAFE, HTTPS="1")
    assert on.returncode == 0, on.stderr
    assert on.stdout.split() == ["True", "True", str(365 * 24 * 3600), "('HTTP_X_FORWARDED_PROTO',", "'https')"]
    off = start([sys.executable, "-c", show.format("getattr(s, 'SECURE_PROXY_SSL_HEADER', None)")], **SAFE)
    assert off.returncode == 0, off.stderr
    assert off.stdout.split() == ["False", "False", "None"], "without HTTPS a plain-HTTP site must still be able to log in"
