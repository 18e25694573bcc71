"""Fill the warm caches by running packages' references on their probes.

Place in the flow: run once when the sandbox environment is built, never
while grading. ``sandbox/Dockerfile`` runs it inside the image build, so the
caches are baked into the image; ``sandbox.warm`` runs it on the host for the
bwrap backend. Two caches come out of the probes' runs, side by side in WARM_DIR:

- ``torchinductor/``: the kernels TorchInductor compiled. The runner copies
  it into the sandbox's own ``TORCHINDUCTOR_CACHE_DIR`` before it says
  ready, so a probe that compiles the same graph as the reference did here
  loads the kernel instead of running g++ on it (about 3-4 s per kernel on
  this kind of machine).
- ``compile/``: the entries the probes' ``compile_cache.cached`` calls built
  (IREE's dumps and vmfbs of the probes' fixed programs and models). Every
  sandbox reads them in place, read-only, at ``/opt/warm/compile``.

A third, ``pch/``, comes from no probe: torch's ATen.h precompiled for g++
(``torch_headers.py``), built once if any package asks for "torch-headers".
Each package's ``warm-kinds`` file says what it asks for; only packages
asking for "inductor" or "compile" have their probes run.

    python warm.py SOURCES_DIR WARM_DIR

SOURCES_DIR holds one folder per package with ``solution.py`` (the
reference), ``probes-*.py`` and, if the package has them, ``common.py`` and
``given/*.py``, and ``warm-kinds``. Every probe runs in a forked child, as in the runner, in a
work folder of its own under one run folder, so probes that register custom
ops cannot collide and a probe's per-run cache lives where the runner would
put it; a probe that fails only costs its cache entries and is reported.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable

PROBE_SECONDS = 300
# The kinds whose caches come from running the reference on the probes (sandbox/warm.py's RUNS_PROBES).
RUNS_PROBES = ("inductor", "compile")


def _install_given(probes_path: str) -> None:
    """The package's given/*.py, if it has any, importable as given.<name> as the runner provides them."""
    import given_modules

    given_dir = os.path.join(os.path.dirname(probes_path), "given")
    if not os.path.isdir(given_dir):
        return
    sources = {}
    for name in sorted(os.listdir(given_dir)):
        if name.endswith(".py"):
            with open(os.path.join(given_dir, name), encoding="utf-8") as fh:
                sources[name[: -len(".py")]] = fh.read()
    given_modules.install(sources, "/tmp/work/job/given")


def _import_common(probes_path: str) -> None:
    """The package's probes/common.py, if it has one, as the runner provides it (probe_common)."""
    import child

    common = os.path.join(os.path.dirname(probes_path), "common.py")
    if os.path.exists(common):
        with open(common, encoding="utf-8") as fh:
            child.import_source("probe_common", "/tmp/work/job/probe_common.py", fh.read())


def _run_probe(solution_source: str, probes_path: str, name: str) -> None:
    import child
    import probekit

    child.seed_everything()
    _install_given(probes_path)
    solution = child.import_source("solution", "/tmp/work/job/solution.py", solution_source)
    probekit.REGISTRY.clear()
    _import_common(probes_path)
    with open(probes_path, encoding="utf-8") as fh:
        child.import_source("probes", "/tmp/work/job/probes.py", fh.read())
    probekit.REGISTRY[name](solution)


def _probe_names(probes_path: str) -> list[str]:
    import child
    import probekit

    probekit.REGISTRY.clear()
    _install_given(probes_path)
    _import_common(probes_path)
    with open(probes_path, encoding="utf-8") as fh:
        source = fh.read()
    # Registering probes only defines functions: nothing compiles yet.
    child.import_source("probes", probes_path, source)
    return list(probekit.REGISTRY)


def _in_child(target: Callable[[], None], timeout: float, workdir: str) -> str:
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            # As the runner does: the probe's own folder, and its temporary files there.
            os.makedirs(workdir)
            os.chdir(workdir)
            os.environ["TMPDIR"] = tempfile.tempdir = workdir  # tempfile caches what the parent found
            target()
        except BaseException:  # noqa: BLE001 - any failure only costs this probe's entries
            code = 1
        os._exit(code)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return "ok" if os.waitstatus_to_exitcode(status) == 0 else "failed"
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return "timeout"


def _entries(folder: str) -> int:
    return sum(1 for name in os.listdir(folder) if not name.startswith("."))


def _kinds(folder: str) -> set[str]:
    """What the package asks the warm build for (its ``warm-kinds``; without one, the probes' caches)."""
    try:
        with open(os.path.join(folder, "warm-kinds"), encoding="utf-8") as fh:
            return {line.strip() for line in fh if line.strip()}
    except FileNotFoundError:
        return set(RUNS_PROBES)


def _build_torch_headers(warm: str) -> bool:
    """Precompile torch's headers into ``<warm>/pch``; a failure is reported, and only costs candidates the speed-up."""
    import subprocess

    import torch_headers

    started = time.monotonic()
    try:
        written = torch_headers.build(warm)
    except (subprocess.CalledProcessError, OSError, StopIteration, TypeError) as exc:
        detail = exc.stderr[-2000:] if isinstance(exc, subprocess.CalledProcessError) else repr(exc)
        print(f"[warm] torch headers: failed: {detail}", flush=True)
        return False
    sizes = ", ".join(f"{os.path.relpath(path, warm)} {os.path.getsize(path) / 1e6:.0f} MB" for path in written)
    print(f"[warm] torch headers: {sizes} in {time.monotonic() - started:.1f} s", flush=True)
    return True


def main(argv: list[str]) -> int:
    sources, warm = argv[1], argv[2]
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import compile_cache

    inductor, compiled = os.path.join(warm, "torchinductor"), os.path.join(warm, "compile")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = inductor
    os.environ[compile_cache.FILL_ENV] = compiled
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.makedirs(inductor, exist_ok=True)
    os.makedirs(compiled, exist_ok=True)
    # The probes' work folders: beside each other, as the runner's <work>/probe-N are.
    workroot = tempfile.mkdtemp(prefix="warm-run-")
    # Imported once in the parent, as the runner does, so children start warm.
    import torch
    import torch._dynamo  # noqa: F401

    failures = 0
    kinds = {slug: _kinds(os.path.join(sources, slug)) for slug in sorted(os.listdir(sources))}
    if any("torch-headers" in asked for asked in kinds.values()):
        failures += not _build_torch_headers(warm)
    for slug, asked in kinds.items():
        if not asked & set(RUNS_PROBES):
            continue
        folder = os.path.join(sources, slug)
        with open(os.path.join(folder, "solution.py"), encoding="utf-8") as fh:
            solution_source = fh.read()
        for probes_file in sorted(f for f in os.listdir(folder) if f.startswith("probes-")):
            path = os.path.join(folder, probes_file)
            for i, name in enumerate(_probe_names(path)):
                started, before = time.monotonic(), _entries(compiled)
                workdir = os.path.join(workroot, slug, f"{probes_file[: -len('.py')]}-{i}")
                status = _in_child(functools.partial(_run_probe, solution_source, path, name), PROBE_SECONDS, workdir)
                failures += status != "ok"
                added = _entries(compiled) - before
                print(f"[warm] {slug} {probes_file} {name}: {status} in {time.monotonic() - started:.1f} s, {added} compile entries", flush=True)
    shutil.rmtree(workroot, ignore_errors=True)
    # A failed probe leaves a partial cache, which is still correct: inductor
    # only ever loads an entry whose key matches exactly, and so does compile_cache.
    print(f"[warm] caches at {warm}: {_entries(compiled)} compile entries; {failures} probe(s) or build(s) did not finish", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
