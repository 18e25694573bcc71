"""The platform's compile cache (sandbox/runner/compile_cache.py) and the warm build that fills it.

What must hold: an entry is read only for exactly the inputs and compiler
that built it; a miss is built for real and written nowhere a sandbox could
write; probes side by side can share a per-run cache; the warm build fills
``compile/`` beside ``torchinductor/``; and in a real sandbox, on each
backend, the entries are read but can never be written, and a package's
probes are served from them with the same observations as without them.
"""

from __future__ import annotations

import multiprocessing
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from grader import load_package_dir
from grader.execute import execute
from sandbox import get_backend
from sandbox import warm as warm_module
from sandbox.backend import Backend
from sandbox.bwrap import BwrapBackend
from sandbox.environment import RUNNER_DIR, sandbox_env
from sandbox.runner import compile_cache
from sandbox.warm import ensure_host_cache, host_cache_dir, warm_sources
from tests.helpers import package_with

REPO = Path(__file__).resolve().parents[2]
COMPILERS = REPO / "challenges" / "compilers-ir"
COMPILE_PACKAGES = ("find-the-broken-pass", "lower-through-mlir", "mlir-read-the-dump")


def _never_built() -> bytes:
    raise AssertionError("a cached entry must not be built again")


@pytest.fixture
def read_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The platform's read-only folder, here an ordinary one; no fill folder; fresh counts."""
    folder = tmp_path / "opt-warm-compile"
    folder.mkdir()
    monkeypatch.setattr(compile_cache, "READ_DIR", str(folder))
    monkeypatch.delenv(compile_cache.FILL_ENV, raising=False)
    monkeypatch.setattr(compile_cache, "counts", dict.fromkeys(compile_cache.counts, 0))
    return folder


# ---------------------------------------------------------------- the key


def test_the_key_changes_with_the_kind_every_part_and_the_compiler_version() -> None:
    key = compile_cache.key
    base = key("iree-vmfb", ["--iree-llvmcpu-target-cpu=generic", "func.func @main"], version="3.13.0")
    assert base == key("iree-vmfb", ["--iree-llvmcpu-target-cpu=generic", b"func.func @main"], version="3.13.0")
    others = {
        key("iree-pass-dumps", ["--iree-llvmcpu-target-cpu=generic", "func.func @main"], version="3.13.0"),
        key("iree-vmfb", ["--iree-llvmcpu-target-cpu=host", "func.func @main"], version="3.13.0"),
        key("iree-vmfb", ["--iree-llvmcpu-target-cpu=generic", "func.func @main2"], version="3.13.0"),
        key("iree-vmfb", ["--iree-llvmcpu-target-cpu=generic", "func.func @main"], version="3.14.0"),
        key("iree-vmfb", ["--iree-llvmcpu-target-cpu=generic"], version="3.13.0"),
    }
    assert base not in others and len(others) == 5
    # Length-prefixed parts: moving a boundary is another input.
    assert key("k", ["ab", "c"], version="v") != key("k", ["a", "bc"], version="v")


def test_the_default_version_is_the_installed_iree_compiler() -> None:
    from iree.compiler.version import VERSION

    assert compile_cache.tool_version().startswith(f"iree.compiler {VERSION} ")
    assert compile_cache.key("k", ["x"]) == compile_cache.key("k", ["x"], version=compile_cache.tool_version())


# ---------------------------------------------------------------- hit, miss, fill, per-run


def test_a_miss_is_built_for_real_and_written_nowhere(read_dir: Path) -> None:
    builds: list[int] = []

    def build() -> bytes:
        builds.append(1)
        return b"vmfb bytes"

    assert compile_cache.cached("demo", ["text"], build) == b"vmfb bytes"
    assert compile_cache.cached("demo", ["text"], build) == b"vmfb bytes"
    assert len(builds) == 2  # nothing was kept between the two
    assert list(read_dir.iterdir()) == []
    assert compile_cache.counts == {"platform": 0, "run": 0, "built": 2}


def test_a_hit_is_read_and_not_built(read_dir: Path) -> None:
    (read_dir / compile_cache.key("demo", ["text", "--flag"])).write_bytes(b"from the warm build")
    assert compile_cache.cached("demo", ["text", "--flag"], _never_built) == b"from the warm build"
    assert compile_cache.counts == {"platform": 1, "run": 0, "built": 0}


def test_an_entry_of_other_inputs_is_not_read(read_dir: Path) -> None:
    (read_dir / compile_cache.key("demo", ["text", "--flag"])).write_bytes(b"other flags")
    assert compile_cache.cached("demo", ["text", "--other-flag"], lambda: b"built") == b"built"


def test_the_warm_build_writes_what_it_builds_and_reads_it_back(read_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fill = tmp_path / "fill"
    monkeypatch.setenv(compile_cache.FILL_ENV, str(fill))
    assert compile_cache.cached("demo", ["text"], lambda: b"built once") == b"built once"
    assert (fill / compile_cache.key("demo", ["text"])).read_bytes() == b"built once"
    assert compile_cache.cached("demo", ["text"], _never_built) == b"built once"
    assert [p.name for p in fill.iterdir()] == [compile_cache.key("demo", ["text"])]  # no temporary left behind
    assert list(read_dir.iterdir()) == []


def test_a_failed_build_stores_nothing(read_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fill, run = tmp_path / "fill", tmp_path / "run"
    fill.mkdir()
    run.mkdir()
    monkeypatch.setenv(compile_cache.FILL_ENV, str(fill))

    def fails() -> bytes:
        raise RuntimeError("IREE could not compile this IR")

    with pytest.raises(RuntimeError, match="could not compile"):
        compile_cache.cached("demo", ["bad IR"], fails, run_dir=str(run))
    assert list(fill.iterdir()) == list(run.iterdir()) == []


def test_a_run_cache_serves_the_next_probe(read_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert compile_cache.cached("demo", ["text"], lambda: b"dumps", run_dir=str(run)) == b"dumps"
    assert compile_cache.cached("demo", ["text"], _never_built, run_dir=str(run)) == b"dumps"
    assert compile_cache.counts == {"platform": 0, "run": 1, "built": 1}
    assert list(read_dir.iterdir()) == []


def _build_at_the_same_time(barrier: Any, read_dir: str, run_dir: str) -> None:
    compile_cache.READ_DIR = read_dir

    def build() -> bytes:
        barrier.wait(timeout=60)  # both processes are inside build() before either writes
        return b"x" * 1_000_000

    assert compile_cache.cached("demo", ["same model"], build, run_dir=run_dir) == b"x" * 1_000_000


def test_two_probes_writing_the_same_run_entry_at_once_both_succeed(read_dir: Path, tmp_path: Path) -> None:
    """mlir-read-the-dump's old per-run cache shared one '<key>.part' name: one of two writers failed."""
    run = tmp_path / "run"
    # Spawned, not forked: a fork of an xdist worker that holds other tests' threads (pools, engine clients) can
    # inherit a lock taken at that instant and hang before build() (seen in a fresh-clone CI run: one writer never
    # reached the barrier, the other broke it after 60 s).
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    writers = [context.Process(target=_build_at_the_same_time, args=(barrier, str(read_dir), str(run))) for _ in range(2)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(120)
    assert [w.exitcode for w in writers] == [0, 0]
    assert [p.name for p in run.iterdir()] == [compile_cache.key("demo", ["same model"])]
    assert (run / compile_cache.key("demo", ["same model"])).read_bytes() == b"x" * 1_000_000


# ---------------------------------------------------------------- the warm build and its keys


def test_the_compile_packages_ask_for_the_cache_and_are_warmed() -> None:
    slugs = {source.slug for source in warm_sources()}
    for slug in COMPILE_PACKAGES:
        assert load_package_dir(COMPILERS / slug).warm == ("compile",)
        assert slug in slugs


def test_the_warm_build_fills_compile_beside_torchinductor(tmp_path: Path) -> None:
    folder = tmp_path / "sources" / "uses-the-cache"
    folder.mkdir(parents=True)
    (folder / "solution.py").write_text("def source():\n    return 'func.func @main'\n")
    (folder / "probes-public.py").write_text(
        textwrap.dedent(
            """
            import os

            import compile_cache
            from probekit import probe


            @probe(category="c")
            def compiles(solution):
                assert compile_cache.cached("demo", [solution.source()], lambda: os.getcwd().encode()) == os.getcwd().encode()
            """
        )
    )
    warm = tmp_path / "warm"
    done = subprocess.run(
        [sys.executable, "-B", str(RUNNER_DIR / "warm.py"), str(tmp_path / "sources"), str(warm)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, check=True,
    )  # fmt: skip
    assert "[warm] uses-the-cache probes-public.py compiles: ok" in done.stdout, done.stdout + done.stderr
    assert (warm / "torchinductor").is_dir()
    (entry,) = (warm / "compile").iterdir()
    assert entry.name == compile_cache.key("demo", ["func.func @main"])
    # The probe ran in a work folder of its own, as in the runner, and that folder is gone.
    assert entry.read_bytes().endswith(b"/uses-the-cache/probes-public-0")
    assert not Path(entry.read_bytes().decode()).exists()


def test_the_host_cache_key_moves_with_the_runner_files_that_fill_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = tmp_path / "runner"
    shutil.copytree(RUNNER_DIR, runner, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(warm_module, "RUNNER_DIR", runner)
    sources = warm_sources()
    before = host_cache_dir(sources)
    with (runner / "compile_cache.py").open("a") as fh:
        fh.write("# another key format\n")
    assert host_cache_dir(sources) != before


def test_the_fill_variable_is_never_in_a_sandbox_s_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(compile_cache.FILL_ENV, "/tmp/somewhere")
    assert compile_cache.FILL_ENV not in sandbox_env()


# ---------------------------------------------------------------- in real sandboxes

READ_ONLY_PROBE = '''
import os

import compile_cache
from probekit import probe


def _attempt(action):
    try:
        action()
    except OSError:
        return "refused"
    return "written"


@probe(category="values")
def tries_to_write_the_compile_cache(solution):
    """A submission's process tries every way of changing an entry of the platform's cache."""
    folder = compile_cache.READ_DIR
    entries = sorted(name for name in os.listdir(folder) if not name.startswith("."))
    entry = os.path.join(folder, entries[0])
    with open(entry, "rb") as fh:
        first = fh.read()

    def fill():
        os.environ[compile_cache.FILL_ENV] = folder
        compile_cache.cached("forged", ["input"], lambda: b"forged")

    attempts = {
        "environment": os.environ.get(compile_cache.FILL_ENV),
        "new entry": _attempt(lambda: open(os.path.join(folder, compile_cache.key("forged", ["input"])), "wb").close()),
        "overwrite": _attempt(lambda: open(entry, "r+b").write(b"forged")),
        "truncate": _attempt(lambda: os.truncate(entry, 0)),
        "remove": _attempt(lambda: os.unlink(entry)),
        "rename": _attempt(lambda: os.rename(entry, entry + ".old")),
        "chmod": _attempt(lambda: os.chmod(entry, 0o666)),
        "folder": _attempt(lambda: os.mkdir(os.path.join(folder, "more"))),
        "fill": _attempt(fill),
    }
    with open(entry, "rb") as fh:
        attempts["unchanged"] = fh.read() == first
    return attempts
'''


def _backend(name: str, warm_dir: Path | None) -> Backend:
    if name == "bwrap":
        backend = BwrapBackend()
        backend.warm_dir = warm_dir
        return backend
    return get_backend("docker")  # the image holds the warm caches


def test_a_submission_cannot_write_the_compile_cache(backend: str, tmp_path: Path) -> None:
    # bwrap: a warm folder anyone may write on the host (the test runs as
    # root; the sandbox user is nobody), so only the read-only bind stops it.
    # docker: the image's own /opt/warm, on the container's read-only root.
    warm = tmp_path / "warm"
    (warm / "compile").mkdir(parents=True)
    (warm / "compile" / compile_cache.key("demo", ["text"])).write_bytes(b"entry")
    for path in (warm, warm / "compile", *(warm / "compile").iterdir()):
        path.chmod(0o777 if path.is_dir() else 0o666)
    package = package_with(tmp_path / "package", probes__public_py=READ_ONLY_PROBE)
    run = execute(package, package.reference_code.encode(), public=True, backend=_backend(backend, warm))
    probe = run.probes["tries_to_write_the_compile_cache"]
    assert probe.status == "ok", probe
    assert probe.observation == {
        "environment": None,
        "new entry": "refused",
        "overwrite": "refused",
        "truncate": "refused",
        "remove": "refused",
        "rename": "refused",
        "chmod": "refused",
        "folder": "refused",
        "fill": "refused",
        "unchanged": True,
    }
    assert sorted(p.name for p in (warm / "compile").iterdir()) == [compile_cache.key("demo", ["text"])]


# One probe on find-the-broken-pass: a real case, the reference's search,
# then every dump compiled and judged, as a linear scan would; it reports
# the answer, the compile counts and what the cache did.
FBP_PROBE = '''
import compile_cache
from probekit import probe
from probe_common import CachedCompileAndRun, observe

FUSION = "iree-dispatch-creation-elementwise-op-fusion @main"


@probe(category="bisect")
def served_from_the_cache(solution):
    """The hidden probe bisect_fusion_swap, then every dump compiled."""
    from given.pipeline import build_case

    seen = observe(solution, "gelu_colmean", 12, bug="swap", at=(FUSION, 0), seed=18, budgeted=True)
    case = build_case("gelu_colmean", 12, bug="swap", at=(FUSION, 0), seed=18)
    scan = CachedCompileAndRun()
    broken = [i for i, (_, ir) in enumerate(case.passes) if not solution.is_good(scan(ir, case.inputs), case.expected)]
    return {"observed": seen, "first_changed": broken[:1], "scan_calls": scan.calls, "cache": dict(compile_cache.counts)}
'''


def _fbp_run(backend: Backend, tmp_path: Path) -> dict[str, Any]:
    folder = tmp_path / "compilers-ir" / "find-the-broken-pass"
    shutil.copytree(COMPILERS / "find-the-broken-pass", folder)
    (folder / "probes" / "public.py").write_text(FBP_PROBE)
    package = load_package_dir(folder)
    run = execute(package, package.reference_code.encode(), public=True, backend=backend)
    probe = run.probes["served_from_the_cache"]
    assert probe.status == "ok", probe
    observation: dict[str, Any] = probe.observation
    return observation


@pytest.mark.slow
def test_find_the_broken_pass_is_served_from_the_warm_cache_with_the_same_observation(backend: str, tmp_path: Path) -> None:
    if backend == "bwrap":
        warm_dir = ensure_host_cache(log=False)
        assert warm_dir is not None and any((warm_dir / "compile").iterdir())
    warm = _fbp_run(_backend(backend, warm_dir if backend == "bwrap" else None), tmp_path / "warm")
    cold = _fbp_run(_backend("bwrap", None), tmp_path / "cold")
    # The same answer and compile count either way: only the work is skipped.
    assert warm["observed"] == cold["observed"]
    assert warm["observed"]["answer_pass"] == warm["observed"]["planted_pass"]
    assert warm["first_changed"] == cold["first_changed"] == [warm["observed"]["planted"]]
    assert warm["scan_calls"] == cold["scan_calls"] > warm["observed"]["compiles"]
    # Warm: the case's two dump logs, the reference's compiles and every dump of the scan were entries.
    assert warm["cache"]["built"] == 0 and warm["cache"]["platform"] > 2
    assert cold["cache"]["platform"] == 0 and cold["cache"]["built"] > 2
