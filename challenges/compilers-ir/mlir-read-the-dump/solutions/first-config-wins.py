"""Right on three questions; on tile sizes it reads the wrong op's configuration, at the wrong level.

Several ops of one dispatch carry a ``lowering_config``: the ``linalg.fill``
that zeroes the accumulator comes first, a fused elementwise op may follow,
and only the root's configuration has a ``distribution`` level. This
solution takes the first configured op of each dispatch function as its
root, reads the workgroup tiles from ``cache_parallel`` (the level that
comes first in the printed attribute) and the vector tiles from
``vector_common_parallel`` alone, which leaves every reduction loop at 0.
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
        if counts[i - 1]["linalg.matmul"] and not counts[i]["linalg.matmul"]:
            return {"index": i, "became": sorted(set(counts[i]) - set(counts[i - 1]))}
    return None


def dispatch_count(dumps: Sequence[Any]) -> dict[str, int]:
    flow = [c for c in _counts(dumps) if c["flow.executable"]]
    if not flow:
        return {"dispatches": 0, "executables": 0}
    return {"dispatches": flow[-1]["flow.dispatch"], "executables": flow[-1]["flow.executable"]}


def first_vector_pass(dumps: Sequence[Any]) -> dict[str, Any] | None:
    for i, names in enumerate(_counts(dumps)):
        vector_ops = sorted(n for n in names if n.startswith("vector."))
        if vector_ops:
            return {"index": i, "ops": vector_ops}
    return None


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
            configured = _configured_ops(func)
            if name in found or not configured:
                continue
            op_name, levels = configured[0]
            pipeline = re.search(r"pipeline<(\w+)>", str(func.attributes["translation_info"]))
            found[name] = {
                "root": op_name,
                "pipeline": pipeline.group(1) if pipeline else None,
                "workgroup": levels.get("cache_parallel", levels.get("distribution", [])),
                # a missing level counts as zeros; every level of a config has one size per loop
                "vector": levels.get("vector_common_parallel", [0] * max(map(len, levels.values()))),
            }
    return found
