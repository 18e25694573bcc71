"""Probes run on the cores their job leased (sandbox/cpus.py, the runner's ``_pin``), on each real backend."""

from __future__ import annotations

import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader.grade import GradeResult
from sandbox import cpus
from tests.helpers import grade

# Each probe reports the cores it may run on.
REPORT_CORES = """
import os

def add(a, b):
    raise RuntimeError(f"cores={sorted(os.sched_getaffinity(0))}")
"""


def cores_seen(result: GradeResult) -> set[tuple[int, ...]]:
    seen = set()
    for probe in result.probes:
        found = re.search(r"cores=\[([0-9, ]*)\]", probe.message)
        assert found, probe.message
        seen.add(tuple(int(c) for c in found.group(1).split(",")))
    return seen


@pytest.fixture
def private_leases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Leases of this test alone: another grading process on the host must not change what it sees.

    One probe at a time: side by side on spare cores (test_probes_side_by_side.py) each probe has a core of its own.
    """
    monkeypatch.setattr(cpus, "LOCK_DIR", tmp_path / "leases")
    monkeypatch.delenv("SANDBOX_PIN_CPUS", raising=False)
    monkeypatch.setenv("SANDBOX_PROBES_AT_ONCE", "1")


def test_every_probe_of_a_job_runs_on_one_core(backend: str, private_leases: None) -> None:
    seen = cores_seen(grade(REPORT_CORES, backend=backend))
    assert len(seen) == 1, seen
    (cores,) = seen
    assert len(cores) == 1 and cores[0] in os.sched_getaffinity(0)


def test_jobs_running_at_once_run_on_different_cores(backend: str, private_leases: None, monkeypatch: pytest.MonkeyPatch) -> None:
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs a host with two cores")
    grade(REPORT_CORES, backend=backend)  # the reference's expectations cached: each grading below runs one job
    # Neither job starts before both hold their lease: the two surely run at once.
    both_leased = threading.Barrier(2, timeout=120)
    lease = cpus.lease

    def lease_then_meet(count: float, spare: int = 0) -> cpus.CpuLease:
        held = lease(count, spare)
        both_leased.wait()
        return held

    monkeypatch.setattr(cpus, "lease", lease_then_meet)
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda _: grade(REPORT_CORES, backend=backend), range(2)))
    first, second = (cores_seen(r) for r in results)
    assert len(first) == len(second) == 1
    assert first.isdisjoint(second), (first, second)


def test_without_pinning_a_probe_may_run_anywhere(backend: str, private_leases: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDBOX_PIN_CPUS", "0")
    (cores,) = cores_seen(grade(REPORT_CORES, backend=backend))
    assert len(cores) == len(os.sched_getaffinity(0))
