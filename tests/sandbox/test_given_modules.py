"""given/*.py: read-only modules shipped in the job and imported as given.<name> by solution, probe_common and probes."""

from __future__ import annotations

import shutil
from pathlib import Path

from grader import Package, load_package_dir
from grader.execute import execute
from sandbox import get_backend
from tests.helpers import ADD_NUMBERS, grade, statuses

ARITH = '''
"""Arithmetic the candidate reads and imports."""

import numpy as np

SCALE = 3


def checked(a):
    """The array as float, refusing anything that is not 1-D."""
    a = np.asarray(a)
    if a.ndim != 1:
        raise ValueError("checked() takes 1-D arrays")
    return a
'''

# A given module importing another one, by its package name.
HELPERS = '''
from given.arith import SCALE


def triple(a):
    return a * SCALE
'''

COMMON = '''
import numpy as np
from given.helpers import triple


def pair(seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=4), rng.normal(size=4)
'''

PUBLIC = '''
import numpy as np
from probekit import probe
from probe_common import pair
from given.arith import SCALE


@probe(category="values", hints=["values"])
def scaled_sum(solution):
    """The sum of two arrays, tripled."""
    return solution.add(*pair(0)) / SCALE


@probe(category="values", hints=["values"])
def two_dimensional(solution):
    """2-D arrays are refused by the given checker (the reference too: only the traceback is looked at)."""
    return solution.add(np.ones((2, 2)), np.ones((2, 2)))
'''

HIDDEN = '''
import importlib
import inspect
import sys

import given
from probekit import probe
from probe_common import pair, triple
import given.arith


@probe(category="values", weight=2, hints=["values"])
def a_tamper(solution):
    """The submission rewrites and replaces the given module in its own process."""
    written = solution.tamper()
    return {"scale_here": sys.modules["given.arith"].SCALE, "written": written}


@probe(category="values", hints=["values"])
def b_next_probe(solution):
    """The next probe sees the package's given modules, whatever the one before did."""
    try:
        importlib.import_module("given.planted")
        planted = "imported"
    except ModuleNotFoundError:
        planted = "not found"
    return {
        "scale": given.arith.SCALE,
        "triple": triple(1),
        "path": list(given.__path__),
        "source_intact": "SCALE = 3" in inspect.getsource(given.arith),
        "planted": planted,
        "sum": solution.add(*pair(1)),
    }
'''

SOLUTION = '''
import os
import sys
import types

from given.arith import checked
from given.helpers import triple


def add(a, b):
    return triple(checked(a) + checked(b))


def tamper():
    """Everything a submission can do to the given modules from inside its own probe."""
    planted = "SCALE = 999\\n"
    targets = [
        "/tmp/work/job/given/arith.py",
        "/tmp/work/job/given/planted.py",
        "/tmp/work/job/given/__init__.py",
        "/tmp/given/arith.py",
        "/tmp/given/__init__.py",
        "/tmp/given.py",
    ]
    for i in range(4):  # the next probes' working folders, and their given/ beside them
        targets += [f"/tmp/work/probe-{i}/given/arith.py", f"/tmp/work/probe-{i}/given/__init__.py", f"/tmp/work/probe-{i}/given.py"]
    targets += [os.path.join(p or ".", "given.py") for p in sys.path]
    written = []
    for path in targets:
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if os.path.exists(path):
                os.chmod(path, 0o644)
            with open(path, "w") as fh:
                fh.write(planted)
            written.append(path)
        except OSError:
            pass
    fake = types.ModuleType("given.arith")
    fake.SCALE = 999
    sys.modules["given.arith"] = fake
    sys.modules["given"].arith = fake
    return written
'''


def _package(tmp_path: Path) -> Package:
    folder = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, folder)
    (folder / "given").mkdir()
    (folder / "given" / "arith.py").write_text(ARITH)
    (folder / "given" / "helpers.py").write_text(HELPERS)
    (folder / "probes" / "common.py").write_text(COMMON)
    (folder / "probes" / "public.py").write_text(PUBLIC)
    (folder / "probes" / "hidden.py").write_text(HIDDEN)
    (folder / "reference" / "solution.py").write_text(SOLUTION)
    (folder / "starter" / "solution.py").write_text("def add(a, b):\n    raise NotImplementedError\n")
    shutil.rmtree(folder / "solutions")
    return load_package_dir(folder)


def test_solution_probe_common_and_probes_import_the_given_modules(tmp_path: Path, backend: str) -> None:
    package = _package(tmp_path)
    hidden = grade(SOLUTION, backend=backend, package=package)  # the reference runs with them too
    assert hidden.verdict == "accepted", hidden.to_dict()
    wrong = grade(SOLUTION.replace("return triple(", "return -triple("), backend=backend, package=package)
    assert statuses(wrong) == {"a_tamper": "accepted", "b_next_probe": "wrong_answer"}


def test_a_submission_cannot_change_what_the_next_probe_sees(tmp_path: Path, backend: str) -> None:
    package = _package(tmp_path)
    run = execute(package, SOLUTION.encode(), public=False, backend=get_backend(backend))
    tamper, after = run.probes["a_tamper"], run.probes["b_next_probe"]
    assert tamper.status == "ok" and after.status == "ok", (tamper, after)
    # The tampering took: its own process saw the fake module, and the
    # files the runner wrote for tracebacks were overwritten.
    assert tamper.observation["scale_here"] == 999
    assert "/tmp/work/job/given/arith.py" in tamper.observation["written"]
    assert "/tmp/work/probe-1/given/arith.py" in tamper.observation["written"]
    observed = after.observation
    assert observed["scale"] == 3 and observed["triple"] == 3
    assert observed["path"] == []
    assert observed["source_intact"] is True
    assert observed["planted"] == "not found"


def test_a_traceback_shows_given_frames_by_their_package_path(tmp_path: Path, backend: str) -> None:
    package = _package(tmp_path)
    run = execute(package, SOLUTION.encode(), public=True, backend=get_backend(backend))
    assert run.probes["scaled_sum"].status == "ok", run.probes["scaled_sum"]
    failed = run.probes["two_dimensional"]
    assert failed.status == "error" and failed.exc_type == "ValueError", failed
    assert 'File "given/arith.py"' in failed.traceback
    assert 'File "solution.py"' in failed.traceback
    assert "/tmp/work/job/given" not in failed.traceback
