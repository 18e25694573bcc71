"""The production stack itself, brought up from its built images: `make compose-check` run by the suite.

scripts/compose_check.py does the work and says what it checks (health, a
worker with no Docker socket and no root, the launcher's refusal, an API
grading, two workers, a Redis restart mid-queue with every submission graded
exactly once, an upgrade with submissions in flight, no sandbox container
left after `down`). Building the images is cached by the engine: after the first
run only changed layers (the application code) are rebuilt.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import real_backends

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif("docker" not in real_backends(), reason="no Docker engine on this machine (CI always has one)")


@pytest.mark.timeout(4500)  # building the images (at most 2400 s) and the check (at most 1800 s)
def test_the_stack_grades_scales_and_survives_a_redis_restart() -> None:
    # Images of a tag of its own: the suite never re-tags the mlprep-*:latest a stack on this engine runs.
    env = {**os.environ, "MLPREP_TAG": "check"}
    build = subprocess.run([str(REPO / "scripts" / "build-app-image.sh")], cwd=REPO, env=env, capture_output=True, text=True, timeout=2400)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    check_script = str(REPO / "scripts" / "compose_check.py")
    check = subprocess.run([sys.executable, check_script], cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-6000:]
    assert "compose-check passed" in check.stdout
    assert "were waiting when Redis restarted" in check.stdout
    assert "submissions in flight: all accepted" in check.stdout  # an upgrade as README's steps do it
    assert "no sandbox container left after `down`" in check.stdout
    assert "images: no setuid program in the app image" in check.stdout
