"""Shared test helpers: fixture packages and grading through a chosen backend."""

from __future__ import annotations

import math
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np

from grader import GradeResult, Package, grade_submission, load_package_dir
from sandbox.runner.codec import TaggedArray

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "packages"
ADD_NUMBERS = FIXTURES / "demo" / "add-numbers"


def add_numbers() -> Package:
    return load_package_dir(ADD_NUMBERS)


def package_with(tmp_path: Path, **replace: str) -> Package:
    """A copy of add-numbers with files replaced (keys use '__' for '/': probes__hidden_py)."""
    target = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, target)
    for key, text in replace.items():
        rel = key.replace("__", "/").replace("_py", ".py").replace("_toml", ".toml")
        (target / rel).write_text(textwrap.dedent(text))
    return load_package_dir(target)


def patient_add_numbers(tmp_path: Path) -> Package:
    """add-numbers with a minute per probe instead of 3 s: for a test whose verdict must not depend on how loaded the machine is
    (heavy work that must finish, or a probe that blocks until the test acts)."""
    toml = (ADD_NUMBERS / "challenge.toml").read_text()
    assert "probe_seconds = 3\n" in toml
    return package_with(tmp_path, challenge_toml=toml.replace("probe_seconds = 3\n", "probe_seconds = 60\n"))


#: The grading task's backoffs before it grades a load-faulted submission again (web/submissions/tasks.py).
LOAD_BACKOFFS = (2, 4, 8)


def grade(code: str, *, backend: str, public: bool = False, package: Package | None = None, load_retries: int = len(LOAD_BACKOFFS)) -> GradeResult:
    """Grade as the worker does: a run the host overloaded (HostLoadError, the suite's other worker busy on the same
    two cores) is graded again after the worker's backoffs, up to ``load_retries`` times (at most the worker's three); the last fault is raised.
    Tests of the load fault itself pass 0 and count the faults."""
    from grader.errors import HostLoadError
    from sandbox import get_backend

    def run() -> GradeResult:
        return grade_submission(package or add_numbers(), textwrap.dedent(code), public=public, backend=get_backend(backend))

    for backoff in LOAD_BACKOFFS[:load_retries]:
        try:
            return run()
        except HostLoadError:
            time.sleep(backoff)
    return run()  # the last try: its fault is raised


def statuses(result: GradeResult) -> dict[str, str]:
    return {p.name: p.status for p in result.probes}


def _docker_engine_answers() -> bool:
    # Knock on the engine's socket first: docker-py leaves the socket of a
    # refused connection open, which fails the run under -W error.
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if host.startswith("unix://"):
        with socket.socket(socket.AF_UNIX) as knock:
            knock.settimeout(5)
            try:
                knock.connect(host.removeprefix("unix://"))
            except OSError:
                return False
    try:
        import docker

        client = docker.from_env(version="auto", timeout=5)
        client.ping()
        client.close()
    except Exception:
        return False
    return True


def real_backends() -> list[str]:
    """bwrap and docker wherever they can run; in CI both, so a missing one fails loudly instead of skipping."""
    names = []
    if shutil.which("bwrap") or os.environ.get("CI"):
        names.append("bwrap")
    if os.environ.get("CI") or _docker_engine_answers():
        names.append("docker")
    return names


# The order in which a package's shared validation runs on the backends
# (grader/validate.py: Share; the first records the reference): docker,
# production's backend, first. tests/conftest.py sorts the validations by it.
BACKEND_ORDER = ["docker", "bwrap"]


def ordered_backends() -> list[str]:
    """:func:`real_backends` in :data:`BACKEND_ORDER`."""
    return sorted(real_backends(), key=BACKEND_ORDER.index)


def dead_owner_token() -> str:
    """The owner token (sandbox/owners.py) of a process that ran and was reaped: what a killed worker's leftovers carry."""
    from sandbox.owners import owner_token

    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    token = owner_token(proc.pid)
    proc.kill()
    proc.wait()
    return token


def same_observation(a: Any, b: Any) -> bool:
    """Structural equality that understands TaggedArray (dtype, source, numpy dtype, shape, values), NaN and -0.0."""
    if isinstance(a, TaggedArray) or isinstance(b, TaggedArray):
        return (
            isinstance(a, TaggedArray)
            and isinstance(b, TaggedArray)
            and (a.dtype, a.source, a.data.dtype, a.data.shape) == (b.dtype, b.source, b.data.dtype, b.data.shape)
            and np.array_equal(a.data, b.data, equal_nan=a.data.dtype.kind in "fc")
        )
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_observation(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_observation(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


# Every kind of value a decoded observation holds (sandbox/runner/codec.py).
DECODED_OBSERVATIONS: dict[str, Any] = {
    "plain": [None, True, False, 0, -7, 2**70, -(2**64), 1.5, -0.0, "text", ""],
    "specials": [math.nan, math.inf, -math.inf],
    "float32": TaggedArray(np.arange(6, dtype=np.float32).reshape(2, 3), "float32", "torch"),
    "bfloat16": TaggedArray(np.array([1.0, np.nan, -np.inf], dtype=np.float32), "bfloat16", "torch"),  # widened data, real name
    "float16": TaggedArray(np.array([0.5, 65504.0], dtype=np.float16), "float16", "numpy"),
    "int64": TaggedArray(np.array([1, -(2**62)], dtype=np.int64), "int64", "numpy"),
    "bool": TaggedArray(np.array([True, False]), "bool", "numpy"),
    "complex": TaggedArray(np.array([1 + 2j]), "complex128", "tensorflow"),
    "zero_d": TaggedArray(np.array(2.5), "float64", "numpy"),
    "empty": TaggedArray(np.zeros((0, 4), dtype=np.float16), "float16", "numpy"),
    "nested": {
        "grad": [TaggedArray(np.ones(2), "float64", "numpy"), {"deep": {"x": [1, math.nan]}}],
        # keys that look like the codec's markers stay plain keys
        "$array": 0,
        "$map": {},
        "$float": "nan",
        "$bigint": "1",
    },
    "empty_dict": {},
    "empty_list": [],
}
