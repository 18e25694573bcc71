"""The child side of the runner: what a forked child does before and while it runs one probe.

Place in the flow: ``runner.py`` (the supervisor) forks a child per probe and
calls :func:`setup` in it (its own process group, fds 0-2 replaced and every
other fd closed, rlimits, a working folder of its own), then
:func:`run_probe` or, first of all, :func:`syntax_check`. The child imports
the candidate's code (:func:`import_source`, from the job held in memory,
never from files a probe could rewrite), runs one registered probe, encodes
its observation (``codec.py``) and writes frames (``wire.py``) on the result
pipe: the only fd it holds that the supervisor reads as a result. Process-wide
settings the import or the probe's calls left changed replace the observation
with a ``settings_changed`` frame (``process_state.py``). The
supervisor never imports this code's subjects, which is why forking stays
safe. ``warm.py`` uses the same imports to fill the compiler caches.
"""

from __future__ import annotations

import io
import json
import linecache
import os
import resource
import sys
import tempfile
import traceback
import types
from typing import Any

import codec
import given_modules
import process_state
import wire

SEED = 0


def setup(result_fd: int, output_fd: int, limits: dict[str, Any], workdir: str) -> None:
    os.setpgid(0, 0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(output_fd, 1)
    os.dup2(output_fd, 2)
    keep = sorted({0, 1, 2, result_fd})
    for low, high in zip(keep, [*keep[1:], 65536], strict=True):
        os.closerange(low + 1, high)
    cpu = int(limits.get("cpu_seconds", 10))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    fsize = int(limits.get("file_bytes", 64 * 1024 * 1024))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    if limits.get("address_space_bytes"):
        space = int(limits["address_space_bytes"])
        resource.setrlimit(resource.RLIMIT_AS, (space, space))
    os.makedirs(workdir, exist_ok=True)
    os.chdir(workdir)
    os.environ["TMPDIR"] = workdir
    # The profile's imports (tensorflow among them) already asked tempfile for its
    # folder in the parent, which fixed it to /tmp: without this, TMPDIR above
    # would not move a probe's temporary files into its own folder.
    tempfile.tempdir = workdir
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", buffering=0), write_through=True, errors="replace")
    sys.stderr = sys.stdout


def seed_everything() -> None:
    import random

    random.seed(SEED)
    np = sys.modules.get("numpy")
    if np is not None:
        np.random.seed(SEED)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(SEED)
    tf = sys.modules.get("tensorflow")
    if tf is not None:
        tf.random.set_seed(SEED)


def import_source(name: str, path: str, source: str) -> types.ModuleType:
    """Import ``source`` as module ``name`` from memory, as if it were the file ``path``.

    The sources come from the job held in the parent's memory, not from the
    files in /tmp/work/job: a probe's code could rewrite those files for the next
    probe. The files exist only for ``inspect`` and tracebacks, and linecache
    is primed so tracebacks show the submitted lines even if they were changed.
    """
    module = types.ModuleType(name)
    module.__file__ = path
    linecache.cache[path] = (len(source), None, source.splitlines(keepends=True), path)
    sys.modules[name] = module
    exec(compile(source, path, "exec", dont_inherit=True), module.__dict__)  # noqa: S102 - this is the sandbox
    return module


def visible_traceback(exc: BaseException, solution_path: str, show_probe: bool, given_dir: str = "") -> str:
    """The traceback limited to frames of the candidate's file, of the given modules (the candidate reads them) and of public probes."""
    frames = traceback.extract_tb(exc.__traceback__)
    given_prefix = f"{given_dir}/" if given_dir else None

    def shown(filename: str) -> bool:
        if filename == solution_path or (show_probe and filename.endswith("probes.py")):
            return True
        return given_prefix is not None and filename.startswith(given_prefix)

    lines = traceback.format_list([f for f in frames if shown(f.filename)])
    lines += traceback.format_exception_only(type(exc), exc)
    text = "".join(lines).replace(solution_path, "solution.py")
    if given_prefix is not None:
        text = text.replace(given_prefix, "given/")
    return text[-4000:]


def run_probe(job: dict[str, Any], name: str, result_fd: int) -> None:
    out = os.fdopen(result_fd, "wb")
    solution_path = job["solution"]
    try:
        seed_everything()
        if job["sources"].get("given"):
            # The package's given/*.py, importable as given.<name> by the solution, probe_common and the probes.
            given_modules.install(job["sources"]["given"], job["given_dir"])
        # Taken before the candidate's code runs at all: what its import changes counts as much as what a call does.
        process_state.install_thread_stand_in(solution_path)
        at_start = process_state.snapshot()
        solution = import_source("solution", solution_path, job["sources"]["solution"])
        left_by_import = process_state.changes(at_start, process_state.snapshot())
        import probekit

        probekit.REGISTRY.clear()
        if "common" in job["sources"]:
            # The package's probes/common.py: what both probe files share, imported by them as probe_common.
            import_source("probe_common", job["common"], job["sources"]["common"])
        import_source("probes", job["probes"], job["sources"]["probes"])
        fn = probekit.REGISTRY.get(name)
        if fn is None:
            raise LookupError(f"probe {name!r} is not registered")
        # The probe's own module-level code has run: what differs after the probe from here, its calls changed.
        process_state.move_thread_stand_in_for_calls()
        before_calls = process_state.snapshot()
        value = fn(solution)
        left_by_calls = process_state.changes(before_calls, process_state.snapshot())
        if left_by_import or left_by_calls:
            wire.write_frame(out, settings_changed_frame(left_by_import, left_by_calls))
            return
        blobs: list[bytes] = []
        tree = codec.encode_observation(value, blobs)
        size = sum(len(b) for b in blobs) + len(json.dumps(tree))
        if size > int(job["limits"]["observation_bytes"]):
            # Refuse here, before the bytes cross a pipe and double in memory.
            wire.write_frame(out, {"type": "too_large", "bytes": size})
            return
    except MemoryError:
        wire.write_frame(out, {"type": "memory"})
        return
    except codec.ObservationError as exc:
        wire.write_frame(out, {"type": "bad_observation", "message": str(exc)[:2000]})
        return
    except BaseException as exc:  # noqa: BLE001 - SystemExit included: any escape is the observation
        wire.write_frame(
            out,
            {
                "type": "exception",
                "exc_type": type(exc).__name__,
                "message": str(exc)[:2000],
                "traceback": visible_traceback(exc, solution_path, bool(job.get("public")), job.get("given_dir", "")),
            },
        )
        return
    wire.write_frame(out, {"type": "observation", "tree": tree, "arrays": len(blobs)})
    for blob in blobs:
        wire.write_frame(out, {"type": "array"}, blob)


def settings_changed_frame(left_by_import: list[str], left_by_calls: list[str]) -> dict[str, Any]:
    """The frame of a probe whose candidate code left process-wide settings changed (``process_state.py``)."""
    parts = []
    if left_by_import:
        parts.append("importing solution.py left " + "; ".join(left_by_import))
    if left_by_calls:
        parts.append("the calls of this probe left " + "; ".join(left_by_calls))
    message = (
        " and ".join(parts) + ". Code must leave the process's settings as it found them: the caller's next computation depends on them"
        " (use the context-manager forms, such as torch.no_grad() or np.errstate(), or restore them in a finally)."
    )
    return {"type": "settings_changed", "message": message[:2000]}


def syntax_check(job: dict[str, Any], result_fd: int) -> None:
    out = os.fdopen(result_fd, "wb")
    path = job["solution"]
    source = job["sources"]["solution"]
    try:
        compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        wire.write_frame(
            out,
            {
                "type": "syntax_error",
                "message": str(exc.msg)[:500],
                "line": exc.lineno,
                "offset": exc.offset,
                "text": (exc.text or "")[:500],
            },
        )
        return
    except (ValueError, MemoryError, RecursionError) as exc:
        wire.write_frame(out, {"type": "syntax_error", "message": f"{type(exc).__name__}: {exc}"[:500]})
        return
    wire.write_frame(out, {"type": "ok"})
