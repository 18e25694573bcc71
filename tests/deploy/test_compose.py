"""docker-compose.yml is valid and says what production needs (checked by docker-compose itself)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
COMPOSE = shutil.which("docker-compose")

pytestmark = pytest.mark.skipif(COMPOSE is None and not os.environ.get("CI"), reason="docker-compose is not installed (CI installs it)")


SECRETS = {"SECRET_KEY": "s3cret" * 8, "POSTGRES_PASSWORD": "pg-" + "a1b2c3" * 4, "REDIS_PASSWORD": "f00d" * 6}
SETTINGS = set(SECRETS) | {
    *("WEB_PORT", "WEB_BIND", "ALLOWED_HOSTS", "CSRF_TRUSTED_ORIGINS", "HTTPS", "TRUSTED_PROXY_COUNT", "HEALTHZ_TOKEN", "SANDBOX_POOL"),
    "SANDBOX_DOCKER_RUNTIME",
}


def compose_config(workdir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`docker-compose config` with ``workdir``/.env as its env file (made empty if absent) and ``env`` only.

    ``--env-file`` is the reader that takes the project folder's .env by default;
    pointing it elsewhere keeps a developer's own .env out of the test.
    """
    clean = {k: v for k, v in os.environ.items() if k not in SETTINGS}
    env_file = workdir / ".env"
    if not env_file.exists():
        env_file.write_text("")
    return subprocess.run(
        [COMPOSE or "docker-compose", "--env-file", str(env_file), "-f", str(REPO / "docker-compose.yml"), "config"],
        cwd=REPO, env={**clean, **env}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def example_settings() -> dict[str, str]:
    pairs = [line.split("=", 1) for line in (REPO / ".env.example").read_text().splitlines() if line and not line.startswith("#")]
    return {key: value for key, value in pairs}


def test_the_compose_file_is_valid_and_complete(tmp_path: Path) -> None:
    result = compose_config(tmp_path, **SECRETS)
    assert result.returncode == 0, result.stderr
    config = yaml.safe_load(result.stdout)
    services = config["services"]
    assert set(services) == {"web", "worker", "launcher", "beat", "redis", "postgres"}
    assert services["beat"]["command"][:4] == ["celery", "-A", "web.config", "beat"], "beat runs the sweeper"
    for name in services:
        assert "healthcheck" in services[name], f"{name} has no health check"
    assert set(config["volumes"]) >= {"redis-data", "postgres-data", "expected-cache"}
    worker = services["worker"]
    assert worker["environment"]["SANDBOX_BACKEND"] == "docker"
    # Only the launcher holds the engine's socket; the worker reaches it through the launcher, as non-root.
    holders = {name for name, service in services.items() if any("docker.sock:" in str(v) for v in service.get("volumes", []))}
    assert holders == {"launcher"}
    assert worker["environment"]["DOCKER_HOST"] == "unix:///run/mlprep-launcher/docker.sock"
    assert worker.get("user") in (None, "mlprep")
    launcher = services["launcher"]
    assert launcher["network_mode"] == "none" and launcher["read_only"] is True and launcher["cap_drop"] == ["ALL"]
    assert launcher["command"][:3] == ["python", "-m", "sandbox.launcher"]
    # The application's own services hold no capability and gain none (issue 28); the worker's shutdown waits for its gradings.
    for name in ("web", "worker", "beat"):
        assert services[name]["cap_drop"] == ["ALL"] and services[name]["security_opt"] == ["no-new-privileges"], name
    assert worker["stop_grace_period"] in ("11m", "11m0s", 660, "660s")
    assert "gunicorn" in " ".join(services["web"]["command"])
    assert services["web"]["environment"]["DATABASE_URL"].startswith("postgres://")
    assert services["web"]["environment"]["CELERY_BROKER_URL"].startswith("redis://")


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_a_missing_secret_is_refused_with_where_to_set_it(tmp_path: Path, name: str) -> None:
    result = compose_config(tmp_path, **{k: v for k, v in SECRETS.items() if k != name})
    assert result.returncode != 0
    assert name in result.stderr and "scripts/compose-env.sh" in result.stderr


def test_every_setting_comes_from_the_env_file_documented_by_the_example(tmp_path: Path) -> None:
    # The example names every variable the compose file reads, and nothing else.
    text = (REPO / "docker-compose.yml").read_text()
    used = set(re.findall(r"\$\{([A-Z_]+)", text))
    assert used == set(example_settings()), "docker-compose.yml and .env.example disagree"
    # A .env in the project folder is read by every command: no variable in the environment at all.
    (tmp_path / ".env").write_text(
        "".join(f"{k}={v}\n" for k, v in {**example_settings(), **SECRETS, "WEB_PORT": "8123", "HTTPS": "1", "TRUSTED_PROXY_COUNT": "1"}.items())
    )
    result = compose_config(tmp_path)
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    web = services["web"]
    assert web["ports"] == ["127.0.0.1:8123:8000/tcp"]
    env = web["environment"]
    assert env["SECRET_KEY"] == SECRETS["SECRET_KEY"]
    assert env["DATABASE_URL"] == f"postgres://mlprep:{SECRETS['POSTGRES_PASSWORD']}@postgres:5432/mlprep"
    assert env["CELERY_BROKER_URL"] == f"redis://:{SECRETS['REDIS_PASSWORD']}@redis:6379/0"
    assert env["CACHE_URL"] == f"redis://:{SECRETS['REDIS_PASSWORD']}@redis:6379/1"
    assert (env["HTTPS"], env["TRUSTED_PROXY_COUNT"]) == ("1", "1")
    assert services["redis"]["environment"]["REDIS_PASSWORD"] == SECRETS["REDIS_PASSWORD"]
    assert services["postgres"]["environment"]["POSTGRES_PASSWORD"] == SECRETS["POSTGRES_PASSWORD"]
    assert "REDISCLI_AUTH" in " ".join(services["redis"]["healthcheck"]["test"])


def test_compose_env_writes_fresh_secrets_once(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    shutil.copy(REPO / "scripts" / "compose-env.sh", tmp_path / "scripts")
    shutil.copy(REPO / ".env.example", tmp_path)
    script = tmp_path / "scripts" / "compose-env.sh"
    subprocess.run(["sh", str(script)], check=True, capture_output=True)
    first = (tmp_path / ".env").read_text()
    values = dict(line.split("=", 1) for line in first.splitlines() if line and not line.startswith("#"))
    assert len(values["SECRET_KEY"]) == 64 and len(values["POSTGRES_PASSWORD"]) == 48 and len(values["REDIS_PASSWORD"]) == 48
    assert len({values["SECRET_KEY"][:48], values["POSTGRES_PASSWORD"], values["REDIS_PASSWORD"]}) == 3
    assert oct((tmp_path / ".env").stat().st_mode & 0o777) == "0o600"
    again = subprocess.run(["sh", str(script)], capture_output=True, text=True)
    assert again.returncode == 0 and "leaving it" in again.stderr
    assert (tmp_path / ".env").read_text() == first, "an existing .env is never overwritten"
    assert "/.env" in (REPO / ".gitignore").read_text().split(), "the real .env is ignored by git"
