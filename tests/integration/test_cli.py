"""The command-line client (web/cli.py) in a subprocess against the live server, a real Celery worker and bwrap.

The first test runs it as documented (``python -m web.cli``); the second runs
a lone copy of the file with ``-I -S`` (no site-packages, so no Django, no
repository on the path) to show that it needs only the standard library.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from tests.services import REPO, Worker
from web.accounts.services import api_token_ensure
from web.challenges.services import challenge_sync_from_dir
from web.submissions.models import Submission

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "packages"
REFERENCE = "import numpy as np\n\ndef add(a, b):\n    return np.add(a, b)\n"
WRONG = "def add(a, b):\n    return a\n"


@pytest.fixture
def site(live_server: Any, settings: Any, transactional_db: Any) -> dict[str, str]:
    """The live server with the demo package and a candidate's token, as the CLI's environment."""
    settings.CHALLENGES_DIR = FIXTURES
    assert challenge_sync_from_dir(FIXTURES).ok
    user = User.objects.create_user("cli-user", password="pw-cli-user-1")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO", "MLPREP"))}
    return {**env, "MLPREP_URL": live_server.url, "MLPREP_TOKEN": api_token_ensure(user)}


def cli(args: list[str], env: dict[str, str], *, standalone: Path | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-I", "-S", str(standalone)] if standalone else [sys.executable, "-m", "web.cli"]
    return subprocess.run([*command, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def test_submit_prints_the_status_then_the_verdict_and_exits_0(site: dict[str, str], celery_worker: Worker, tmp_path: Path) -> None:
    solution = tmp_path / "solution.py"
    solution.write_text(REFERENCE)

    done = cli(["submit", "add-numbers", str(solution)], site)

    assert done.returncode == 0, done.stderr
    sub = Submission.objects.get()
    lines = done.stdout.splitlines()
    assert lines[0] == f"Submit #{sub.pk}: queued"
    assert f"Submit #{sub.pk}: done" in lines
    assert "Verdict: Accepted  score 100" in lines
    assert {line.split()[1] for line in lines if line.startswith("  PASS ")} == {"floats", "keeps_float16", "integers"}
    assert sub.kind == "submit" and sub.code == REFERENCE and sub.verdict == "accepted"


def test_a_failed_run_exits_1_with_failing_probes_and_the_hint(site: dict[str, str], celery_worker: Worker, tmp_path: Path) -> None:
    standalone = tmp_path / "cli.py"
    shutil.copy(REPO / "web" / "cli.py", standalone)
    solution = tmp_path / "wrong.py"
    solution.write_text(WRONG)

    done = cli(["submit", "add-numbers", str(solution), "--run"], site, standalone=standalone)

    assert done.returncode == 1, done.stderr
    assert "Verdict: Wrong answer" in done.stdout
    assert "  FAIL " in done.stdout
    # No hint is shown unasked: the count, and the command for the one offered first.
    assert "Hint (tier" not in done.stdout
    sub = Submission.objects.get()
    assert sub.kind == "run"
    unlocked = len(sub.hints)
    assert f"{unlocked} hint(s) unlocked; the next (tier 1): python -m web.cli hint {sub.pk} broadcast" in done.stdout

    first = cli(["hint", str(sub.pk), "broadcast"], site, standalone=standalone)
    assert first.returncode == 0, first.stderr
    assert "Hint (tier 1) broadcast: Check what your function returns for arrays." in first.stdout
    revealed = cli(["hint", str(sub.pk), "dtype"], site, standalone=standalone)
    assert revealed.returncode == 0, revealed.stderr
    assert "Hint (tier 2) dtype: Keep the input\u2019s dtype." in revealed.stdout  # typographic quote from the Markdown
    skipped = cli(["hint", str(sub.pk), "no-such"], site, standalone=standalone)
    assert skipped.returncode == 2 and "HTTP 409: This submission did not unlock that hint." in skipped.stderr


@pytest.mark.parametrize(
    ("args", "env_change", "message"),
    [
        (["submit", "add-numbers", "{file}"], {"MLPREP_TOKEN": ""}, "error: no API token: pass --token or set MLPREP_TOKEN"),
        (["submit", "add-numbers", "{file}", "--token", "nope"], {}, "HTTP 401: Invalid token."),
        # A token pasted from `docker-compose exec` without -T ends in \r: stripped, not a crash on the header.
        (["submit", "add-numbers", "{file}"], {"MLPREP_TOKEN": "nope\r\n"}, "HTTP 401: Invalid token."),
        (["submit", "add-numbers", "{file}", "--token", "two words"], {}, "error: the API token holds spaces or control characters"),
        (["submit", "no-such", "{file}"], {}, "HTTP 404: No challenge 'no-such'."),
        (["submit", "add-numbers", "{missing}"], {}, "error: no such file: "),
        (["submit", "add-numbers", "{file}", "--url", "ftp://example"], {}, "--url must be an http(s) URL"),
        (["submit", "add-numbers", "{empty}"], {}, "HTTP 400: "),
        (["submit"], {}, "the following arguments are required: slug, file"),
    ],
)
def test_usage_and_http_errors_exit_2_naming_the_problem(
    site: dict[str, str], tmp_path: Path, args: list[str], env_change: dict[str, str], message: str
) -> None:
    (tmp_path / "solution.py").write_text(REFERENCE)
    (tmp_path / "empty.py").write_text("")
    paths = {"file": tmp_path / "solution.py", "missing": tmp_path / "absent.py", "empty": tmp_path / "empty.py"}
    done = cli([a.format(**paths) for a in args], {**site, **env_change})
    assert done.returncode == 2
    assert message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert Submission.objects.count() == 0
