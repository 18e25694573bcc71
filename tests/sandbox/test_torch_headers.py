"""Candidates' C++ extensions compile against torch's ATen.h precompiled with the environment (runner/torch_headers.py).

The proof is g++'s own report (-H) with the flags of the build.ninja that
``load_inline`` wrote: the starter's flags take the precompiled header;
with flags it was not built with (-O2 here), g++ says why it ignores it,
reads ATen.h itself, and the extension still works. Both in real sandboxes of both
backends, through ``load_inline`` called exactly as the cpp-torch-library-op
starter calls it.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from grader import load_package_dir
from grader.execute import execute
from grader.package import Package, PackageError
from sandbox import get_backend
from sandbox.runner import torch_headers
from sandbox.warm import digest, stage, warm_sources
from tests.helpers import ADD_NUMBERS, package_with

REPO = Path(__file__).resolve().parents[2]
CPP_OP = REPO / "challenges" / "framework-internals" / "cpp-torch-library-op"

PUBLIC = '''
import os
import shlex
import subprocess

import torch
from probekit import probe

SOURCE = """
#include <ATen/ATen.h>
#include <torch/library.h>

at::Tensor twice(const at::Tensor& x) { return x * 2; }

TORCH_LIBRARY(pch_check, m) { m.def("twice(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(pch_check, CPU, m) { m.impl("twice", &twice); }
"""


def build(extra_cflags):
    """The starter's load_inline call; what the extension computes, and where g++ found ATen.h with that build's flags.

    ninja's dependency record cannot tell (-MMD leaves out the -isystem
    headers either way), so g++ is asked again with the very flags of the
    build.ninja load_inline wrote, plus -H (each header as it is opened,
    "!" for a precompiled one) and -fsyntax-only, neither of which a
    precompiled header's validity depends on.
    """
    from torch.utils.cpp_extension import load_inline

    os.environ["CXX"] = "g++"
    folder = os.path.join(os.getcwd(), "build")
    os.makedirs(folder)
    load_inline(
        name="pch_check", cpp_sources=SOURCE, is_python_module=False, build_directory=folder,
        no_implicit_headers=True, extra_cflags=extra_cflags,
    )
    with open(os.path.join(folder, "build.ninja")) as fh:
        cflags = next(line for line in fh if line.startswith("cflags = "))[len("cflags = "):]
    source = os.path.join(folder, "main.cpp")
    asked = subprocess.run(
        ["g++", *shlex.split(cflags), "-H", "-fsyntax-only", "-Winvalid-pch", source], capture_output=True, text=True, check=True,
    )
    first = next(line for line in asked.stderr.splitlines() if line.startswith(("! ", ". ")))
    return {
        "twice": torch.ops.pch_check.twice(torch.tensor([1.0, 2.5])).tolist(),
        "aten_h": first,
        "why_not": [line.split("not used because ")[1] for line in asked.stderr.splitlines() if "not used because" in line],
    }


@probe(category="values", timeout=300)
def starter_flags(solution):
    return build([])


@probe(category="values", timeout=300)
def flags_the_header_was_not_built_with(solution):
    return build(["-O2"])
'''


def _package(tmp_path: Path) -> Package:
    folder = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, folder)
    toml = folder / "challenge.toml"
    text = toml.read_text().replace('runtime = "python"', 'runtime = "torch"').replace("memory_mb = 256", "memory_mb = 3072")
    toml.write_text(text.replace("probe_seconds = 3", "probe_seconds = 300").replace("wall_seconds = 60", "wall_seconds = 700"))
    (folder / "probes" / "public.py").write_text(PUBLIC)
    shutil.rmtree(folder / "solutions")
    return load_package_dir(folder)


@pytest.mark.slow
def test_an_extension_built_as_the_starter_builds_it_reads_the_precompiled_header(tmp_path: Path, backend: str) -> None:
    run = execute(_package(tmp_path), b"def add(a, b):\n    return a + b\n", public=True, backend=get_backend(backend))
    used, ignored = run.probes["starter_flags"], run.probes["flags_the_header_was_not_built_with"]
    assert used.status == "ok", used
    assert used.observation == {"twice": [2.0, 5.0], "aten_h": f"! {torch_headers.READ_DIR}/ATen/ATen.h.gch", "why_not": []}
    assert ignored.status == "ok", ignored
    assert ignored.observation["twice"] == [2.0, 5.0]
    assert ignored.observation["aten_h"].startswith(". ") and ignored.observation["aten_h"].endswith("/torch/include/ATen/ATen.h")
    assert ignored.observation["why_not"] == ["`__NO_INLINE__' not defined [-Winvalid-pch]"]


def test_cpp_torch_library_op_asks_for_the_headers_and_only_they_are_built_for_it(tmp_path: Path) -> None:
    assert load_package_dir(CPP_OP).warm == ("torch-headers",)
    (source,) = [s for s in warm_sources() if s.slug == "cpp-torch-library-op"]
    assert source.kinds == ("torch-headers",)  # its probes are not run by the warm build: nothing of theirs is cached
    stage([source], tmp_path)
    assert (tmp_path / "cpp-torch-library-op" / "warm-kinds").read_text() == "torch-headers\n"


def test_editing_a_package_that_only_asks_for_the_headers_rebuilds_no_cache(tmp_path: Path) -> None:
    """Its probes never run in the warm build, so they are no part of what names the image and the host cache."""
    folder = tmp_path / "framework-internals" / "cpp-torch-library-op"
    shutil.copytree(CPP_OP, folder)
    before = digest(warm_sources(tmp_path))
    (folder / "probes" / "public.py").write_text((folder / "probes" / "public.py").read_text() + "\n# edited\n")
    assert digest(warm_sources(tmp_path)) == before
    toml = folder / "challenge.toml"
    toml.write_text(toml.read_text().replace('warm = ["torch-headers"]', 'warm = ["torch-headers", "inductor"]'))
    assert digest(warm_sources(tmp_path)) != before


def test_precompiled_headers_need_a_torch_runtime(tmp_path: Path) -> None:
    toml = (ADD_NUMBERS / "challenge.toml").read_text().replace('runtime = "python"\n', 'runtime = "python"\nwarm = ["torch-headers"]\n')
    with pytest.raises(PackageError, match="precompiled torch headers need a runtime with torch"):
        package_with(tmp_path, challenge_toml=toml)


def test_the_headers_are_built_with_load_inlines_flags_without_the_extensions_name() -> None:
    flags = torch_headers.load_inline_cflags()
    assert "-DTORCH_API_INCLUDE_EXTENSION_H" in flags and "-fPIC" in flags
    assert any(flag.startswith("-std=c++") for flag in flags)
    assert not [flag for flag in flags if "TORCH_EXTENSION_NAME" in flag]
    from torch.utils.cpp_extension import include_paths

    assert include_paths("cpu")[0] in flags  # torch/include, after its -isystem


def test_enable_puts_the_folder_first_on_cpath_only_where_it_exists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CPATH", "/usr/local/include/extra")
    assert not torch_headers.enable(str(tmp_path / "absent"))
    assert os.environ["CPATH"] == "/usr/local/include/extra"
    assert torch_headers.enable(str(tmp_path))
    assert os.environ["CPATH"] == f"{tmp_path}:/usr/local/include/extra"
    monkeypatch.delenv("CPATH")
    assert torch_headers.enable(str(tmp_path))
    assert os.environ["CPATH"] == str(tmp_path)


def test_a_header_that_does_not_compile_is_reported_and_the_warm_build_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """runner/warm.py: a failed build costs the speed-up only; the message carries g++'s own words."""
    sys.path.insert(0, str(REPO / "sandbox" / "runner"))
    try:
        import warm as runner_warm
    finally:
        sys.path.pop(0)
    monkeypatch.setattr(torch_headers, "HEADERS", ("ATen/NoSuchHeader.h",))
    monkeypatch.setitem(sys.modules, "torch_headers", torch_headers)
    assert runner_warm._build_torch_headers(str(tmp_path)) is False
    report = capsys.readouterr().out
    assert report.startswith("[warm] torch headers: failed:") and "NoSuchHeader.h" in report
    assert not [path for path in tmp_path.rglob("*") if path.is_file()]
