"""probes/common.py: machinery both probe files share, shipped in the job and imported as probe_common."""

from __future__ import annotations

from pathlib import Path

from grader import load_package_dir
from tests.helpers import grade, package_with

COMMON = '''
import numpy as np

CALLS = []


def pair(seed, shape, dtype="float64"):
    """Two arrays of the same shape, the same for every run of a probe."""
    CALLS.append(seed)
    rng = np.random.default_rng(seed)
    return rng.normal(size=shape).astype(dtype), rng.normal(size=shape).astype(dtype)
'''

PUBLIC = '''
from probekit import probe
from probe_common import pair


@probe(category="values", hints=["values"])
def small(solution):
    """Two small float32 arrays."""
    return solution.add(*pair(0, (4,), "float32"))
'''

HIDDEN = '''
import numpy as np
from probekit import probe
import probe_common
from probe_common import pair


@probe(category="values", weight=2, hints=["values"])
def floats(solution):
    """float64 sums."""
    return solution.add(*pair(1, (3, 5)))


@probe(category="values", hints=["values"])
def fresh_for_every_probe(solution):
    """Each probe's process imports probe_common afresh: no state leaks from the probe before."""
    solution.add(*pair(2, (2,)))
    return list(probe_common.CALLS)
'''


def _package(tmp_path: Path):  # type: ignore[no-untyped-def]
    return package_with(tmp_path, probes__common_py=COMMON, probes__public_py=PUBLIC, probes__hidden_py=HIDDEN)


def test_the_package_carries_common_py_and_its_version_covers_it(tmp_path: Path) -> None:
    package = _package(tmp_path)
    assert package.common_source is not None and b"def pair" in package.common_source
    changed = load_package_dir(tmp_path / "demo" / "add-numbers")
    (tmp_path / "demo" / "add-numbers" / "probes" / "common.py").write_text(COMMON + "\n# edited\n")
    assert load_package_dir(tmp_path / "demo" / "add-numbers").version != changed.version


def test_both_probe_files_import_probe_common_in_the_sandbox(tmp_path: Path, backend: str) -> None:
    package = _package(tmp_path)
    honest = "import numpy as np\n\ndef add(a, b):\n    return np.add(a, b)\n"
    hidden = grade(honest, backend=backend, package=package)
    assert hidden.verdict == "accepted", hidden.to_dict()
    assert grade(honest, backend=backend, package=package, public=True).verdict == "accepted"
    wrong = grade("def add(a, b):\n    return a - b\n", backend=backend, package=package)
    assert {p.name: p.status for p in wrong.probes}["floats"] == "wrong_answer"
