"""Hidden probes for mlir-read-the-dump: they make the score.

Each probe compiles a small program written in linalg on tensors with the
real iree-compile (IREE 3.13, llvm-cpu, a generic x86-64 CPU), splits the IR
dumps it prints after every pass, and asks the candidate one of four
questions about them. A program is compiled once per run: the first probe
that needs it compiles it, the later ones read the same dumps from the run's
work folder (the candidate's code could overwrite that file, which would only
falsify its own answers). The answers are compared outside the sandbox with
the reference's (``probes/checks.py``).

The programs and what makes each one worth asking about:

- ``TWO_SAME``: two matmuls of the same shapes. Two dispatches but one
  executable: ``iree-flow-deduplicate-executables`` drops the copy, and with
  it one of the two ``linalg.matmul`` ops, long before codegen.
- ``RESHAPE_ONLY``: a program that only collapses its input's shape. IREE
  turns that into metadata on the host: no dispatch, no executable, no
  vector op, nothing to tile.
- ``PAD_CONV``: a padded convolution. No ``linalg.matmul`` ever; the pad
  becomes a dispatch of its own in ``iree-dispatch-creation-convert-tensor-to-flow``,
  after dispatch regions were formed; the two executables are lowered one
  after the other (vector ops appear, vanish into the LLVM dialect, appear
  again); the conv's root has seven loops.
- ``DATA_TILED``: a matmul compiled with ``--iree-opt-data-tiling``: it
  becomes ``linalg.mmt4d`` when encodings are materialised, and the stream
  phase adds two packing dispatches that were never dispatch regions.
- ``ODD_MATMUL``: a matmul of shapes no vector size divides: loop peeling
  turns one ``linalg.matmul`` into three, and the vectorizer masks (the
  ``vector.yield`` inside ``vector.mask`` is not printed).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile
from typing import Any, NamedTuple

import numpy as np
from iree.compiler.tools import binaries
from probekit import probe

# ---------------------------------------------------------------- compiling and splitting the dumps
# (the same code as in the starter's compile_dumps, plus a per-run cache)


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


def _cache_dir() -> str | None:
    # Probes of one run share the sandbox's work folder (each probe runs in
    # <work>/probe-N); the cache lives beside them and dies with the sandbox.
    # A model compiled by one probe is read again by the next one that needs it.
    folder = os.path.join(os.path.dirname(os.getcwd()), "mlir-dumps")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    return folder


def compile_dumps(source: str, extra_flags: tuple[str, ...] = ()) -> list[Dump]:
    """Compile MLIR source with iree-compile and return its IR dumps, in pass order."""
    flags = (*FLAGS, *extra_flags)
    key = hashlib.sha256("\0".join((source, *flags)).encode()).hexdigest()[:24]
    cache = _cache_dir()
    cached = os.path.join(cache, f"{key}.txt") if cache else None
    if cached and os.path.exists(cached):
        with open(cached, encoding="utf-8") as fh:
            return split_dumps(fh.read())
    with tempfile.TemporaryDirectory() as tmp:
        src, out, err = (os.path.join(tmp, name) for name in ("model.mlir", "out.mlir", "dumps.txt"))
        with open(src, "w", encoding="utf-8") as fh:
            fh.write(source)
        with open(err, "wb") as fh:
            done = subprocess.run(
                [binaries.find_tool("iree-compile"), src, *flags, "-o", out],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=fh, check=False,
            )  # fmt: skip
        with open(err, encoding="utf-8") as fh:
            text = fh.read()
        if done.returncode != 0:
            raise RuntimeError(f"iree-compile failed ({done.returncode}): {text[-2000:]}")
        if cached:
            with open(cached + ".part", "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(cached + ".part", cached)
    return split_dumps(text)


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


# ---------------------------------------------------------------- the programs

TWO_SAME = """
func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x64xf32>) -> tensor<64x64xf32>
  %ab = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  %abc = linalg.matmul ins(%ab, %c : tensor<64x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %abc : tensor<64x64xf32>
}
"""

RESHAPE_ONLY = """
func.func @main(%x: tensor<4x6x8xf32>) -> tensor<24x8xf32> {
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<4x6x8xf32> into tensor<24x8xf32>
  return %flat : tensor<24x8xf32>
}
"""

PAD_CONV = """
func.func @main(%x: tensor<1x14x14x8xf32>, %w: tensor<3x3x8x16xf32>) -> tensor<1x14x14x16xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%n: index, %h: index, %w_: index, %c: index):
    tensor.yield %zero : f32
  } : tensor<1x14x14x8xf32> to tensor<1x16x16x8xf32>
  %empty = tensor.empty() : tensor<1x14x14x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x14x14x16xf32>) -> tensor<1x14x14x16xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : tensor<1x16x16x8xf32>, tensor<3x3x8x16xf32>) outs(%acc : tensor<1x14x14x16xf32>) -> tensor<1x14x14x16xf32>
  return %y : tensor<1x14x14x16xf32>
}
"""

DATA_TILED = """
func.func @main(%a: tensor<32x64xf32>, %b: tensor<64x128xf32>) -> tensor<32x128xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x128xf32>) -> tensor<32x128xf32>
  %c = linalg.matmul ins(%a, %b : tensor<32x64xf32>, tensor<64x128xf32>) outs(%acc : tensor<32x128xf32>) -> tensor<32x128xf32>
  return %c : tensor<32x128xf32>
}
"""
DATA_TILING = ("--iree-opt-data-tiling",)

ODD_MATMUL = """
func.func @main(%a: tensor<33x100xf32>, %b: tensor<100x17xf32>) -> tensor<33x17xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<33x17xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<33x17xf32>) -> tensor<33x17xf32>
  %c = linalg.matmul ins(%a, %b : tensor<33x100xf32>, tensor<100x17xf32>) outs(%acc : tensor<33x17xf32>) -> tensor<33x17xf32>
  return %c : tensor<33x17xf32>
}
"""


# ---------------------------------------------------------------- matmul


@probe(category="matmul", check="matmul_matches", hints=["last-one-gone", "walk-ops"])
def two_same_matmuls_lowered(solution: Any) -> Any:
    """matmul_lowered on two matmuls of the same shapes."""
    return matmul_case(solution, TWO_SAME)


@probe(category="matmul", check="matmul_matches", hints=["last-one-gone"])
def padded_conv_lowered(solution: Any) -> Any:
    """matmul_lowered on a padded convolution."""
    return matmul_case(solution, PAD_CONV)


@probe(category="matmul", check="matmul_matches", hints=["last-one-gone", "walk-ops"])
def data_tiled_matmul_lowered(solution: Any) -> Any:
    """matmul_lowered on a matmul compiled with data tiling."""
    return matmul_case(solution, DATA_TILED, DATA_TILING)


@probe(category="matmul", check="matmul_matches", hints=["text-is-not-ir", "walk-ops"])
def odd_matmul_lowered(solution: Any) -> Any:
    """matmul_lowered on a matmul whose shapes no vector size divides."""
    return matmul_case(solution, ODD_MATMUL)


# ---------------------------------------------------------------- dispatch


@probe(category="dispatch", check="dispatches_match", hints=["flow-phase"])
def two_same_matmuls_dispatches(solution: Any) -> Any:
    """dispatch_count on two matmuls of the same shapes."""
    return dispatch_case(solution, TWO_SAME)


@probe(category="dispatch", check="dispatches_match", hints=["flow-phase"])
def reshape_only_dispatches(solution: Any) -> Any:
    """dispatch_count on a program that only reshapes its input."""
    return dispatch_case(solution, RESHAPE_ONLY)


@probe(category="dispatch", check="dispatches_match", hints=["flow-phase"])
def padded_conv_dispatches(solution: Any) -> Any:
    """dispatch_count on a padded convolution."""
    return dispatch_case(solution, PAD_CONV)


@probe(category="dispatch", check="dispatches_match", hints=["flow-phase"])
def data_tiled_matmul_dispatches(solution: Any) -> Any:
    """dispatch_count on a matmul compiled with data tiling."""
    return dispatch_case(solution, DATA_TILED, DATA_TILING)


# ---------------------------------------------------------------- vector


@probe(category="vector", check="vector_matches", hints=["text-is-not-ir"])
def reshape_only_vector(solution: Any) -> Any:
    """first_vector_pass on a program that only reshapes its input."""
    return vector_case(solution, RESHAPE_ONLY)


@probe(category="vector", check="vector_matches", hints=["first-not-last", "text-is-not-ir"])
def padded_conv_vector(solution: Any) -> Any:
    """first_vector_pass on a padded convolution."""
    return vector_case(solution, PAD_CONV)


@probe(category="vector", check="vector_matches", hints=["first-not-last", "text-is-not-ir"])
def data_tiled_matmul_vector(solution: Any) -> Any:
    """first_vector_pass on a matmul compiled with data tiling."""
    return vector_case(solution, DATA_TILED, DATA_TILING)


@probe(category="vector", check="vector_matches", hints=["text-is-not-ir", "walk-ops"])
def odd_matmul_vector(solution: Any) -> Any:
    """first_vector_pass on a matmul whose shapes no vector size divides."""
    return vector_case(solution, ODD_MATMUL)


# ---------------------------------------------------------------- tiles


@probe(category="tiles", check="tiles_match", hints=["root-op", "config-levels"])
def two_same_matmuls_tiles(solution: Any) -> Any:
    """tile_sizes on two matmuls of the same shapes."""
    return tiles_case(solution, TWO_SAME)


@probe(category="tiles", check="tiles_match", hints=["root-op", "config-levels", "attrs-not-lines"])
def padded_conv_tiles(solution: Any) -> Any:
    """tile_sizes on a padded convolution."""
    return tiles_case(solution, PAD_CONV)


@probe(category="tiles", check="tiles_match", hints=["root-op", "config-levels", "attrs-not-lines"])
def data_tiled_matmul_tiles(solution: Any) -> Any:
    """tile_sizes on a matmul compiled with data tiling."""
    return tiles_case(solution, DATA_TILED, DATA_TILING)


@probe(category="tiles", check="tiles_match", hints=["root-op", "config-levels"])
def odd_matmul_tiles(solution: Any) -> Any:
    """tile_sizes on a matmul whose shapes no vector size divides."""
    return tiles_case(solution, ODD_MATMUL)
