"""Read an IREE compile's IR dumps and answer four questions about them.

Write the four functions below. Each gets ``dumps``, the list of IR dumps of
one compile in pass order (see ``Dump``), and answers one question; the
statement defines each answer exactly. The drafts below read the dumps as
text, and text is not IR: run them, compare with the expected answers that
Run shows, and rewrite them with the MLIR Python bindings (``from
iree.compiler import ir``).

Below the functions is ``compile_dumps``, the code the probes use to compile
a program and split its dumps, for your local experiments.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from typing import Any, NamedTuple

from iree.compiler import ir  # noqa: F401  (the bindings: ir.Context, ir.Module.parse, ...)
from iree.compiler.tools import binaries


def matmul_lowered(dumps: Sequence[Dump]) -> dict[str, Any] | None:
    """First draft: the first dump whose text does not mention linalg.matmul."""
    for i, dump in enumerate(dumps):
        if "linalg.matmul" not in dump.ir:
            return {"index": i, "became": []}
    return None


def dispatch_count(dumps: Sequence[Dump]) -> dict[str, int]:
    """First draft: the dispatch regions right after they are formed."""
    for dump in dumps:
        if dump.pass_name == "iree-dispatch-creation-form-dispatch-regions":
            regions = dump.ir.count("flow.dispatch.region")
            return {"dispatches": regions, "executables": regions}
    return {"dispatches": 0, "executables": 0}


def first_vector_pass(dumps: Sequence[Dump]) -> dict[str, Any] | None:
    """First draft: the first dump that says 'vector' anywhere."""
    for i, dump in enumerate(dumps):
        if "vector" in dump.ir:
            return {"index": i, "ops": sorted(set(re.findall(r"vector\.\w+", dump.ir)))}
    return None


def tile_sizes(dumps: Sequence[Dump]) -> dict[str, dict[str, Any]]:
    """First draft: the first lowering_config printed in the first dump that has one."""
    for dump in dumps:
        config = re.search(r"lowering_config<([^>]*)>", dump.ir)
        function = re.search(r"func\.func @(\w+)\(\)", dump.ir)
        if config and function:
            levels = dict(re.findall(r"(\w+) = \[([\d, ]*)\]", config.group(1)))
            sizes = [int(v) for v in levels.get("vector_common_parallel", "").split(",") if v.strip()]
            return {function.group(1): {"root": "linalg.matmul", "pipeline": None, "workgroup": sizes, "vector": sizes}}
    return {}


# ---------------------------------------------------------------- given: compiling and splitting the dumps


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


def compile_dumps(source: str, extra_flags: tuple[str, ...] = ()) -> list[Dump]:
    """Compile MLIR source with iree-compile and return its IR dumps, in pass order."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out, err = (os.path.join(tmp, name) for name in ("model.mlir", "out.mlir", "dumps.txt"))
        with open(src, "w", encoding="utf-8") as fh:
            fh.write(source)
        with open(err, "wb") as fh:
            done = subprocess.run(
                [binaries.find_tool("iree-compile"), src, *FLAGS, *extra_flags, "-o", out],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=fh, check=False,
            )  # fmt: skip
        with open(err, encoding="utf-8") as fh:
            text = fh.read()
    if done.returncode != 0:
        raise RuntimeError(f"iree-compile failed ({done.returncode}): {text[-2000:]}")
    return split_dumps(text)


# Example (run it locally):
#
#   MATMUL = '''
#   func.func @main(%a: tensor<64x128xf32>, %b: tensor<128x256xf32>) -> tensor<64x256xf32> {
#     %zero = arith.constant 0.0 : f32
#     %empty = tensor.empty() : tensor<64x256xf32>
#     %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x256xf32>) -> tensor<64x256xf32>
#     %c = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>)
#                        outs(%acc : tensor<64x256xf32>) -> tensor<64x256xf32>
#     return %c : tensor<64x256xf32>
#   }
#   '''
#   dumps = compile_dumps(MATMUL)                       # about a second; ~100 dumps
#   print(len(dumps), [d.pass_name for d in dumps[:5]])
#   print(matmul_lowered(dumps), dispatch_count(dumps), first_vector_pass(dumps), tile_sizes(dumps))
