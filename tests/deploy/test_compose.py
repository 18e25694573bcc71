"""docker-compose.yml is valid and says what production needs (checked by docker-compose itself)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
COMPOSE = shutil.which("docker-compose")

pytestmark = pytest.mark.skipif(COMPOSE is None and not os.environ.get("CI"), reason="docker-compose is not installed (CI installs it)")


def compose_config(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "POSTGRES_PASSWORD"}}
    return subprocess.run(
        [COMPOSE or "docker-compose", "-f", str(REPO / "docker-compose.yml"), "config"],
        cwd=REPO, env={**clean, **env}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_the_compose_file_is_valid_and_complete() -> None:
    result = compose_config(SECRET_KEY="s3cret")
    assert result.returncode == 0, result.stderr
    config = yaml.safe_load(result.stdout)
    services = config["services"]
    assert set(services) == {"web", "worker", "beat", "redis", "postgres"}
    assert services["beat"]["command"][:4] == ["celery", "-A", "web.config", "beat"], "beat runs the sweeper"
    for name in services:
        assert "healthcheck" in services[name], f"{name} has no health check"
    assert set(config["volumes"]) >= {"redis-data", "postgres-data", "expected-cache"}
    worker = services["worker"]
    assert worker["environment"]["SANDBOX_BACKEND"] == "docker"
    assert any("/var/run/docker.sock" in str(v) for v in worker["volumes"])
    assert "gunicorn" in " ".join(services["web"]["command"])
    assert services["web"]["environment"]["DATABASE_URL"].startswith("postgres://")
    assert services["web"]["environment"]["CELERY_BROKER_URL"].startswith("redis://")


def test_a_missing_secret_key_is_refused() -> None:
    result = compose_config()
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr
