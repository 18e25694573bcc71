"""Correct, written differently (red team round 2): typed levels, one context for every call.

Traversal is an explicit recursion over regions -> blocks -> operations; the
levels of a lowering_config are read by re-parsing its parameters as a builtin
dictionary attribute, so the sizes come back as typed IntegerAttrs.
dispatch_count scans the dumps from the end and parses them in one
``ir.Context`` kept for the whole process, across calls: state that cannot
change an answer. The file keeps the starter's ``compile_dumps``.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from iree.compiler import ir
from iree.compiler.tools import binaries


def _ops(op: ir.Operation) -> Iterator[ir.Operation]:
    """Every op nested in ``op`` (all regions, all blocks), op itself first."""
    op = op.operation
    yield op
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield from _ops(inner)


def _parsed(dumps: Sequence[Any]) -> Iterator[tuple[int, ir.Module]]:
    ctx = ir.Context()
    for i, dump in enumerate(dumps):
        yield i, ir.Module.parse(dump.ir, ctx)


def _names(module: ir.Module) -> Counter[str]:
    return Counter(op.name for op in _ops(module.operation))


def matmul_lowered(dumps: Sequence[Any]) -> dict[str, Any] | None:
    previous: Counter[str] | None = None
    for i, module in _parsed(dumps):
        names = _names(module)
        if previous is not None and previous["linalg.matmul"] and not names["linalg.matmul"]:
            return {"index": i, "became": sorted(set(names) - set(previous))}
        previous = names
    return None


def dispatch_count(dumps: Sequence[Any]) -> dict[str, int]:
    for dump in reversed(dumps):
        names = _names(ir.Module.parse(dump.ir, _CTX()))
        if names["flow.executable"]:
            return {"dispatches": names["flow.dispatch"], "executables": names["flow.executable"]}
    return {"dispatches": 0, "executables": 0}


_ctx_holder: list[ir.Context] = []


def _CTX() -> ir.Context:
    if not _ctx_holder:
        _ctx_holder.append(ir.Context())
    return _ctx_holder[0]


def first_vector_pass(dumps: Sequence[Any]) -> dict[str, Any] | None:
    for i, module in _parsed(dumps):
        ops = sorted({n for n in _names(module) if n.startswith("vector.")})
        if ops:
            return {"index": i, "ops": ops}
    return None


def _params(attr: ir.Attribute) -> dict[str, list[int]]:
    """'#iree_cpu.lowering_config<a = [1, 2], b = [3]>' -> {'a': [1, 2], 'b': [3]} via a DictionaryAttr."""
    text = str(attr)
    inner = text[text.index("<") + 1 : text.rindex(">")]
    d = ir.DictAttr(ir.Attribute.parse("{" + inner + "}", attr.context))
    out: dict[str, list[int]] = {}
    for named in d:
        try:
            values = ir.ArrayAttr(named.attr)
        except (ValueError, TypeError):
            continue
        out[named.name] = [ir.IntegerAttr(v).value for v in values]
    return out


def _pipeline(attr: ir.Attribute) -> str | None:
    text = str(attr)
    key = "pipeline<"
    at = text.find(key)
    if at < 0:
        return None
    return text[at + len(key) : text.index(">", at)]


def _is_dispatch_function(op: ir.Operation) -> bool:
    if op.name != "func.func":
        return False
    parent = op.parent
    return parent is not None and parent.name == "builtin.module" and parent.parent is not None and parent.parent.name == "hal.executable.variant"


def _roots(func: ir.Operation) -> list[tuple[str, dict[str, list[int]]]]:
    roots = []
    for op in _ops(func):
        if "lowering_config" in op.attributes:
            levels = _params(op.attributes["lowering_config"])
            if "distribution" in levels:
                roots.append((op.name, levels))
    return roots


def _vector_sizes(levels: dict[str, list[int]]) -> list[int]:
    n = len(levels["distribution"])
    par = levels.get("vector_common_parallel") or [0] * n
    red = levels.get("vector_reduction") or [0] * n
    return [par[d] if par[d] != 0 else red[d] for d in range(n)]


def tile_sizes(dumps: Sequence[Any]) -> dict[str, dict[str, Any]]:
    result: dict[str, dict[str, Any]] = {}
    for _, module in _parsed(dumps):
        for op in _ops(module.operation):
            if not _is_dispatch_function(op):
                continue
            name = ir.StringAttr(op.attributes["sym_name"]).value
            if name in result or "translation_info" not in op.attributes:
                continue
            roots = _roots(op)
            if len(roots) != 1:
                continue
            root, levels = roots[0]
            result[name] = {
                "root": root,
                "pipeline": _pipeline(op.attributes["translation_info"]),
                "workgroup": list(levels["distribution"]),
                "vector": _vector_sizes(levels),
            }
    return result


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


