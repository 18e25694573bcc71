"""grader/execute.py: a run whose wall clock ran out is the candidate's time limit unless the host slowed its probes."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.errors import HostLoadError
from grader.execute import Execution, ProbeRun, _refuse_a_wall_clock_the_host_ran_out, probe_timeout, sandbox_limits
from sandbox.backend import RunOutcome
from sandbox.runner.host_load import LOAD_STRETCH
from tests.helpers import ADD_NUMBERS, add_numbers, package_with

TIMEOUTS = {"first": 3.0, "second": 3.0, "third": 3.0}


def execution(**durations_ms: int) -> Execution:
    return Execution(probes={name: ProbeRun(name, "ok", duration_ms=ms) for name, ms in durations_ms.items()})


def test_a_run_cut_off_after_a_probe_was_given_time_back_is_graded_again() -> None:
    # first ran 7 s against its 3 s limit: the runner gave it the host's share back, so the host took the run's time.
    with pytest.raises(HostLoadError, match="given time back"):
        _refuse_a_wall_clock_the_host_ran_out(RunOutcome(b"", timed_out=True), execution(first=7000, second=2900), TIMEOUTS)


def test_a_slow_solution_on_a_quiet_host_keeps_its_time_limit() -> None:
    # Every probe within its limit (a probe stopped at its limit ends a few milliseconds past it): the code's own time.
    _refuse_a_wall_clock_the_host_ran_out(RunOutcome(b"", timed_out=True), execution(first=3040, second=2990), TIMEOUTS)


def test_a_run_cut_off_after_the_host_took_a_share_of_every_probe_is_graded_again() -> None:
    # Load 20 on two cores: every probe slowed, none past its limit (none given time back), the run's clock ran out.
    slowed = execution(first=2500, second=2600, third=2400)
    for probe in slowed.probes.values():
        probe.host_ms = probe.duration_ms // 2
    with pytest.raises(HostLoadError, match=r"other processes took 50% of its probes' time"):
        _refuse_a_wall_clock_the_host_ran_out(RunOutcome(b"", timed_out=True), slowed, TIMEOUTS)


def test_a_slow_solution_on_a_lightly_loaded_host_keeps_its_time_limit() -> None:
    # The host took a tenth: the code's own time ran the clock out.
    slow = execution(first=2900, second=2950)
    for probe in slow.probes.values():
        probe.host_ms = probe.duration_ms // 10
    _refuse_a_wall_clock_the_host_ran_out(RunOutcome(b"", timed_out=True), slow, TIMEOUTS)
    # A runner's figure larger than the probe's own time counts as the probe's time at most.
    slow.probes["first"].host_ms = 10**9
    with pytest.raises(HostLoadError):
        _refuse_a_wall_clock_the_host_ran_out(RunOutcome(b"", timed_out=True), slow, TIMEOUTS)


def test_a_run_that_finished_is_never_refused() -> None:
    _refuse_a_wall_clock_the_host_ran_out(RunOutcome(b"", timed_out=False), execution(first=9000), TIMEOUTS)


def test_a_probe_that_ran_out_of_its_own_time_keeps_the_time_limit_on_a_loaded_host() -> None:
    # An endless loop: its first probe had its own 3 s (and 4 s the host took); the rest were cut off by the wall clock.
    slowed = execution(first=7000)
    slowed.probes["first"].status = "timeout"
    _refuse_a_wall_clock_the_host_ran_out(RunOutcome(b"", timed_out=True), slowed, TIMEOUTS)


def test_the_run_clock_leaves_room_for_every_probe_stretched_for_the_hosts_load() -> None:
    # add-numbers' public file: one 3 s probe. The runner may stretch it to 15 s of wall clock on a loaded host; a
    # clock sized for an idle host (3.5 s + slack) would take that time back from a correct solution.
    package = add_numbers()
    stretched = sum(LOAD_STRETCH * probe_timeout(package, spec) for spec in package.probes(True))
    assert sandbox_limits(package, True).wall_seconds >= stretched + 10


def test_the_run_clock_stays_within_the_packages_wall_seconds(tmp_path: Path) -> None:
    toml = (ADD_NUMBERS / "challenge.toml").read_text()
    package = package_with(tmp_path, challenge_toml=toml.replace("wall_seconds = 60", "wall_seconds = 20"))
    assert sandbox_limits(package, False).wall_seconds == 20
