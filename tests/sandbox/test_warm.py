"""Sandboxes start with the warm inductor cache (sandbox/warm.py, runner/warm.py).

The proof is inductor's own counters, read by a probe inside the sandbox: a
graph the reference compiled when the environment was built is a cache hit
(no C++ compile), and the same probe without the warm cache is a miss.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from grader import load_package_dir
from grader.execute import execute
from sandbox import get_backend
from sandbox import warm as warm_module
from sandbox.backend import Backend
from sandbox.bwrap import BwrapBackend
from sandbox.environment import RUNNER_DIR
from sandbox.warm import digest, ensure_host_cache, stage, warm_sources
from tests.helpers import real_backends

REPO = Path(__file__).resolve().parents[2]
BISECT = REPO / "challenges" / "framework-internals" / "compile-bisect-layer"

# Replaces the package's public probes: the original probes stay defined but
# unregistered (so none of them fills the sandbox's cache first), and the one
# probe runs a real one, whose graph the warm-up compiled, and reports what
# inductor's cache did.
UNREGISTER = "def _unregistered(**meta):\n    return lambda fn: fn\n\n\n"
COUNTING_PROBE = '''

@probe(category="passing")
def warm_cache_counts(solution):
    from torch._dynamo.utils import counters

    matmul_chain(solution)
    return {k: int(v) for k, v in counters["inductor"].items() if k.startswith("fxgraph_cache")}
'''


def _counts(backend: Backend, tmp_path: Path) -> Any:
    folder = tmp_path / "framework-internals" / "compile-bisect-layer"
    shutil.copytree(BISECT, folder)
    public = folder / "probes" / "public.py"
    original = public.read_text().replace("@probe(", "@_unregistered(")
    original = original.replace("from probekit import probe\n", "from probekit import probe\n\n\n" + UNREGISTER, 1)
    public.write_text(original + COUNTING_PROBE)
    package = load_package_dir(folder)
    run = execute(package, package.reference_code.encode(), public=True, backend=backend)
    probe = run.probes["warm_cache_counts"]
    assert probe.status == "ok", probe
    return probe.observation


def test_compile_bisect_layer_asks_for_an_inductor_cache() -> None:
    assert "compile-bisect-layer" in {source.slug for source in warm_sources()}
    assert load_package_dir(BISECT).warm == ("inductor",)


@pytest.mark.slow
@pytest.mark.parametrize("backend_name", real_backends())
def test_a_probe_loads_the_references_kernel_instead_of_compiling(backend_name: str, tmp_path: Path) -> None:
    if backend_name == "bwrap":
        assert ensure_host_cache(log=False) is not None
        backend: Backend = BwrapBackend()  # a new one reads the cache that now exists
    else:
        backend = get_backend("docker")  # the image holds the cache
    assert _counts(backend, tmp_path) == {"fxgraph_cache_hit": 1}


@pytest.mark.slow
def test_without_the_warm_cache_the_same_probe_compiles(tmp_path: Path) -> None:
    backend = BwrapBackend()
    backend.warm_dir = None
    assert _counts(backend, tmp_path) == {"fxgraph_cache_miss": 1}


def test_a_warm_package_s_given_modules_are_staged_and_part_of_the_digest(tmp_path: Path) -> None:
    folder = tmp_path / "framework-internals" / "compile-bisect-layer"
    shutil.copytree(BISECT, folder)
    (folder / "given").mkdir()
    (folder / "given" / "layers.py").write_text("WIDTH = 8\n")
    (source,) = warm_sources(tmp_path)
    assert source.given == (("layers", b"WIDTH = 8\n"),)
    before = digest([source])
    (folder / "given" / "layers.py").write_text("WIDTH = 16\n")
    assert digest(warm_sources(tmp_path)) != before
    stage(warm_sources(tmp_path), tmp_path / "staged")
    assert (tmp_path / "staged" / "compile-bisect-layer" / "given" / "layers.py").read_text() == "WIDTH = 16\n"


def test_the_warm_up_runs_probes_that_import_given_modules(tmp_path: Path) -> None:
    """runner/warm.py makes given.<name> importable, as the runner does, for the solution and the probes."""
    folder = tmp_path / "sources" / "uses-given"
    (folder / "given").mkdir(parents=True)
    (folder / "given" / "shapes.py").write_text("SIDE = 4\n")
    (folder / "solution.py").write_text("from given.shapes import SIDE\n\n\ndef area():\n    return SIDE * SIDE\n")
    (folder / "probes-public.py").write_text(
        "from probekit import probe\nfrom given.shapes import SIDE\n\n\n"
        '@probe(category="c")\ndef square(solution):\n    assert solution.area() == SIDE * SIDE == 16\n'
    )
    done = subprocess.run(
        [sys.executable, "-B", str(RUNNER_DIR / "warm.py"), str(tmp_path / "sources"), str(tmp_path / "cache")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, check=True,
    )  # fmt: skip
    assert "[warm] uses-given probes-public.py square: ok" in done.stdout, done.stdout + done.stderr


def test_the_host_cache_lives_outside_the_clone_and_keeps_a_few_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Where the cache lives: the machine's cache, which a fresh clone shares.
    assert not str(warm_module.HOST_WARM_ROOT).startswith(str(REPO))

    # The build itself is replaced by one that writes a marker: the folder logic is what is tested.
    root = tmp_path / "warm"
    monkeypatch.setattr(warm_module, "HOST_WARM_ROOT", root)
    builds: list[list[str]] = []

    def fake_build(args: list[str], **_: Any) -> None:
        builds.append(args)
        Path(args[-1]).mkdir(parents=True)

    monkeypatch.setattr(warm_module.subprocess, "run", fake_build)
    others = []
    for age in range(warm_module.KEEP_OTHERS + 2):  # caches of other sources, oldest last
        folder = root / f"other-{age}"
        (folder / "torchinductor").mkdir(parents=True)
        (folder / ".complete").touch()
        os.utime(folder, (1_000_000 - age, 1_000_000 - age))
        others.append(folder)

    built = ensure_host_cache(log=False)
    assert built is not None and (built / ".complete").exists() and len(builds) == 1
    assert [f.exists() for f in others] == [True] * warm_module.KEEP_OTHERS + [False, False]
    assert ensure_host_cache(log=False) == built and len(builds) == 1  # complete: not built again


def test_without_its_own_cache_a_checkout_reads_the_newest_complete_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries are keyed by their content, so an earlier cache is right where it hits; the exact one wins once built."""
    root = tmp_path / "warm"
    monkeypatch.setattr(warm_module, "HOST_WARM_ROOT", root)
    assert warm_module.ready_host_cache() is None  # nothing built on this machine
    for age, name in enumerate(("newer", "older", "unfinished")):
        folder = root / name
        folder.mkdir(parents=True)
        if name != "unfinished":
            (folder / ".complete").touch()
            os.utime(folder / ".complete", (1_000_000 - age, 1_000_000 - age))
    assert warm_module.ready_host_cache() == root / "newer"
    exact = warm_module.host_cache_dir()
    exact.mkdir(parents=True)
    (exact / ".complete").touch()
    os.utime(exact / ".complete", (1, 1))  # older than the others, and still the one read
    assert warm_module.ready_host_cache() == exact
