"""Settings from the environment and the Celery app's configuration: web/config/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from web.config import celery_app

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import json
from web.config import settings as s
db = s.DATABASES["default"]
print(json.dumps({"debug": s.DEBUG, "engine": db["ENGINE"], "name": str(db["NAME"]),
                  "options": db.get("OPTIONS", {}), "hosts": s.ALLOWED_HOSTS, "broker": s.CELERY_BROKER_URL,
                  "challenges": str(s.CHALLENGES_DIR)}))
"""


def load_settings(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY", "DATABASE_URL", "ALLOWED_HOSTS", "SECRET_KEY_FILE"}}
    return subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, env={**clean, **env}, capture_output=True, text=True, timeout=60)


def test_defaults_are_sqlite_with_wal_and_immediate_transactions() -> None:
    result = load_settings(DEBUG="1")
    values = json.loads(result.stdout)

    assert values["debug"] is True
    assert values["engine"] == "django.db.backends.sqlite3" and values["name"].endswith("var/db.sqlite3")
    assert values["options"]["init_command"] == "PRAGMA journal_mode=WAL;"
    assert values["options"]["transaction_mode"] == "IMMEDIATE" and values["options"]["timeout"] > 0
    assert values["broker"] == "redis://127.0.0.1:6379/0"
    assert values["challenges"] == str(REPO / "challenges")


def test_secret_key_is_required_without_debug(tmp_path: Path) -> None:
    result = load_settings(SECRET_KEY_FILE=str(tmp_path / "absent"))
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


def test_secret_key_comes_from_the_installation_key_file(tmp_path: Path) -> None:
    key_file = tmp_path / "secret_key"
    key_file.write_text("from-the-file\n")
    probe = "from web.config import settings as s; print(s.SECRET_KEY)"
    clean = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY"}}
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, env={**clean, "SECRET_KEY_FILE": str(key_file)}, capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "from-the-file", result.stderr


def test_database_url_selects_postgresql() -> None:
    result = load_settings(SECRET_KEY="k", DATABASE_URL="postgres://u:p@db.internal:5432/prep", ALLOWED_HOSTS="a.b,c.d")
    values = json.loads(result.stdout)

    assert values["debug"] is False
    assert values["engine"] == "django.db.backends.postgresql" and values["name"] == "prep"
    assert "init_command" not in values["options"]
    assert values["hosts"] == ["a.b", "c.d"]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("task_acks_late", True),
        ("task_reject_on_worker_lost", True),
        ("worker_prefetch_multiplier", 1),
        ("task_serializer", "json"),
        ("accept_content", ["json"]),
    ],
)
def test_celery_is_configured_for_at_least_once_grading(name: str, value: object) -> None:
    assert celery_app.conf[name] == value


def test_celery_visibility_timeout_outlasts_a_grading_run() -> None:
    assert celery_app.conf.broker_transport_options["visibility_timeout"] > celery_app.conf.task_time_limit


def test_the_worker_finds_the_grading_task() -> None:
    celery_app.loader.import_default_modules()  # what a worker does at start-up (autodiscovery)
    assert "submissions.grade_submission" in celery_app.tasks
