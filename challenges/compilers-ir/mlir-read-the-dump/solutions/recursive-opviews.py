"""Correct, written differently: one recursive pass over each dump builds a summary.

Instead of ``Operation.walk`` it recurses over regions, blocks and
operations itself. Those come back as OpViews, and some OpViews redefine
``.name`` (a ``func.func``'s is its symbol name), so it reads
``op.operation.name`` everywhere. Dispatch functions are found by
navigating ``hal.executable.variant`` -> its ``builtin.module`` -> the
``func.func`` ops in it, and the pipeline comes from IREE's typed
``TranslationInfoAttr`` binding. The lowering config, which has no typed
binding, is read from its printed form.

The summary keeps each parsed module alive: the ``ir.Operation`` handles it
holds point into the module, and once a module is freed they are invalid
(attribute lookups fail, and the interpreter may crash).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from iree.compiler import ir
from iree.compiler.dialects import iree_codegen


def _ops(op: Any) -> Iterator[ir.Operation]:
    """op and every op nested in it, preorder, as ir.Operation."""
    operation = op.operation
    yield operation
    for region in operation.regions:
        for block in region.blocks:
            for child in block.operations:
                yield from _ops(child)


@dataclass
class Summary:
    module: ir.Module  # keeps the ops below alive
    names: Counter[str] = field(default_factory=Counter)
    dispatch_functions: list[ir.Operation] = field(default_factory=list)


def _summaries(dumps: Sequence[Any]) -> list[Summary]:
    ctx = ir.Context()
    out = []
    for dump in dumps:
        module = ir.Module.parse(dump.ir, ctx)
        summary = Summary(module)
        for op in _ops(module.operation):
            summary.names[op.name] += 1
            if op.name == "hal.executable.variant":
                for inner in op.regions[0].blocks[0].operations:
                    if inner.operation.name == "builtin.module":
                        summary.dispatch_functions += [f.operation for f in inner.regions[0].blocks[0].operations if f.operation.name == "func.func"]
        out.append(summary)
    return out


def matmul_lowered(dumps: Sequence[Any]) -> dict[str, Any] | None:
    had = False
    previous: set[str] = set()
    for i, summary in enumerate(_summaries(dumps)):
        has = summary.names["linalg.matmul"] > 0
        if had and not has:
            return {"index": i, "became": sorted(set(summary.names) - previous)}
        had, previous = has, set(summary.names)
    return None


def dispatch_count(dumps: Sequence[Any]) -> dict[str, int]:
    last = None
    for summary in _summaries(dumps):
        if summary.names["flow.executable"]:
            last = summary.names
    if last is None:
        return {"dispatches": 0, "executables": 0}
    return {"dispatches": last["flow.dispatch"], "executables": last["flow.executable"]}


def first_vector_pass(dumps: Sequence[Any]) -> dict[str, Any] | None:
    for i, summary in enumerate(_summaries(dumps)):
        vector = sorted(n for n in summary.names if n.split(".", 1)[0] == "vector")
        if vector:
            return {"index": i, "ops": vector}
    return None


def _levels(text: str) -> dict[str, list[int]]:
    return {k: [int(x) for x in re.findall(r"-?\d+", v)] for k, v in re.findall(r"(\w+) = \[([^\]]*)\]", text)}


def tile_sizes(dumps: Sequence[Any]) -> dict[str, dict[str, Any]]:
    result: dict[str, dict[str, Any]] = {}
    for summary in _summaries(dumps):
        for func in summary.dispatch_functions:
            name = ir.StringAttr(func.attributes["sym_name"]).value
            if name in result or "translation_info" not in func.attributes:
                continue
            roots = [
                (op.name, levels)
                for op in _ops(func)
                if "lowering_config" in op.attributes
                for levels in [_levels(str(op.attributes["lowering_config"]))]
                if "distribution" in levels
            ]
            if len(roots) != 1:
                continue
            root, levels = roots[0]
            loops = len(levels["distribution"])
            parallel = levels.get("vector_common_parallel", []) + [0] * loops
            reduction = levels.get("vector_reduction", []) + [0] * loops
            info = iree_codegen.TranslationInfoAttr(func.attributes["translation_info"])
            pipeline = re.search(r"<(\w+)>", str(info.pass_pipeline))
            result[name] = {
                "root": root,
                "pipeline": pipeline.group(1) if pipeline else None,
                "workgroup": levels["distribution"],
                "vector": [max(parallel[d], reduction[d]) for d in range(loops)],
            }
    return result
