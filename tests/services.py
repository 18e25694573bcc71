"""Real services for the end-to-end tests: a Redis server and a Celery worker.

The worker is a separate process (``celery -A web.config worker``) that
shares the test database file with the test process (see settings_test:
the SQLite test database is a file for this reason), takes tasks from a real
Redis on a free loopback port, and grades in the real bwrap sandbox.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """A real redis-server on a free port that keeps its data across restarts (append-only file), as deployed."""

    def __init__(self, workdir: Path) -> None:
        self.port = _free_port()
        self.workdir = workdir
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        # appendfsync always: a job acknowledged by Redis survives even a SIGKILL of Redis.
        self.proc = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "yes",
             "--appendfsync", "always", "--dir", str(self.workdir)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.proc.kill()
        raise RuntimeError("redis-server did not start")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server.url
    server.stop()


class Worker:
    """A real Celery worker process; ``kill_child`` SIGKILLs the pool process grading a task."""

    def __init__(self, env: dict[str, str], log: Path, *, name: str = "worker", beat: bool = False) -> None:
        self.log = log
        self._log_file = log.open("wb")
        command = ["beat", "--loglevel=INFO", "--schedule", str(log.with_suffix(".schedule"))] if beat else [
            "worker", "--loglevel=INFO", "--concurrency=1", "--without-gossip", "--without-mingle", "--without-heartbeat",
            "-n", f"{name}@%h",
        ]  # fmt: skip
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "web.config", *command],
            cwd=REPO, env=env, stdout=self._log_file, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        ready = "beat: Starting" if beat else "ready"
        while ready not in log.read_text(errors="replace"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"celery worker did not start:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.2)

    def pool_children(self) -> list[int]:
        out = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]

    def kill(self) -> None:
        """SIGKILL the whole worker (main process, pool processes and their sandboxes) at once."""
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self._log_file.close()

    def stop(self) -> None:
        if self.proc.returncode is not None:
            self._log_file.close()  # a worker that died at start: its log must not leak (ResourceWarning)
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        finally:
            self._log_file.close()


@pytest.fixture
def worker_extra_env() -> dict[str, str]:
    """More environment for :func:`celery_worker`; a test parametrizes it to set the worker's settings."""
    return {}


@pytest.fixture
def celery_worker(redis_url: str, transactional_db: Any, settings: Any, tmp_path: Path, worker_extra_env: dict[str, str]) -> Iterator[Worker]:
    """A worker on the test database; the test process publishes to the same Redis."""
    from django.db import connection

    from web.config.celery import app

    db_name = str(connection.settings_dict["NAME"])
    assert db_name != ":memory:" and "mode=memory" not in db_name, "the test database must be a file the worker can open"
    env = worker_env(db_name, redis_url, Path(settings.CHALLENGES_DIR), **worker_extra_env)
    old = {k: app.conf[k] for k in ("broker_url", "task_always_eager")}
    app.conf.update(broker_url=redis_url, task_always_eager=False)
    _reset_producer_pool(app)
    worker = Worker(env, tmp_path / "worker.log")
    try:
        yield worker
    finally:
        worker.stop()
        app.conf.update(**old)


def worker_env(db_name: str, broker_url: str, challenges_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a worker (or beat) on the test database and broker."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "web.config.settings",
        "DEBUG": "1",
        "SECRET_KEY": "integration-test-key",
        "DATABASE_URL": f"sqlite:///{db_name}",
        "CELERY_BROKER_URL": broker_url,
        "CHALLENGES_DIR": str(challenges_dir),
        "SANDBOX_BACKEND": os.environ.get("SANDBOX_BACKEND", "bwrap"),
        "GRADING_HEARTBEAT_SECONDS": "1",
        "GRADING_STALE_SECONDS": "3",  # a claim without a heartbeat for this long is a dead worker's
        "PYTHONPATH": str(REPO),
        **extra,
    }


def _reset_producer_pool(app: Any) -> None:
    """Drop pooled broker connections so the next publish uses the current broker_url."""
    app._pool = None
    app.amqp._producer_pool = None


def wait_until_done(submission_id: int, timeout: float = 120) -> Any:
    from web.submissions.models import Submission

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sub = Submission.objects.get(pk=submission_id)
        if sub.status == "done":
            return sub
        time.sleep(0.2)
    raise AssertionError(f"submission {submission_id} still {sub.status} after {timeout} s")
