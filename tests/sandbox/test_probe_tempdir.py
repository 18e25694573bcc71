"""A probe's temporary files go into its own work folder, whatever the profile imported before it forked.

The runner sets ``TMPDIR`` per probe, but Python's ``tempfile`` reads it once
and keeps the answer: TensorFlow asks for the temporary folder as the
runner's parent imports it (so does TorchDynamo, where no Inductor cache
folder is set), so without the runner resetting ``tempfile.tempdir`` a probe's
temporary files would land in the sandbox's shared /tmp. The python profile
is the control.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader import load_package_dir
from grader.execute import execute
from grader.package import Package
from sandbox import get_backend
from tests.helpers import ADD_NUMBERS

PUBLIC = '''
import os
import tempfile

from probekit import probe


@probe(category="values", hints=["values"])
def temporary_files_land_in_the_probes_folder(solution):
    """Where tempfile puts a probe's temporary folder, relative to the probe's own work folder."""
    made = tempfile.mkdtemp()
    return [tempfile.gettempdir() == os.getcwd(), os.path.dirname(made) == os.getcwd()]
'''


def _package(tmp_path: Path, runtime: str) -> Package:
    folder = tmp_path / runtime / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, folder)
    toml = folder / "challenge.toml"
    text = toml.read_text().replace('runtime = "python"', f'runtime = "{runtime}"')
    toml.write_text(text.replace("memory_mb = 256", "memory_mb = 3072"))  # tensorflow needs more than the fixture's 256 MB
    (folder / "probes" / "public.py").write_text(PUBLIC)
    shutil.rmtree(folder / "solutions")
    return load_package_dir(folder)


@pytest.mark.parametrize("runtime", ["python", "tensorflow"])
def test_a_probes_temporary_files_go_into_its_own_folder(tmp_path: Path, backend: str, runtime: str) -> None:
    run = execute(_package(tmp_path, runtime), b"def add(a, b):\n    return a + b\n", public=True, backend=get_backend(backend))
    probe = run.probes["temporary_files_land_in_the_probes_folder"]
    assert probe.status == "ok" and probe.observation == [True, True], probe
