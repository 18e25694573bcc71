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


def test_spare_cores_are_only_free_ones(four_cores: Path) -> None:
    with cpus.lease(1.0, spare=2) as wide:
        assert len(wide.cpus) == 3  # its own core and two spare
        with cpus.lease(1.0, spare=3) as second:
            assert len(second.cpus) == 1 and not set(second.cpus) & set(wide.cpus)  # one core left free, and no spare
            with cpus.lease(1.0, spare=3) as third:
                assert len(third.cpus) == 1  # oversubscribed: a core in turn, and never a spare


def test_spare_cores_come_back_with_the_lease(four_cores: Path) -> None:
    with cpus.lease(1.0, spare=3) as everything:
        assert everything.cpus == [0, 1, 2, 3]
    with cpus.lease(1.0, spare=3) as again:
        assert again.cpus == [0, 1, 2, 3]


def test_probes_at_once_is_every_core_unless_said(four_cores: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SANDBOX_PROBES_AT_ONCE", raising=False)
    assert cpus.probes_at_once_limit() == 4
    monkeypatch.setenv("SANDBOX_PROBES_AT_ONCE", "1")
    assert cpus.probes_at_once_limit() == 1
    monkeypatch.setenv("SANDBOX_PROBES_AT_ONCE", "two")
    with pytest.raises(ValueError, match="SANDBOX_PROBES_AT_ONCE must be a whole number"):
        cpus.probes_at_once_limit()


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


def test_a_bad_probes_at_once_setting_stops_the_backend_at_its_start(monkeypatch: pytest.MonkeyPatch) -> None:
    from sandbox import SandboxStartError, get_backend

    monkeypatch.setenv("SANDBOX_PROBES_AT_ONCE", "all of them")
    with pytest.raises(SandboxStartError, match="SANDBOX_PROBES_AT_ONCE must be a whole number of probes, not 'all of them'"):
        get_backend("a-backend-never-made")
