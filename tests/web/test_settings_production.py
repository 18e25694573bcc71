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
SAFE = {"SECRET_KEY": GOOD_KEY, "CACHE_URL": "redis://127.0.0.1:6379/1", "SANDBOX_BACKEND": "docker", "ALLOWED_HOSTS": "prep.example"}


def start(command: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    drop = {"DEBUG", "SECRET_KEY", "SECRET_KEY_FILE", "CACHE_URL", "SANDBOX_BACKEND", "DJANGO_SETTINGS_MODULE"}
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
