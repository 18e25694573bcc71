"""Core leases (sandbox/cpus.py): free cores first, shared across processes, released with the run."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sandbox import cpus


@pytest.fixture
def four_cores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Leases over four pretend cores, in a lock folder of this test's own."""
    monkeypatch.setattr(cpus, "LOCK_DIR", tmp_path / "leases")
    monkeypatch.setattr(cpus, "allowed_cpus", lambda: [0, 1, 2, 3])
    monkeypatch.delenv("SANDBOX_PIN_CPUS", raising=False)
    return tmp_path / "leases"


def test_jobs_running_at_once_get_different_cores(four_cores: Path) -> None:
    leases = [cpus.lease(1.0) for _ in range(4)]
    assert sorted(c for lease in leases for c in lease.cpus) == [0, 1, 2, 3]
    for lease in leases:
        lease.release()


def test_a_job_beyond_the_cores_still_gets_one_without_a_lock(four_cores: Path) -> None:
    held = [cpus.lease(1.0) for _ in range(4)]
    extra = cpus.lease(1.0)
    assert len(extra.cpus) == 1 and extra.cpus[0] in (0, 1, 2, 3)
    extra.release()
    # Releasing a held core makes it the next free one.
    released = held.pop(1)
    released.release()
    freed = released.cpus
    with cpus.lease(1.0) as again:
        assert again.cpus == freed
    for lease in held:
        lease.release()


def test_a_share_above_one_core_leases_that_many(four_cores: Path) -> None:
    with cpus.lease(1.5) as two, cpus.lease(8.0) as rest:
        assert len(two.cpus) == 2
        assert len(rest.cpus) == 4  # never more than the host has
        assert set(rest.cpus) - set(two.cpus)  # the two free cores come first


def test_another_process_lease_is_respected(four_cores: Path) -> None:
    # A second worker process on the same host holds cores 0-2 for as long as it runs.
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import fcntl, os, sys
            os.makedirs({str(four_cores)!r}, exist_ok=True)
            fds = []
            for cpu in (0, 1, 2):
                fd = os.open(os.path.join({str(four_cores)!r}, f"{{cpu}}.lock"), os.O_RDWR | os.O_CREAT)
                fcntl.flock(fd, fcntl.LOCK_EX)
                fds.append(fd)
            print("held", flush=True)
            sys.stdin.read()
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        for _ in range(3):  # whatever core the turn starts at, the free one is found
            with cpus.lease(1.0) as lease:
                assert lease.cpus == [3]
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)
        if holder.stdout is not None:
            holder.stdout.close()
    # The holder's leases ended with it.
    leases = [cpus.lease(1.0) for _ in range(4)]
    assert sorted(c for lease in leases for c in lease.cpus) == [0, 1, 2, 3]
    for lease in leases:
        lease.release()


def test_pinning_can_be_turned_off(four_cores: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDBOX_PIN_CPUS", "0")
    with cpus.lease(1.0) as lease:
        assert lease.cpus == []
    assert not four_cores.exists()
