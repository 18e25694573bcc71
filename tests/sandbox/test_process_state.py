"""Process-wide settings the candidate's import or calls leave changed fail the probe, in a real sandbox (process_state.py).

Each probe below calls one function of the solution; the functions that
switch a setting and leave it (grad mode, one thread, NumPy's warnings,
flush-to-zero, a dispatch mode entered) must come back as
``settings_changed`` naming it, and their twins that restore the setting
(a context manager, a ``finally``) as plain observations. The thread count
is the delicate one: the sandbox runs torch on one thread, so only the
stand-in count the candidate's file sees can show ``set_num_threads(1)``
left behind, and only a stand-in that moves between the import and the calls
can show a count put back to the one read at import; a probe's own thread
setting is not charged to the candidate.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader import load_package_dir
from grader.execute import execute
from grader.package import Package
from sandbox import get_backend
from sandbox.runner import process_state
from tests.helpers import ADD_NUMBERS

SOLUTION = """
import numpy as np
import torch


def leaves_grad_off():
    torch.set_grad_enabled(False)
    return 1


def no_grad_block():
    with torch.no_grad():
        return 1


def one_thread_left():
    torch.set_num_threads(1)
    return 1


def one_thread_restored():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return old
    finally:
        torch.set_num_threads(old)


IMPORT_COUNT = torch.get_num_threads()


def one_thread_restored_to_import_count():
    torch.set_num_threads(1)
    try:
        return IMPORT_COUNT
    finally:
        torch.set_num_threads(IMPORT_COUNT)


def numpy_silenced():
    np.seterr(all="ignore")
    return 1


def numpy_errstate():
    with np.errstate(all="ignore"):
        return float(np.float64(1.0) / np.float64(0.0))


def flush_denormal():
    torch.set_flush_denormal(True)
    return 1


def dispatch_mode_left_entered():
    from torch.utils._python_dispatch import TorchDispatchMode

    class Passing(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    Passing().__enter__()
    return 1
"""

CALLS = [
    "leaves_grad_off",
    "no_grad_block",
    "one_thread_left",
    "one_thread_restored",
    "one_thread_restored_to_import_count",
    "numpy_silenced",
    "numpy_errstate",
    "flush_denormal",
    "dispatch_mode_left_entered",
]

PUBLIC = (
    "import torch\nfrom probekit import probe\n\n"
    + "".join(
        f'''
@probe(category="values", hints=["values"])
def {name}(solution):
    """Calls {name}."""
    return solution.{name}()
'''
        for name in CALLS
    )
    + '''

@probe(category="values", hints=["values"])
def probe_sets_its_own_threads(solution):
    """The probe, not the candidate, changes the thread count: not the candidate's doing."""
    torch.set_num_threads(2)
    return solution.no_grad_block()
'''
)

LEFT = {
    "leaves_grad_off": "torch grad mode",
    "one_thread_left": "torch number of threads",
    # The count read at import is not the one the call found (a caller may set its own in between).
    "one_thread_restored_to_import_count": "torch number of threads",
    "numpy_silenced": "NumPy floating-point error handling",
    "flush_denormal": "subnormal numbers flushed to zero",
    "dispatch_mode_left_entered": "torch dispatch modes entered",
}


def _package(tmp_path: Path) -> Package:
    folder = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, folder)
    toml = folder / "challenge.toml"
    text = toml.read_text().replace('runtime = "python"', 'runtime = "torch"')
    toml.write_text(text.replace("memory_mb = 256", "memory_mb = 3072").replace("probe_seconds = 3", "probe_seconds = 30"))
    (folder / "probes" / "public.py").write_text(PUBLIC)
    shutil.rmtree(folder / "solutions")
    return load_package_dir(folder)


def test_a_setting_left_changed_by_a_call_fails_its_probe_and_one_put_back_does_not(tmp_path: Path, backend: str) -> None:
    run = execute(_package(tmp_path), SOLUTION.encode(), public=True, backend=get_backend(backend))
    for name in CALLS:
        probe = run.probes[name]
        if name in LEFT:
            assert probe.status == "settings_changed", (name, probe)
            assert process_state.named_in(probe.message) == [LEFT[name]], probe.message
            assert probe.message.startswith("the calls of this probe left"), probe.message
        else:
            assert probe.status == "ok", (name, probe)
    # What the candidate's file sees of the thread count is the stand-in, which a restore puts back: the import
    # saw one count and the calls find another.
    assert run.probes["one_thread_restored"].observation == process_state.CALLS_STAND_IN_THREADS
    moved = f"torch number of threads (was {process_state.CALLS_STAND_IN_THREADS}, now {process_state.STAND_IN_THREADS})"
    assert moved in run.probes["one_thread_restored_to_import_count"].message
    assert run.probes["probe_sets_its_own_threads"].status == "ok", run.probes["probe_sets_its_own_threads"]


@pytest.mark.parametrize(
    ("top", "setting"),
    [
        ("torch.use_deterministic_algorithms(True)", "torch deterministic algorithms"),
        ("torch.autograd.set_detect_anomaly(True)", "torch anomaly detection"),
        ("torch.set_default_dtype(torch.float64)", "torch default dtype"),
    ],
)
def test_a_setting_changed_at_import_fails_every_probe(tmp_path: Path, backend: str, top: str, setting: str) -> None:
    code = SOLUTION.replace("import torch\n", f"import torch\n\n{top}\n", 1)
    run = execute(_package(tmp_path), code.encode(), public=True, backend=get_backend(backend))
    for name in ("no_grad_block", "numpy_errstate"):
        probe = run.probes[name]
        assert probe.status == "settings_changed", probe
        assert probe.message.startswith("importing solution.py left"), probe.message
        assert process_state.named_in(probe.message) == [setting], probe.message
