"""Nothing lost, nothing graded twice: 100 submissions in flight while the platform fails under them.

Real Redis (append-only, restartable), two real Celery workers, Celery beat
running the sweeper every second, the bwrap sandbox and the cheap
add-numbers fixture package. While the submissions are being graded one
fault is injected: (a) a whole worker is SIGKILLed and started again,
(b) Redis is killed and restarted (submissions made while it is down stay
queued), (c) the SQLite database is locked by another connection for longer
than the workers' busy timeout, (d) sandboxes are killed from outside.
Afterwards every submission is done with the verdict its code deserves,
exactly one result was stored for each (the workers' JSON logs say so), and
no sandbox process, scratch folder or cgroup is left behind.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection

from sandbox.scratch import HOST_DIR_PREFIX
from tests.helpers import dead_owner_token
from tests.services import RedisServer, Worker, _reset_producer_pool, worker_env
from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir
from web.submissions.models import Status, Submission
from web.submissions.services.intake import submission_create

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "packages"
SUBMISSIONS = int(os.environ.get("FAULT_SUBMISSIONS", "100"))
# Deadlines are generous: the machine is shared and slow. Nothing asserts on time.
ALL_DONE_WITHIN = 420.0

# What the workers log when the fault reaches them (Celery's consumer; SQLite through Django).
BROKER_LOST = "Connection to broker lost"
DATABASE_LOCKED = "database is locked"

# The code, and the verdict it deserves.
CODES = {
    "accepted": "import time\nimport numpy as np\n\ndef add(a, b):\n    time.sleep(0.2)\n    return np.add(a, b)\n",
    "wrong_answer": "def add(a, b):\n    return a\n",
    "syntax_error": "def add(a, b)\n    return a + b\n",
}


@dataclass
class Pipeline:
    redis: RedisServer
    env: dict[str, str]
    tmp: Path
    db_name: str
    cgroup_parent: str
    workers: list[Worker] = field(default_factory=list)
    beat: Worker | None = None
    logs: list[Path] = field(default_factory=list)

    def start_worker(self, index: int) -> Worker:
        log = self.tmp / f"worker{index}-{len(self.logs)}.log"
        self.logs.append(log)
        worker = Worker(self.env, log, name=f"fault{index}")
        return worker

    def sandbox_tmp(self) -> Path:
        return Path(self.env["TMPDIR"])


def _sandbox_processes(marker: str) -> list[tuple[int, int, list[str]]]:
    """(pid, ppid, argv) of every process whose command line mentions ``marker`` (our sandboxes' scratch dir)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        args = [a.decode(errors="replace") for a in argv if a]
        if any(marker in a for a in args):
            found.append((int(entry.name), ppid, args))
    return found


def _group_running(pgid: int) -> bool:
    """Whether a process of process group ``pgid`` still runs (a zombie waiting for its reaper does not)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state, _ppid, pgrp = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, IndexError, ValueError):
            continue
        if int(pgrp) == pgid and state not in ("Z", "X"):
            return True
    return False


def _log_count(logs: list[Path], text: str) -> int:
    """How many lines of these logs mention ``text``."""
    return sum(line.count(text) for log in logs if log.exists() for line in log.read_text(errors="replace").splitlines())


def _cgroups_of(parent: str) -> list[str]:
    from sandbox import cgroups

    names: set[str] = set()
    v2 = (cgroups.ROOT / "cgroup.controllers").exists()
    roots = [cgroups.ROOT / parent] if v2 else [cgroups.ROOT / c / parent for c in ("memory", "pids", "cpu")]
    for root in roots:
        if root.is_dir():
            names.update(g.name for g in root.iterdir() if g.is_dir())
    return sorted(names)


@pytest.fixture
def pipeline(transactional_db: Any, settings: Any, tmp_path: Path) -> Iterator[Pipeline]:
    from web.config.celery import app

    settings.CHALLENGES_DIR = FIXTURES
    settings.SUBMISSIONS_MAX_PENDING = 10_000
    settings.SUBMISSIONS_SUBMITS_PER_MINUTE = 10_000  # one user submits all 100 at once
    report = challenge_sync_from_dir(FIXTURES)
    assert report.ok, report.errors
    db_name = str(connection.settings_dict["NAME"])
    (tmp_path / "redis-data").mkdir()
    redis = RedisServer(tmp_path / "redis-data")
    sandbox_tmp = tmp_path / "sbx"
    sandbox_tmp.mkdir()
    cgroup_parent = f"mlprep-fault-{uuid.uuid4().hex[:8]}"
    env = worker_env(
        db_name, redis.url, FIXTURES,
        TMPDIR=str(sandbox_tmp),  # every sandbox's host scratch dir lands here: easy to find, easy to check
        SANDBOX_CGROUP_PARENT=cgroup_parent,
        GRADING_HEARTBEAT_SECONDS="3",
        GRADING_STALE_SECONDS="15",  # a running one without a heartbeat for this long is a dead worker's
        GRADING_QUEUED_SECONDS="20",  # a queued message older than this may be lost
        GRADING_SWEEP_SECONDS="1",
        GRADING_MAX_ATTEMPTS="10",
        SQLITE_TIMEOUT_SECONDS="3",  # shorter than fault (c)'s lock: the workers really see "database is locked"
        LOG_FORMAT="json",
    )  # fmt: skip
    env.pop("SANDBOX_POOL", None)
    old = {k: app.conf[k] for k in ("broker_url", "task_always_eager")}
    app.conf.update(broker_url=redis.url, task_always_eager=False)
    _reset_producer_pool(app)
    pipe = Pipeline(redis=redis, env=env, tmp=tmp_path, db_name=db_name, cgroup_parent=cgroup_parent)
    try:
        pipe.workers = [pipe.start_worker(0), pipe.start_worker(1)]
        pipe.beat = Worker(env, tmp_path / "beat.log", beat=True)
        yield pipe
    finally:
        for worker in [*pipe.workers, *([pipe.beat] if pipe.beat else [])]:
            worker.stop()
        redis.stop()
        app.conf.update(**old)
        _reset_producer_pool(app)
        from sandbox import cgroups

        for parent in ([cgroups.ROOT / cgroup_parent] if (cgroups.ROOT / "cgroup.controllers").exists()
                       else [cgroups.ROOT / c / cgroup_parent for c in ("memory", "pids", "cpu")]):  # fmt: skip
            if parent.is_dir():
                for group in parent.iterdir():
                    if group.is_dir():
                        group.rmdir()
                parent.rmdir()


def _submit_all(user: User, challenge: Challenge, count: int, start: int = 0) -> dict[int, str]:
    expected: dict[int, str] = {}
    kinds = list(CODES)
    for i in range(start, start + count):
        verdict = kinds[i % len(kinds)]
        expected[submission_create(user, challenge, CODES[verdict], "submit").pk] = verdict
    return expected


def _wait(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def _done() -> int:
    return Submission.objects.filter(status=Status.DONE).count()


def _grading_in_progress() -> bool:
    return _done() >= 5 and Submission.objects.filter(status=Status.RUNNING).exists()


def _kill_sandboxes(pipe: Pipeline) -> int:
    """SIGKILL the outer bwrap process of every running sandbox of ours: the whole sandbox dies."""
    procs = _sandbox_processes(str(pipe.sandbox_tmp()))
    pids = {pid for pid, _, _ in procs}
    killed = 0
    for pid, ppid, argv in procs:
        if argv and argv[0].endswith("bwrap") and ppid not in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
    return killed


def _inject(fault: str, pipe: Pipeline, user: User, challenge: Challenge) -> dict[int, str]:
    """Inject one fault while grading is under way; the submissions made meanwhile, with their verdicts."""
    extra: dict[int, str] = {}
    if fault == "worker_sigkill":
        killed = pipe.workers[0]
        killed.kill()  # main process, pool process and its sandbox, mid-grading
        # Its successor starts once it is really gone (its pool process too), as after a crash.
        _wait(lambda: not _group_running(killed.proc.pid), 60, "the killed worker's processes to end")
        pipe.workers[0] = pipe.start_worker(0)
    elif fault == "redis_restart":
        lost = {worker.log: _log_count([worker.log], BROKER_LOST) for worker in pipe.workers}
        pipe.redis.kill()
        # Submissions made while the broker is down: saved, left queued, sent again by the sweeper.
        extra = _submit_all(user, challenge, 3, start=SUBMISSIONS)
        # Back up once every worker has seen it go: they must reconnect, not just carry on.
        _wait(lambda: all(_log_count([log], BROKER_LOST) > n for log, n in lost.items()), 60, "the workers to lose the broker")
        pipe.redis.start()
    elif fault == "database_locked":
        seen = _log_count(pipe.logs, DATABASE_LOCKED)
        lock = sqlite3.connect(pipe.db_name, timeout=30)
        try:
            lock.execute("BEGIN EXCLUSIVE")
            # Held until a worker waited out its 3 s busy timeout and said so (a retried task, a missed heartbeat).
            _wait(lambda: _log_count(pipe.logs, DATABASE_LOCKED) > seen, 120, "a worker to find the database locked")
        finally:
            lock.rollback()
            lock.close()
    elif fault == "sandbox_killed":
        killed = 0
        deadline = time.monotonic() + 60
        while killed < 3 and time.monotonic() < deadline:
            killed += _kill_sandboxes(pipe)
            time.sleep(0.7)
        assert killed >= 1, "no sandbox was running to be killed"
    else:
        raise AssertionError(fault)
    return extra


def _stored_results(logs: list[Path]) -> Counter[int]:
    """How many results each submission got stored, from the workers' JSON log lines."""
    stored: Counter[int] = Counter()
    for log in logs:
        for line in log.read_text(errors="replace").splitlines():
            if '"grading.result_stored"' not in line:
                continue
            entry = json.loads(line[line.index("{") :])
            stored[int(entry["submission_id"])] += 1
    return stored


@pytest.mark.parametrize("fault", ["worker_sigkill", "redis_restart", "database_locked", "sandbox_killed"])
def test_every_submission_is_graded_exactly_once_through_a_fault(fault: str, pipeline: Pipeline) -> None:
    user = User.objects.create_user("cand", password="pw-cand-12345")
    challenge = Challenge.objects.get(slug="add-numbers")
    expected = _submit_all(user, challenge, SUBMISSIONS)
    _wait(_grading_in_progress, 240, "grading to be under way")

    expected |= _inject(fault, pipeline, user, challenge)

    _wait(lambda: _done() == len(expected), ALL_DONE_WITHIN, f"all {len(expected)} submissions to be done after {fault}")
    rows = {s.pk: s for s in Submission.objects.filter(pk__in=expected)}
    wrong = {pk: (rows[pk].verdict, rows[pk].message[:200]) for pk, verdict in expected.items() if rows[pk].verdict != verdict}
    assert not wrong, f"submissions graded differently from what their code deserves: {wrong}"
    for pk, verdict in expected.items():
        assert rows[pk].score == (100.0 if verdict == "accepted" else 0.0), (pk, rows[pk].score)

    # Exactly one stored result each (the fencing token forbids a second); a
    # late or duplicate delivery finds it done and changes nothing.
    stored = _stored_results(pipeline.logs)
    assert {pk: n for pk, n in stored.items() if n != 1} == {}
    assert set(stored) == set(expected)

    # A leftover whose owner died after the workers' first sweep (as a SIGKILLed
    # worker still exiting when its successor starts): a clean stop sweeps again.
    late = pipeline.sandbox_tmp() / f"{HOST_DIR_PREFIX}{dead_owner_token()}-late"
    (late / "etc").mkdir(parents=True)

    # Nothing left behind once the workers stop: no sandbox process, scratch folder or cgroup.
    for worker in pipeline.workers:
        worker.stop()
    _wait(lambda: not _sandbox_processes(str(pipeline.sandbox_tmp())), 30, "sandbox processes to go")
    # A killed worker's leftovers are removed by its successor's backend (it sweeps orphans at start).
    assert [p.name for p in pipeline.sandbox_tmp().glob("mlprep-sbx-*")] == []
    assert _cgroups_of(pipeline.cgroup_parent) == []
