"""Reads the IR correctly, but asks each question at the wrong place in the pipeline.

The parsing is right (the bindings, every op walked); the mistakes are
about where things happen in IREE's pipeline:

- matmul: "the pass that removed linalg.matmul" taken as the first dump
  whose count of linalg.matmul ops *drops*. With two identical matmuls
  that is iree-flow-deduplicate-executables, which deletes the duplicate
  executable: nothing was lowered yet.
- dispatch: counts ``hal.executable.export`` ops in the last dump, as if
  exports were launches and the flow phase's executables were the HAL
  ones. Identical dispatches share one export, and data tiling adds
  encoding executables in the stream phase.
- vector: keeps the *last* dump in which vector ops appear again after a
  dump without any. With two executables, the first one's vector ops are
  lowered to the LLVM dialect before the second is vectorized.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from iree.compiler import ir


def _counts(dumps: Sequence[Any]) -> list[Counter[str]]:
    ctx = ir.Context()
    out = []
    for dump in dumps:
        names: Counter[str] = Counter()

        def visit(op: ir.Operation, names: Counter[str] = names) -> ir.WalkResult:
            names[op.name] += 1
            return ir.WalkResult.ADVANCE

        ir.Module.parse(dump.ir, ctx).operation.walk(visit)
        out.append(names)
    return out


def matmul_lowered(dumps: Sequence[Any]) -> dict[str, Any] | None:
    counts = _counts(dumps)
    for i in range(1, len(counts)):
        if counts[i]["linalg.matmul"] < counts[i - 1]["linalg.matmul"]:
            return {"index": i, "became": sorted(set(counts[i]) - set(counts[i - 1]))}
    return None


def dispatch_count(dumps: Sequence[Any]) -> dict[str, int]:
    exports = _counts(dumps)[-1]["hal.executable.export"]
    return {"dispatches": exports, "executables": exports}


def first_vector_pass(dumps: Sequence[Any]) -> dict[str, Any] | None:
    answer, before = None, False
    for i, names in enumerate(_counts(dumps)):
        vector_ops = sorted(n for n in names if n.startswith("vector."))
        if vector_ops and not before:
            answer = {"index": i, "ops": vector_ops}
        before = bool(vector_ops)
    return answer


LEVEL = re.compile(r"(\w+) = \[([-\d, ]*)\]")


def _levels(config: ir.Attribute) -> dict[str, list[int]]:
    return {k: [int(x) for x in v.split(",") if x.strip()] for k, v in LEVEL.findall(str(config))}


def _dispatch_functions(module: ir.Module) -> list[ir.Operation]:
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.func" and "translation_info" in op.attributes and op.parent.parent.name == "hal.executable.variant":
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def _configured_ops(func: ir.Operation) -> list[tuple[str, dict[str, list[int]]]]:
    """Every op of func that has a lowering_config, in walk order, with its levels."""
    found: list[tuple[str, dict[str, list[int]]]] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if "lowering_config" in op.attributes:
            found.append((op.name, _levels(op.attributes["lowering_config"])))
        return ir.WalkResult.ADVANCE

    func.walk(visit)
    return found


def tile_sizes(dumps: Sequence[Any]) -> dict[str, dict[str, Any]]:
    ctx = ir.Context()
    found: dict[str, dict[str, Any]] = {}
    for dump in dumps:
        module = ir.Module.parse(dump.ir, ctx)
        for func in _dispatch_functions(module):
            name = ir.StringAttr(func.attributes["sym_name"]).value
            roots = [(op, levels) for op, levels in _configured_ops(func) if "distribution" in levels]
            if name in found or len(roots) != 1:
                continue
            op_name, levels = roots[0]
            parallel = levels.get("vector_common_parallel", [0] * len(levels["distribution"]))
            reduction = levels.get("vector_reduction", [0] * len(levels["distribution"]))
            pipeline = re.search(r"pipeline<(\w+)>", str(func.attributes["translation_info"]))
            found[name] = {
                "root": op_name,
                "pipeline": pipeline.group(1) if pipeline else None,
                "workgroup": levels["distribution"],
                "vector": [p or r for p, r in zip(parallel, reduction, strict=False)],
            }
    return found
