"""Warm pools: a warm sandbox is used once, a dead one is never handed out, job limits apply."""

from __future__ import annotations

import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader import grade_submission
from sandbox import SandboxLimits, get_backend
from sandbox.pool import PooledBackend, parse_sizes
from tests.helpers import add_numbers, patient_add_numbers


@pytest.fixture
def pooled(backend: str) -> Iterator[PooledBackend]:
    pool = PooledBackend(get_backend(backend), {"python": 1})
    assert pool.fill(120), "the pool never filled"
    yield pool
    pool.close()


def test_parse_sizes_reads_profiles_and_names_bad_parts() -> None:
    assert parse_sizes("python=1, torch=2") == {"python": 1, "torch": 2}
    assert parse_sizes("") == {}
    with pytest.raises(ValueError, match="unknown profile 'cuda'"):
        parse_sizes("cuda=1")
    with pytest.raises(ValueError, match="expected profile=count"):
        parse_sizes("torch")


def test_a_warm_sandbox_grades_and_is_replaced(pooled: PooledBackend) -> None:
    package = add_numbers()
    first = grade_submission(package, package.reference_code, public=False, backend=pooled)
    assert first.verdict == "accepted"
    assert pooled.stats["warm"] >= 1
    assert pooled.fill(120), "the pool refills behind a taken sandbox"
    second = grade_submission(package, package.reference_code, public=False, backend=pooled)
    assert second.verdict == "accepted"


def test_a_dead_warm_sandbox_is_never_handed_out(pooled: PooledBackend) -> None:
    with pooled._lock:
        victim = pooled._ready["python"][0]
    victim.destroy()  # dies while waiting in the pool
    assert not victim.alive()
    package = add_numbers()
    result = grade_submission(package, package.reference_code, public=False, backend=pooled)
    assert result.verdict == "accepted"
    assert pooled.stats["dead"] == 1


def test_a_warm_sandbox_whose_stream_ended_is_replaced_before_any_grading_finds_it(pooled: PooledBackend) -> None:
    """A launcher restart cuts every warm sandbox's stream at once: the pool drops them within seconds, so the
    ready counts health reports stay true, and starts new ones."""
    with pooled._lock:
        victim = pooled._ready["python"][0]
    victim.kill_all()  # the runner dies; its stream ends
    assert victim.stream.eof.wait(30)  # type: ignore[attr-defined]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and pooled.stats["dead"] == 0:
        time.sleep(0.2)
    assert pooled.stats["dead"] == 1 and pooled.stats["warm"] == 0  # found by the pool, not by a grading
    with pooled._lock:
        assert all(sandbox is not victim for sandbox in pooled._ready["python"])
    assert pooled.fill(120), "a new warm sandbox replaces it"


def test_the_jobs_memory_limit_replaces_the_pools_default(pooled: PooledBackend, tmp_path: Path) -> None:
    # The pool starts python sandboxes with 512 MB; this job allows 256 MB.
    hog = textwrap.dedent(
        """
        def add(a, b):
            block = bytearray(400 * 1024 * 1024)
            block[::4096] = b"x" * len(block[::4096])
            return a + b
        """
    )
    # Probes of a minute: touching 400 MB against a 256 MB limit is slow on a loaded machine, and must end by the limit.
    package = patient_add_numbers(tmp_path)
    assert package.limits.memory_mb == 256
    result = grade_submission(package, hog, public=False, backend=pooled)
    assert result.verdict == "memory_limit", result.to_dict()
    assert pooled.stats["warm"] >= 1


def test_without_a_pool_every_sandbox_starts_cold(backend: str) -> None:
    pool = PooledBackend(get_backend(backend), {})
    sandbox = pool.start("python", SandboxLimits(wall_seconds=10, memory_mb=256))
    sandbox.destroy()
    assert pool.stats == {"warm": 0, "cold": 1, "dead": 0, "start_failures": 0}
