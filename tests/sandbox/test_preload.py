"""challenge.toml ``preload``: the runner imports the named library modules once, before it forks the probes."""

from __future__ import annotations

import shutil
from pathlib import Path

from grader import load_package_dir
from grader.execute import execute
from sandbox import get_backend
from tests.helpers import ADD_NUMBERS

PUBLIC = '''
import sys

from probekit import probe


@probe(category="values", hints=["values"])
def inductor_already_imported(solution):
    """What the forked child found imported before any code of the job ran."""
    return "torch._inductor.compile_fx" in sys.modules
'''


def _folder(tmp_path: Path, preload: str, public: str = PUBLIC) -> Path:
    folder = tmp_path / (preload.strip("[]\"") or "none") / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, folder)
    toml = folder / "challenge.toml"
    text = toml.read_text().replace('runtime = "python"', f'runtime = "torch"\npreload = {preload}')
    # torch and Inductor need more than the fixture's 256 MB: the job's limit holds while the runner imports.
    toml.write_text(text.replace("memory_mb = 256", "memory_mb = 1536"))
    (folder / "probes" / "public.py").write_text(public)
    shutil.rmtree(folder / "solutions")
    return folder


def _package(tmp_path: Path, preload: str) -> object:
    return load_package_dir(_folder(tmp_path, preload))


def test_a_preloaded_module_is_imported_before_the_probes_fork(tmp_path: Path, backend: str) -> None:
    run = execute(_package(tmp_path, '["inductor"]'), b"def add(a, b):\n    return a + b\n", public=True, backend=get_backend(backend))
    probe = run.probes["inductor_already_imported"]
    assert probe.status == "ok" and probe.observation is True, probe


def test_without_preload_the_profile_alone_is_imported(tmp_path: Path, backend: str) -> None:
    # The control: the torch profile itself does not import Inductor, so the test above sees preload's work.
    run = execute(_package(tmp_path, "[]"), b"def add(a, b):\n    return a + b\n", public=True, backend=get_backend(backend))
    probe = run.probes["inductor_already_imported"]
    assert probe.status == "ok" and probe.observation is False, probe


# The module's name spelled so that the rule of grader/sandbox_profile.py does
# not see it: a package that names it keeps TorchDynamo in its profile.
DYNAMO_PROBE = '''
import sys

from probekit import probe


@probe(category="values", hints=["values"])
def dynamo_already_imported(solution):
    """Whether the forked child found TorchDynamo imported before any code of the job ran."""
    return "torch." + "_dynamo" in sys.modules
'''


def test_a_torch_package_that_never_reaches_dynamo_starts_without_it(tmp_path: Path, backend: str) -> None:
    folder = _folder(tmp_path, "[]", DYNAMO_PROBE)
    eager = execute(load_package_dir(folder), b"def add(a, b):\n    return a + b\n", public=True, backend=get_backend(backend))
    assert eager.probes["dynamo_already_imported"].observation is False, eager.probes
    # The same package once its own code names torch.compile: the torch profile, with TorchDynamo.
    reference = folder / "reference" / "solution.py"
    reference.write_text(reference.read_text() + "\n\ndef compiled_add(a, b):\n    import torch\n\n    return torch.compile(add)(a, b)\n")
    full = execute(load_package_dir(folder), b"def add(a, b):\n    return a + b\n", public=True, backend=get_backend(backend))
    assert full.probes["dynamo_already_imported"].observation is True, full.probes
