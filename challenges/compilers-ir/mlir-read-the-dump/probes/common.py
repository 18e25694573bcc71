"""What the public and hidden probes of mlir-read-the-dump share, imported by both as ``probe_common``."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from typing import Any, NamedTuple

import compile_cache
import numpy as np
from iree.compiler.tools import binaries

# ---------------------------------------------------------------- compiling and splitting the dumps
# (the same code as in the starter's compile_dumps, plus the compile caches)


class Dump(NamedTuple):
    """The IR of the whole module after one pass that changed it."""

    pass_name: str  # the pass's command-line name, e.g. "iree-codegen-generic-vectorization"
    op: str  # what the pass ran on, e.g. "builtin.module" or "func.func @main_dispatch_0_matmul_64x256x128_f32"
    ir: str  # the module's IR as printed after the pass


FLAGS = (
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    # A fixed target: the same tile sizes and vector widths on every host.
    "--iree-llvmcpu-target-triple=x86_64-unknown-unknown-eabi-elf",
    "--iree-llvmcpu-target-cpu=generic",
    # Stop once every dispatch is lowered to the LLVM dialect (no object code, no VM module).
    "--compile-to=executable-targets",
    "--mlir-disable-threading",  # passes run one at a time, so the dumps come in a fixed order
    "--mlir-print-ir-after-all",
    "--mlir-print-ir-after-change",  # only the passes that changed something
    "--mlir-print-ir-module-scope",  # always the whole module, even after a pass that ran on one function
)

HEADER = re.compile(r"^// -----// IR Dump After \S+: ([^\s{]+)(?:\{.*\})?(?: \((.*)\))? //----- //$")


def split_dumps(text: str) -> list[Dump]:
    """Split iree-compile's stderr into dumps, one per '// -----// IR Dump After ...' header."""
    dumps: list[Dump] = []
    for chunk in re.split(r"^(?=// -----// IR Dump After )", text, flags=re.M):
        if not chunk.startswith("// -----// IR Dump After "):
            continue
        header, _, body = chunk.partition("\n")
        match = HEADER.match(header)
        if match is None:
            raise ValueError(f"unexpected dump header: {header[:200]}")
        scope = re.sub(r"^'([^']+)' operation(?:: (@\S+))?$", lambda m: f"{m[1]} {m[2]}" if m[2] else m[1], match[2] or "")
        dumps.append(Dump(match[1], scope, body.strip() + "\n"))
    return dumps


def _run_dir() -> str | None:
    # Probes of one run share the sandbox's work folder (each probe runs in
    # <work>/probe-N); a per-run cache lives beside them and dies with the
    # sandbox. A model the platform's cache does not hold (no warm cache was
    # built, or the program is newer than it) is compiled by the first probe
    # that needs it and read again by the next one.
    folder = os.path.join(os.path.dirname(os.getcwd()), "mlir-dumps")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    return folder


def _compile_log(source: str, flags: tuple[str, ...]) -> bytes:
    """Run iree-compile on ``source`` and return what it printed: the dumps."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out, err = (os.path.join(tmp, name) for name in ("model.mlir", "out.mlir", "dumps.txt"))
        with open(src, "w", encoding="utf-8") as fh:
            fh.write(source)
        with open(err, "wb") as fh:
            done = subprocess.run(
                [binaries.find_tool("iree-compile"), src, *flags, "-o", out],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=fh, check=False,
            )  # fmt: skip
        with open(err, "rb") as fh:
            log = fh.read()
    if done.returncode != 0:
        raise RuntimeError(f"iree-compile failed ({done.returncode}): {log[-2000:].decode('utf-8', 'replace')}")
    return log


def compile_dumps(source: str, extra_flags: tuple[str, ...] = ()) -> list[Dump]:
    """Compile MLIR source with iree-compile and return its IR dumps, in pass order.

    The probes' programs are fixed, so their dumps come from the platform's
    compile cache (runner/compile_cache.py, filled when the sandbox
    environment is built), else from this run's cache, else from iree-compile.
    """
    flags = (*FLAGS, *extra_flags)
    log = compile_cache.cached("iree-compile-dumps", [*flags, source], lambda: _compile_log(source, flags), run_dir=_run_dir())
    return split_dumps(log.decode("utf-8"))


# ---------------------------------------------------------------- calling the candidate


def _index_answer(answer: Any, dumps: list[Dump], listed: str, what: str) -> Any:
    """None, or {"index", "pass", "op", <listed>}: the candidate's answer with the pass it points at."""
    if answer is None:
        return None
    if not isinstance(answer, dict) or "index" not in answer or listed not in answer:
        return {"error": f"{what} must return None or a dict with keys 'index' and {listed!r}; got {answer!r:.300}"}
    index = answer["index"]
    if isinstance(index, bool) or not isinstance(index, int | np.integer) or not 0 <= int(index) < len(dumps):
        return {"error": f"'index' must be an int from 0 to {len(dumps) - 1} (a position in dumps); got {index!r:.100}"}
    names = answer[listed]
    if isinstance(names, str) or not isinstance(names, list | tuple | set | frozenset):
        return {"error": f"{listed!r} must be a list of op names; got {names!r:.300}"}
    dump = dumps[int(index)]
    return {"index": int(index), "pass": dump.pass_name, "op": dump.op, listed: sorted({str(n) for n in names})}


def matmul_case(solution: Any, source: str, flags: tuple[str, ...] = ()) -> Any:
    dumps = compile_dumps(source, flags)
    return _index_answer(solution.matmul_lowered(list(dumps)), dumps, "became", "matmul_lowered")


def vector_case(solution: Any, source: str, flags: tuple[str, ...] = ()) -> Any:
    dumps = compile_dumps(source, flags)
    return _index_answer(solution.first_vector_pass(list(dumps)), dumps, "ops", "first_vector_pass")


def dispatch_case(solution: Any, source: str, flags: tuple[str, ...] = ()) -> Any:
    answer = solution.dispatch_count(list(compile_dumps(source, flags)))
    try:
        return {key: int(answer[key]) for key in ("dispatches", "executables")}
    except Exception:  # noqa: BLE001 - reported by the check
        return {"error": f"dispatch_count must return {{'dispatches': int, 'executables': int}}; got {answer!r:.300}"}


def tiles_case(solution: Any, source: str, flags: tuple[str, ...] = ()) -> Any:
    answer = solution.tile_sizes(list(compile_dumps(source, flags)))
    if not isinstance(answer, dict):
        return {"error": f"tile_sizes must return a dict keyed by dispatch function name; got {answer!r:.300}"}
    out: dict[str, Any] = {}
    for name, entry in answer.items():
        try:
            out[str(name)] = {
                "root": str(entry["root"]),
                "pipeline": None if entry["pipeline"] is None else str(entry["pipeline"]),
                "workgroup": [int(v) for v in entry["workgroup"]],
                "vector": [int(v) for v in entry["vector"]],
            }
        except Exception:  # noqa: BLE001 - reported by the check
            return {"error": f"tile_sizes[{name!r}] must have 'root', 'pipeline', 'workgroup' and 'vector'; got {entry!r:.300}"}
    return {"functions": out}


# ---------------------------------------------------------------- many calls in one process


def _dispatch_answer(answer: Any) -> Any:
    """dispatch_count's answer normalised as ``dispatch_case`` does it."""
    try:
        return {key: int(answer[key]) for key in ("dispatches", "executables")}
    except Exception:  # noqa: BLE001 - reported by the check
        return {"error": f"dispatch_count must return {{'dispatches': int, 'executables': int}}; got {answer!r:.300}"}


def _tiles_answer(answer: Any) -> Any:
    """tile_sizes' answer normalised as ``tiles_case`` does it."""
    if not isinstance(answer, dict):
        return {"error": f"tile_sizes must return a dict keyed by dispatch function name; got {answer!r:.300}"}
    out: dict[str, Any] = {}
    for name, entry in answer.items():
        try:
            out[str(name)] = {
                "root": str(entry["root"]),
                "pipeline": None if entry["pipeline"] is None else str(entry["pipeline"]),
                "workgroup": [int(v) for v in entry["workgroup"]],
                "vector": [int(v) for v in entry["vector"]],
            }
        except Exception:  # noqa: BLE001 - reported by the check
            return {"error": f"tile_sizes[{name!r}] must have 'root', 'pipeline', 'workgroup' and 'vector'; got {entry!r:.300}"}
    return {"functions": out}


#: The four functions, in the order a probe that calls them all asks them.
FUNCTIONS = ("matmul_lowered", "dispatch_count", "first_vector_pass", "tile_sizes")


def answer_of(function: str, answer: Any, dumps: list[Dump]) -> Any:
    """``function``'s answer on ``dumps`` normalised as its own probes normalise it (what the checks compare)."""
    if function == "matmul_lowered":
        return _index_answer(answer, dumps, "became", "matmul_lowered")
    if function == "first_vector_pass":
        return _index_answer(answer, dumps, "ops", "first_vector_pass")
    if function == "dispatch_count":
        return _dispatch_answer(answer)
    return _tiles_answer(answer)
