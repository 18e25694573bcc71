"""The tests' in-memory backend (tests/fake_backend.py) says what the real runner says, for the same code.

The web tests grade on the fake; this holds it to the real thing. The same
job runs in a real sandbox and on the fake scripted the way the code
behaves, and both streams are decoded by the grader (``run_job``): every
probe must come back with the same status, observation, message, exception
type, traceback and output. A change to the runner's frames that the fake
does not follow fails here, not silently in the web tests.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from grader.execute import OBSERVATION_BYTES, OUTPUT_BYTES, Execution, ProbeRun, run_job
from sandbox import SandboxLimits, get_backend
from sandbox.runner.codec import TaggedArray
from tests.fake_backend import FakeBackend, crashed, exited, ok, raised, syntax_error, timed_out

SOLUTION = """\
import os
import signal
import time

import numpy as np


def add(a, b):
    if a == "boom":
        raise ValueError("no <b>booms</b> here")
    if a == "exit":
        os._exit(3)
    if a == "segfault":
        os.kill(os.getpid(), signal.SIGSEGV)
    if a == "hang":
        time.sleep(60)
    if a == "array":
        return np.arange(4, dtype=np.float32) + b
    print("adding", a, b)
    return {"sum": a + b, "half": a / 2, "pair": [a, b]}
"""

PROBES = """\
from probekit import probe


@probe()
def value(solution):
    return solution.add(2, 3)


@probe()
def array(solution):
    return solution.add("array", 1)


@probe()
def error(solution):
    return solution.add("boom", 0)


@probe()
def exits(solution):
    return solution.add("exit", 0)


@probe()
def segfault(solution):
    return solution.add("segfault", 0)


@probe()
def hangs(solution):
    return solution.add("hang", 0)
"""

# The probe that hangs is killed at its own time limit; the others finish at once.
TIMEOUTS = {"hangs": 1.0}
NAMES = ["value", "array", "error", "exits", "segfault", "hangs"]


def job(solution: str) -> dict[str, Any]:
    return {
        "public": False,
        "probes_list": [{"name": name, "timeout": TIMEOUTS.get(name, 10.0)} for name in NAMES],
        "limits": {"output_bytes": OUTPUT_BYTES, "observation_bytes": OBSERVATION_BYTES},
        "sources": {"solution": solution, "probes": PROBES},
    }


def run(backend: Any, solution: str) -> Execution:
    return run_job(backend, "python", SandboxLimits(wall_seconds=60, memory_mb=256), job(solution), set(NAMES))


def comparable(probe: ProbeRun) -> dict[str, Any]:
    observation = probe.observation
    if isinstance(observation, TaggedArray):
        observation = (observation.data.tolist(), str(observation.data.dtype), observation.dtype, observation.source)
    return {
        "status": probe.status, "observation": observation, "message": probe.message,
        "exc_type": probe.exc_type, "traceback": probe.traceback, "stdout": probe.stdout,
    }  # fmt: skip


def test_the_fake_answers_each_probe_as_the_runner_does(backend: str) -> None:
    real = run(get_backend(backend), SOLUTION)
    fake = FakeBackend()
    fake.script(
        SOLUTION,
        value=ok({"sum": 5, "half": 1.0, "pair": [2, 3]}, stdout="adding 2 3\n"),
        array=ok(np.arange(4, dtype=np.float32) + 1),
        error=raised("ValueError", "no <b>booms</b> here", line=10),
        exits=exited(3),
        segfault=crashed(),
        hangs=timed_out(),
    )
    scripted = run(fake, SOLUTION)

    assert list(real.probes) == list(scripted.probes) == NAMES
    for name in NAMES:
        assert comparable(scripted.probes[name]) == comparable(real.probes[name]), name
    assert (scripted.syntax_error, scripted.runner_died) == (real.syntax_error, real.runner_died) == (None, False)


def test_the_fake_reports_a_syntax_error_as_the_runner_does(backend: str) -> None:
    broken = "def add(a, b:\n    return a + b\n"
    real = run(get_backend(backend), broken)
    fake = FakeBackend()
    fake.script(broken, syntax_error("'(' was never closed", line=1, offset=8, text="def add(a, b:\n"))
    scripted = run(fake, broken)

    assert real.syntax_error is not None and scripted.syntax_error == real.syntax_error
    assert scripted.probes == real.probes == {}
