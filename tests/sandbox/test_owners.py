"""Owner tokens: what a sandbox's leftovers are named after, and when their owner counts as gone."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandbox.owners import owner_alive, owner_token
from tests.helpers import dead_owner_token


def test_this_process_is_named_by_pid_and_start_time() -> None:
    token = owner_token()
    pid, _, start = token.partition(".")
    assert pid == str(os.getpid())
    assert start.isdigit()
    assert owner_alive(token) is True


def test_a_reaped_process_is_gone() -> None:
    assert owner_alive(dead_owner_token()) is False


def test_a_zombie_is_gone() -> None:
    # Killed but not yet reaped (a SIGKILLed worker until its new parent waits for it).
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    token = owner_token(proc.pid)
    proc.kill()
    try:
        deadline = time.monotonic() + 10
        while Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline, "the child never became a zombie"
            time.sleep(0.02)
        assert owner_alive(token) is False
    finally:
        proc.wait()


def test_a_reused_pid_does_not_pass_for_its_old_owner() -> None:
    pid, _, start = owner_token().partition(".")
    assert owner_alive(f"{pid}.{int(start) + 1}") is False  # same pid, another process's start time


def test_a_bare_pid_is_still_read() -> None:
    assert owner_alive(str(os.getpid())) is True
    assert owner_alive(dead_owner_token().partition(".")[0]) is False


@pytest.mark.parametrize("token", ["", "abc", "12.x", "-3", "1.2.3"])
def test_a_name_that_is_no_token_is_left_alone(token: str) -> None:
    assert owner_alive(token) is None
