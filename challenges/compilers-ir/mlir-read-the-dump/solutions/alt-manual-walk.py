"""Correct alternative: one explicit traversal per dump (regions -> blocks -> operations),
structural navigation to dispatch functions, and a bracket-list parser for lowering configs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from iree.compiler import ir


def _iter_ops(root: ir.Operation):
    """Every op nested under root (root included), via an explicit stack over regions and blocks."""
    stack = [root]
    while stack:
        op = stack.pop()
        yield op
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    stack.append(child.operation)


def _summaries(dumps: Sequence[Any]) -> list[set[str]]:
    ctx = ir.Context()
    out = []
    for dump in dumps:
        module = ir.Module.parse(dump.ir, ctx)
        out.append({op.name for op in _iter_ops(module.operation)})
        del module
    return out


def matmul_lowered(dumps: Sequence[Any]) -> dict[str, Any] | None:
    names = _summaries(dumps)
    for i in range(1, len(names)):
        if "linalg.matmul" in names[i - 1] and "linalg.matmul" not in names[i]:
            return {"index": i, "became": sorted(names[i] - names[i - 1])}
    return None


def dispatch_count(dumps: Sequence[Any]) -> dict[str, int]:
    ctx = ir.Context()
    for dump in reversed(list(dumps)):
        module = ir.Module.parse(dump.ir, ctx)
        launches = executables = 0
        for op in _iter_ops(module.operation):
            if op.name == "flow.dispatch":
                launches += 1
            elif op.name == "flow.executable":
                executables += 1
        if executables:
            return {"dispatches": launches, "executables": executables}
    return {"dispatches": 0, "executables": 0}


def first_vector_pass(dumps: Sequence[Any]) -> dict[str, Any] | None:
    for i, names in enumerate(_summaries(dumps)):
        ops = sorted(n for n in names if n.startswith("vector."))
        if ops:
            return {"index": i, "ops": ops}
    return None


def _level(text: str, key: str) -> list[int] | None:
    start = text.find(key + " = [")
    if start < 0:
        return None
    start = text.index("[", start)
    end = text.index("]", start)
    return json.loads(text[start:end + 1])


def _dispatch_functions(module: ir.Module):
    for top in module.body.operations:
        if top.operation.name != "hal.executable":
            continue
        for region in top.operation.regions:
            for block in region.blocks:
                for variant in block.operations:
                    if variant.operation.name != "hal.executable.variant":
                        continue
                    for vregion in variant.operation.regions:
                        for vblock in vregion.blocks:
                            for inner in vblock.operations:
                                if inner.operation.name != "builtin.module":
                                    continue
                                for iregion in inner.operation.regions:
                                    for iblock in iregion.blocks:
                                        for fn in iblock.operations:
                                            if fn.operation.name == "func.func":
                                                yield fn.operation


def tile_sizes(dumps: Sequence[Any]) -> dict[str, dict[str, Any]]:
    ctx = ir.Context()
    found: dict[str, dict[str, Any]] = {}
    for dump in dumps:
        module = ir.Module.parse(dump.ir, ctx)
        for fn in _dispatch_functions(module):
            name = ir.StringAttr(fn.attributes["sym_name"]).value
            if name in found or "translation_info" not in fn.attributes:
                continue
            roots = []
            for op in _iter_ops(fn):
                if "lowering_config" in op.attributes:
                    text = str(op.attributes["lowering_config"])
                    dist = _level(text, "distribution")
                    if dist is not None:
                        roots.append((op.name, text, dist))
            if len(roots) != 1:
                continue
            root, text, dist = roots[0]
            par = _level(text, "vector_common_parallel") or []
            red = _level(text, "vector_reduction") or []
            vec = []
            for d in range(len(dist)):
                p = par[d] if d < len(par) else 0
                r = red[d] if d < len(red) else 0
                vec.append(p if p != 0 else r)
            ti = str(fn.attributes["translation_info"])
            pipeline = None
            k = ti.find(".pipeline<")
            if k >= 0:
                pipeline = ti[k + len(".pipeline<"):ti.index(">", k)]
            found[name] = {"root": root, "pipeline": pipeline, "workgroup": dist, "vector": vec}
        del module
    return found
