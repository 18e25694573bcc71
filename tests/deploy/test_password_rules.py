"""deploy/password-rules.sh refuses what the web refuses: Postgres and Redis check their own passwords on first start.

The database volume keeps the password it was created with, so a weak one must
be refused by the containers themselves before initdb or redis-server use it;
the web and worker refuse the same passwords in
web/config/settings_production.py. Both are asked about the same passwords
here and must agree; the images' entrypoints are run by scripts/compose_check.py.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from web.config.secret_rules import service_password_problem

RULES = Path(__file__).resolve().parents[2] / "deploy" / "password-rules.sh"
STRONG = "3f9c2a7e1b0d4c68a5e2f1b7"
PASSWORDS = ["", "mlprep", "MLPrep", "postgres", "changeme", "short1", "aaaaaaaaaaaaaaaa", "abababab1212abab", "abcd1abcd1abcd1", STRONG]


def shell_problem(password: str) -> str | None:
    """What the entrypoints' rules say of ``password`` (None: accepted)."""
    script = f'. "{RULES}"; weak_password POSTGRES_PASSWORD "$1"'
    run = subprocess.run(["sh", "-c", script, "sh", password], capture_output=True, text=True, timeout=10)
    assert run.returncode in (0, 1), run.stderr
    return run.stdout.strip() if run.returncode == 0 else None


@pytest.mark.parametrize("password", PASSWORDS)
def test_the_entrypoints_refuse_exactly_what_the_web_refuses(password: str) -> None:
    web = service_password_problem("POSTGRES_PASSWORD", f"postgres://mlprep:{password}@postgres:5432/mlprep")
    shell = shell_problem(password)
    assert (shell is None) == (web is None), (password, shell, web)
    if shell is not None:
        assert shell.startswith("POSTGRES_PASSWORD ")  # the message names the setting


def test_a_weak_password_stops_the_entrypoint_with_where_to_get_a_strong_one() -> None:
    script = f'. "{RULES}"; refuse_weak_password REDIS_PASSWORD; echo started'

    def start(**env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["sh", "-c", script], env={**env, "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=10)

    weak = start(REDIS_PASSWORD="redis")
    assert weak.returncode == 1 and "started" not in weak.stdout
    assert "refusing to start: REDIS_PASSWORD is a default password" in weak.stderr and "compose-env.sh" in weak.stderr
    strong = start(REDIS_PASSWORD=STRONG)
    assert strong.returncode == 0 and strong.stdout.strip() == "started"
    unset = start()
    assert unset.returncode == 1 and "REDIS_PASSWORD is not set" in unset.stderr
