"""Warm compiler caches that sandboxes start with, built once per environment.

Place in the flow: a package says in its challenge.toml which compiles its
probes repeat: ``warm = ["inductor"]`` (TorchInductor kernels) and/or
``warm = ["compile"]`` (the IREE compiles of fixed inputs that its
probes/common.py sends through ``compile_cache``); a package whose
candidates build C++ extensions says ``warm = ["torch-headers"]`` (torch's
ATen.h, precompiled for their g++: ``runner/torch_headers.py``). When the
sandbox environment is built (``make sandbox-image``), the references of
the inductor and compile packages run on their probes once
(``runner/warm.py``) and what they compiled is kept, in folders side by
side: ``torchinductor/``, ``compile/`` and, if a package asks, ``pch/``.
They are baked into the Docker image (see ``image.py`` and
``Dockerfile``) and, for bwrap, kept in a host folder under
``~/.cache/mlprep/warm/`` (``MLPREP_MACHINE_CACHE``, outside the clone) that
every bwrap sandbox binds read-only at ``/opt/warm``.
The runner copies ``torchinductor/`` into the sandbox's private, writable
cache folder before it reports ready, so a candidate whose code compiles the
probes' graphs pays a cache load instead of a C++ compile per kernel, and
nothing a sandbox writes ever reaches the next one. ``compile/`` is read in
place by the probes (``runner/compile_cache.py``), ``pch/`` by g++ (the
runner puts it on ``CPATH``); a sandbox writes neither.

This module only reads challenge.toml's ``warm`` key and the reference and
probe files: it must not import the grader (the grader imports the sandbox).
The grader validates the key like every other field.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from sandbox.environment import RUNNER_DIR

REPO = Path(__file__).resolve().parent.parent
CHALLENGES_DIR = REPO / "challenges"
# Outside the clone, like the Docker image the other backend's cache lives in:
# a fresh clone (CI's, a second worktree) finds what an earlier one built.
MACHINE_CACHE = Path(os.environ.get("MLPREP_MACHINE_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mlprep")
HOST_WARM_ROOT = MACHINE_CACHE / "warm"
# Caches for other sources (other checkouts, older versions) kept besides the current one.
KEEP_OTHERS = 3
# Where a sandbox sees the warm cache (both backends) and where it copies it to.
SANDBOX_WARM_DIR = "/opt/warm"
WARMABLE = ("inductor", "compile", "torch-headers")
# The kinds whose caches come from running a package's reference on its probes;
# "torch-headers" is built once for the environment, whoever asks for it.
RUNS_PROBES = ("inductor", "compile")
# The runner's files that decide what a warm build writes: a change to them
# must build a new host cache, as it builds a new image.
WARM_BUILDERS = ("warm.py", "compile_cache.py", "torch_headers.py")


@dataclass(frozen=True)
class WarmSource:
    """One package's reference and probe files, as the warm-up runs them."""

    slug: str
    solution: bytes
    probes: tuple[tuple[str, bytes], ...]
    common: bytes | None = None  # probes/common.py, imported by the probes as probe_common
    given: tuple[tuple[str, bytes], ...] = ()  # given/<name>.py, imported as given.<name>
    kinds: tuple[str, ...] = RUNS_PROBES  # what its challenge.toml's warm names (of WARMABLE)


def warm_sources(challenges_dir: Path = CHALLENGES_DIR) -> list[WarmSource]:
    """Packages under ``challenges_dir`` whose challenge.toml asks for a warm cache (any of WARMABLE).

    One warm-up fills both probe-made caches (RUNS_PROBES) for every package
    it runs, so which of them a package names does not change what is built;
    a package naming only "torch-headers" has its probes left alone.
    """
    found = []
    for toml_path in sorted(challenges_dir.glob("*/*/challenge.toml")):
        try:
            meta = tomllib.loads(toml_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue  # the grader's validation names the problem; a warm cache is optional
        warm = meta.get("warm")
        if not isinstance(warm, list) or not any(name in warm for name in WARMABLE):
            continue
        folder = toml_path.parent
        entry = str(meta.get("entry", "solution.py"))
        probes = tuple(
            (f"probes-{name}", (folder / "probes" / name).read_bytes())
            for name in ("public.py", "hidden.py")
            if (folder / "probes" / name).is_file()
        )
        common = folder / "probes" / "common.py"
        given = tuple((path.stem, path.read_bytes()) for path in sorted((folder / "given").glob("*.py")))
        found.append(
            WarmSource(
                folder.name,
                (folder / "reference" / entry).read_bytes(),
                probes,
                common.read_bytes() if common.is_file() else None,
                given,
                tuple(name for name in WARMABLE if name in warm),
            )
        )
    return found


def digest(sources: list[WarmSource]) -> str:
    """What the warm build makes of ``sources``: a new value builds a new image and host cache."""
    h = hashlib.sha256()
    for source in sources:
        parts = [source.slug.encode(), b"kinds\0" + "\0".join(source.kinds).encode()]
        if set(source.kinds) & set(RUNS_PROBES):
            # Only a package whose probes run is read by the build: another's edits must not rebuild every cache.
            parts += [source.solution, *(n.encode() + b"\0" + d for n, d in source.probes)]
            parts.append(b"common\0" + source.common if source.common is not None else b"")
            parts += [b"given\0" + n.encode() + b"\0" + d for n, d in source.given]
        for part in parts:
            h.update(len(part).to_bytes(8, "big") + part)
    return h.hexdigest()[:16]


def stage(sources: list[WarmSource], target: Path) -> None:
    """Write the sources as runner/warm.py reads them.

    ``<slug>/solution.py``, ``<slug>/probes-*.py``, ``<slug>/common.py``,
    ``<slug>/given/*.py``, and ``<slug>/warm-kinds``: the kinds the package
    asks for, one per line.
    """
    target.mkdir(parents=True, exist_ok=True)
    for source in sources:
        folder = target / source.slug
        folder.mkdir()
        (folder / "solution.py").write_bytes(source.solution)
        (folder / "warm-kinds").write_text("".join(f"{kind}\n" for kind in source.kinds), encoding="utf-8")
        for name, data in source.probes:
            (folder / name).write_bytes(data)
        if source.common is not None:
            (folder / "common.py").write_bytes(source.common)
        if source.given:
            (folder / "given").mkdir()
            for name, data in source.given:
                (folder / "given" / f"{name}.py").write_bytes(data)


def _interpreter() -> str:
    return os.environ.get("SANDBOX_PYTHON", sys.executable)


def host_cache_dir(sources: list[WarmSource] | None = None) -> Path:
    """The host folder for this checkout's warm sources and this interpreter (bwrap)."""
    sources = warm_sources() if sources is None else sources
    h = hashlib.sha256(f"{digest(sources)}\0{os.path.realpath(_interpreter())}".encode())
    for name in WARM_BUILDERS:
        h.update(b"\0" + (RUNNER_DIR / name).read_bytes())
    return HOST_WARM_ROOT / h.hexdigest()[:16]


def ready_host_cache() -> Path | None:
    """The complete host cache for the current sources; else the newest complete one of earlier sources; else None.

    Every entry of a warm cache is keyed by its own content (the compile
    cache by the compiler's version, flags and input; TorchInductor's by the
    graph; GCC reads the precompiled header only when the flags match), so a
    cache built for earlier sources gives the right bytes for what has not
    changed and misses on what has. An author editing one warm package's
    probes then keeps the other packages' (and their own unchanged
    programs') compiles warm until ``make sandbox-image`` or ``python -m
    sandbox.warm`` builds the exact one, as CI does, instead of compiling
    every program of every warm package from nothing in every probe.
    """
    sources = warm_sources()
    if not sources:
        return None
    folder = host_cache_dir(sources)
    if (folder / ".complete").exists():
        return folder
    built = [p for p in HOST_WARM_ROOT.iterdir() if (p / ".complete").exists()] if HOST_WARM_ROOT.is_dir() else []
    return max(built, key=lambda p: (p / ".complete").stat().st_mtime, default=None)


def ensure_host_cache(log: bool = True) -> Path | None:
    """Build the bwrap backend's warm cache if it is missing; None when no package asks for one.

    The warm-up runs the repository's own references and probes (trusted
    content, as in the validation that CI runs) with the same interpreter and
    venv the bwrap sandboxes bind, so inductor's cache keys match theirs.
    """
    sources = warm_sources()
    if not sources:
        return None
    folder = host_cache_dir(sources)
    if (folder / ".complete").exists():
        return folder
    HOST_WARM_ROOT.mkdir(parents=True, exist_ok=True)
    # One builder per machine at a time: a second checkout waits, then finds it built.
    with open(HOST_WARM_ROOT / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".complete").exists():
            _build_host_cache(sources, folder, log)
    return folder


def _build_host_cache(sources: list[WarmSource], folder: Path, log: bool) -> None:
    others = sorted((p for p in HOST_WARM_ROOT.iterdir() if p.is_dir() and p != folder), key=lambda p: p.stat().st_mtime, reverse=True)
    for stale in others[KEEP_OTHERS:]:
        shutil.rmtree(stale, ignore_errors=True)
    shutil.rmtree(folder, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="mlprep-warm-") as scratch:
        stage(sources, Path(scratch) / "sources")
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": scratch,
            "TMPDIR": scratch,
            "LANG": "C.UTF-8",
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        out = None if log else subprocess.DEVNULL
        subprocess.run(
            [_interpreter(), "-B", str(RUNNER_DIR / "warm.py"), str(Path(scratch) / "sources"), str(folder)],
            env=env, cwd=scratch, check=True, stdout=out, stderr=out,
        )  # fmt: skip
    # Readable by the sandbox user, who copies torchinductor/ and reads compile/; never writable by it.
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    (folder / ".complete").touch()


def main() -> int:
    """``python -m sandbox.warm``: build the bwrap backend's warm cache if it is missing."""
    folder = ensure_host_cache()
    print(folder if folder else "no package asks for a warm cache")
    return 0


if __name__ == "__main__":
    sys.exit(main())
