"""Counts the launches among the host functions' own ops, one level deep.

Everything else is right. The mistake is in dispatch_count: it looks for
``flow.dispatch`` ops in the blocks of each ``util.func`` at the module's top
level, as a program that is one straight line of launches would have them.
A host program with control flow (an ``scf.if`` choosing between two
computations) launches its dispatches from inside the branches' regions, so
this pass counts none of them. The rule counts every ``flow.dispatch`` op in
the dump, nested ones included.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from iree.compiler import ir


def _modules(dumps: Sequence[Any]) -> Iterator[tuple[int, ir.Module]]:
    """Parse every dump in one context (dialects load once, types are shared)."""
    ctx = ir.Context()
    for i, dump in enumerate(dumps):
        yield i, ir.Module.parse(dump.ir, ctx)


def _op_counts(module: ir.Module) -> Counter[str]:
    """How many ops of each name the module holds, nested ones included."""
    counts: Counter[str] = Counter()

    def visit(op: ir.Operation) -> ir.WalkResult:
        counts[op.name] += 1  # walk() hands out ir.Operation: .name is the op's name
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return counts


def matmul_lowered(dumps: Sequence[Any]) -> dict[str, Any] | None:
    """The first dump with no linalg.matmul left, right after one that had some."""
    before: Counter[str] | None = None
    for i, module in _modules(dumps):
        counts = _op_counts(module)
        if before is not None and before["linalg.matmul"] > 0 and counts["linalg.matmul"] == 0:
            return {"index": i, "became": sorted(set(counts) - set(before))}
        before = counts
    return None


def _top_level_counts(module: ir.Module) -> Counter[str]:
    """The module's own ops, and the ops in the bodies of its host functions."""
    counts: Counter[str] = Counter()
    for op in module.body.operations:
        counts[op.operation.name] += 1
        if op.operation.name in ("util.func", "func.func"):
            for block in op.regions[0].blocks:
                for inner in block.operations:
                    counts[inner.operation.name] += 1
    return counts


def dispatch_count(dumps: Sequence[Any]) -> dict[str, int]:
    """flow.dispatch ops in the host functions and flow.executable ops, in the last dump that has flow executables."""
    answer = {"dispatches": 0, "executables": 0}
    for _, module in _modules(dumps):
        counts = _top_level_counts(module)
        if counts["flow.executable"]:
            answer = {"dispatches": counts["flow.dispatch"], "executables": counts["flow.executable"]}
    return answer


def first_vector_pass(dumps: Sequence[Any]) -> dict[str, Any] | None:
    """The first dump that holds an op of the vector dialect, and which ones it holds."""
    for i, module in _modules(dumps):
        vector_ops = sorted(name for name in _op_counts(module) if name.startswith("vector."))
        if vector_ops:
            return {"index": i, "ops": vector_ops}
    return None


LEVEL = re.compile(r"(\w+) = \[([-\d, ]*)\]")
PIPELINE = re.compile(r"pipeline = #\w+\.pipeline<(\w+)>")


def _levels(config: ir.Attribute) -> dict[str, list[int]]:
    """'#iree_cpu.lowering_config<distribution = [16, 64, 0], ...>' -> {'distribution': [16, 64, 0], ...}."""
    return {name: [int(v) for v in values.split(",") if v.strip()] for name, values in LEVEL.findall(str(config))}


def _dispatch_functions(module: ir.Module) -> list[ir.Operation]:
    """The func.func ops inside a hal.executable.variant's inner builtin.module."""
    functions: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.func" and op.parent is not None and op.parent.name == "builtin.module":
            grand = op.parent.parent
            if grand is not None and grand.name == "hal.executable.variant":
                functions.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return functions


def _roots(func: ir.Operation) -> list[tuple[str, dict[str, list[int]]]]:
    """The ops of ``func`` whose lowering_config has a distribution level, with their levels."""
    roots: list[tuple[str, dict[str, list[int]]]] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if "lowering_config" in op.attributes:
            levels = _levels(op.attributes["lowering_config"])
            if "distribution" in levels:
                roots.append((op.name, levels))
        return ir.WalkResult.ADVANCE

    func.walk(visit)
    return roots


def tile_sizes(dumps: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """For every dispatch function: its root op, pipeline, workgroup and vector tile sizes, as first configured."""
    found: dict[str, dict[str, Any]] = {}
    for _, module in _modules(dumps):  # the module stays alive while its ops are read
        for func in _dispatch_functions(module):
            name = ir.StringAttr(func.attributes["sym_name"]).value
            if name in found or "translation_info" not in func.attributes:
                continue
            roots = _roots(func)
            if len(roots) != 1:
                continue  # not configured yet (or already lowered past its configuration)
            root, levels = roots[0]
            parallel = levels.get("vector_common_parallel", [])
            reduction = levels.get("vector_reduction", [])
            loops = len(levels["distribution"])
            vector = [(parallel[d] if d < len(parallel) else 0) or (reduction[d] if d < len(reduction) else 0) for d in range(loops)]
            pipeline = PIPELINE.search(str(func.attributes["translation_info"]))
            found[name] = {
                "root": root,
                "pipeline": pipeline.group(1) if pipeline else None,
                "workgroup": levels["distribution"],
                "vector": vector,
            }
    return found
