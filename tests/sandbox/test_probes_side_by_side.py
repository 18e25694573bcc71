"""A job's probes side by side on spare cores (the runner's ``_run_children``, ``RunnerSandbox._lease``), on each real backend.

With cores no other job holds, a submission's probes run at once, each on a
core of its own, and the grade is the one they get one at a time; with no
spare core they run one at a time, as before.
"""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path

import pytest

from grader.grade import GradeResult
from grader.package import Package
from sandbox import cpus
from sandbox.backend import SandboxLimits
from sandbox.session import RunnerSandbox
from tests.helpers import grade, package_with

needs_two_cores = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs a host with two cores")

# Ten probes; each asks the solution to act one way. The reference answers
# every one; the candidates below misbehave in as many ways as a probe can end.
# The first probe runs alone; the two memory probes come next, so that side
# by side they run together.
KINDS = ("first", "memory", "memory_too", "value", "wrong", "raises", "prints", "exits", "aborts", "sleeps")
PROBE = '''
@probe(category="values")
def acts_KIND(solution):
    """The solution acts: KIND."""
    return solution.act("KIND")
'''
PROBES = "from probekit import probe\n" + "".join(PROBE.replace("KIND", kind) for kind in KINDS)

REFERENCE = """
def act(kind):
    return {"kind": kind, "answer": 42}
"""

MISBEHAVING = """
import os
import sys
import time

import numpy as np


def act(kind):
    if kind == "wrong":
        return {"kind": kind, "answer": 41}
    if kind == "raises":
        raise ValueError("no answer for " + kind)
    if kind == "prints":
        print("thinking about", kind)
    if kind == "exits":
        sys.exit(3)
    if kind == "aborts":
        os.abort()
    if kind == "sleeps":
        time.sleep(0.5)
    if kind.startswith("memory"):
        block = np.ones(160 * 1024 * 1024 // 8)  # touched: 160 MB of the sandbox's 256; two at once do not fit
        time.sleep(0.5)
        del block
    return {"kind": kind, "answer": 42}
"""

# Each probe says when it ran and on which cores, in its error message.
WINDOWS = """
import os
import time


def act(kind):
    start = time.time()
    time.sleep(0.6)
    raise RuntimeError(f"window={start:.3f},{time.time():.3f} cores={sorted(os.sched_getaffinity(0))}")
"""


def act_package(tmp_path: Path) -> Package:
    toml = (Path(__file__).resolve().parents[1] / "fixtures/packages/demo/add-numbers/challenge.toml").read_text()
    return package_with(
        tmp_path,
        probes__hidden_py=PROBES,
        probes__public_py=PROBES,
        reference__solution_py=REFERENCE,
        challenge_toml=toml.replace("probe_seconds = 3\n", "probe_seconds = 60\n"),
    )


@pytest.fixture
def private_leases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Leases of this test alone, so every core of the host is free to it whatever else runs."""
    monkeypatch.setattr(cpus, "LOCK_DIR", tmp_path / "leases")
    monkeypatch.delenv("SANDBOX_PIN_CPUS", raising=False)
    monkeypatch.delenv("SANDBOX_PROBES_AT_ONCE", raising=False)


def windows(result: GradeResult) -> list[tuple[float, float, tuple[int, ...]]]:
    seen = []
    for probe in result.probes:
        found = re.search(r"window=([0-9.]+),([0-9.]+) cores=\[([0-9, ]*)\]", probe.message)
        assert found, probe.message
        seen.append((float(found.group(1)), float(found.group(2)), tuple(int(c) for c in found.group(3).split(","))))
    return sorted(seen)


def overlapping(spans: list[tuple[float, float, tuple[int, ...]]]) -> bool:
    return any(later[0] < earlier[1] for earlier, later in itertools.pairwise(spans))


def comparable(result: GradeResult) -> list[tuple[object, ...]]:
    """What a grade says of each probe, less the times it took."""
    return [(p.name, p.status, p.passed, re.sub(r"[0-9.]+ ?m?s\b", "<time>", p.message or "")) for p in result.probes] + [
        (result.score, result.verdict)
    ]


@needs_two_cores
def test_with_spare_cores_the_probes_run_at_once_each_on_a_core_of_its_own(backend: str, tmp_path: Path, private_leases: None) -> None:
    spans = windows(grade(WINDOWS, backend=backend, package=act_package(tmp_path)))
    assert len(spans) == len(KINDS)
    first, rest = spans[0], spans[1:]
    assert all(first[1] <= later[0] for later in rest), spans  # the first alone: shared work (a build) is done there once
    assert overlapping(rest), spans
    assert all(len(cores) == 1 for _, _, cores in spans), spans  # each on one core, as a job of one core runs them
    assert len({cores for _, _, cores in spans}) == 2, spans


@needs_two_cores
def test_with_no_spare_core_they_run_one_at_a_time(backend: str, tmp_path: Path, private_leases: None) -> None:
    package = act_package(tmp_path)
    grade(WINDOWS, backend=backend, package=package)  # expectations cached: the grading below leases for one job only
    others = cpus.lease(len(os.sched_getaffinity(0)) - 1)  # another job holds every core but one
    try:
        spans = windows(grade(WINDOWS, backend=backend, package=package))
    finally:
        others.release()
    assert not overlapping(spans), spans
    assert len({cores for _, _, cores in spans}) == 1, spans


@needs_two_cores
def test_side_by_side_grades_as_one_at_a_time(backend: str, tmp_path: Path, private_leases: None, monkeypatch: pytest.MonkeyPatch) -> None:
    package = act_package(tmp_path)
    side_by_side = grade(MISBEHAVING, backend=backend, package=package)
    monkeypatch.setenv("SANDBOX_PROBES_AT_ONCE", "1")
    one_at_a_time = grade(MISBEHAVING, backend=backend, package=package)
    assert comparable(side_by_side) == comparable(one_at_a_time)
    by_name = {p.name: p for p in side_by_side.probes}
    passing = {"first", "value", "prints", "sleeps", "memory", "memory_too"}
    assert {n: by_name[f"acts_{n}"].passed for n in KINDS} == {n: n in passing for n in KINDS}
    # The two memory probes each fit the sandbox alone, not together: side by
    # side one was killed by the limit and ran again alone, and both passed.


class _Widened:
    """Just what ``RunnerSandbox._lease`` reads of its sandbox: the job's CPU share, and ``widen``."""

    def __init__(self) -> None:
        self.limits = SandboxLimits(wall_seconds=10, memory_mb=256, cpus=1.0)
        self.widened: list[int] = []

    def widen(self, cores: int) -> bool:
        self.widened.append(cores)
        return True


@needs_two_cores
@pytest.mark.parametrize(("probes", "side_by_side"), [(1, 1), (2, 1), (3, 2)])
def test_spare_cores_are_asked_only_for_probes_after_the_first(probes: int, side_by_side: int, private_leases: None) -> None:
    # The first probe runs alone: a two-probe job has nothing to run beside
    # another, and must leave the other core to the next grading.
    sandbox = _Widened()
    job = {"probes_list": [{"name": f"p{i}", "timeout": 1.0} for i in range(probes)]}
    cores, at_once = RunnerSandbox._lease(sandbox, [job])  # type: ignore[arg-type]
    try:
        assert (at_once, len(cores.cpus)) == (side_by_side, side_by_side)
        assert sandbox.widened == ([side_by_side] if side_by_side > 1 else [])
    finally:
        cores.release()
