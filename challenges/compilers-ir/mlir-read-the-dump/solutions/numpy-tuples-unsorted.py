"""Correct, written differently (red team round 2): op-name tables and NumPy masks, loose return types.

Per dump, the op names of a pre-order walk (with repeats); the answers are
found with NumPy masks over their counts. It returns tuples, NumPy ints, and
op-name lists unsorted and with repeats, all of which the statement allows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from iree.compiler import ir


def _tables(dumps: Sequence[Any]):
    """For each dump: the op names in pre-order walk order (with repeats)."""
    ctx = ir.Context()
    out = []
    for dump in dumps:
        module = ir.Module.parse(dump.ir, ctx)
        names: list[str] = []

        def visit(op, names=names):
            names.append(op.name)
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
        out.append(names)
    return out


def _count(tables, name):
    return np.array([t.count(name) for t in tables], dtype=np.int64)


def matmul_lowered(dumps):
    tables = _tables(dumps)
    if len(tables) < 2:
        return None
    mm = _count(tables, "linalg.matmul")
    hits = np.flatnonzero((mm[1:] == 0) & (mm[:-1] > 0)) + 1
    if hits.size == 0:
        return None
    i = hits[0]
    before = set(tables[i - 1])
    return {"index": i, "became": [n for n in tables[i] if n not in before]}


def dispatch_count(dumps):
    tables = _tables(dumps)
    exe = _count(tables, "flow.executable")
    idx = np.flatnonzero(exe > 0)
    if idx.size == 0:
        return {"dispatches": np.int64(0), "executables": np.int64(0)}
    last = idx[-1]
    return {"dispatches": np.int64(tables[last].count("flow.dispatch")), "executables": exe[last]}


def first_vector_pass(dumps):
    for i, names in enumerate(_tables(dumps)):
        vec = [n for n in names if n.startswith("vector.")]
        if vec:
            return {"index": np.int64(i), "ops": vec[::-1]}
    return None


_LEVEL = re.compile(r"([a-z_]+)\s*=\s*\[([^\]]*)\]")


def _levels(text: str) -> dict[str, tuple]:
    return {k: tuple(np.int64(x) for x in v.replace(" ", "").split(",") if x) for k, v in _LEVEL.findall(text)}


def tile_sizes(dumps):
    ctx = ir.Context()
    found: dict[str, dict[str, Any]] = {}
    for dump in dumps:
        module = ir.Module.parse(dump.ir, ctx)
        funcs = []

        def visit(op, funcs=funcs):
            if op.name == "hal.executable.variant":
                for region in op.regions:
                    for block in region.blocks:
                        for inner in block.operations:
                            if inner.operation.name == "builtin.module":
                                for b in inner.operation.regions[0].blocks:
                                    funcs.extend(f.operation for f in b.operations if f.operation.name == "func.func")
                return ir.WalkResult.SKIP
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
        for func in funcs:
            name = str(func.attributes["sym_name"]).strip('"')
            if name in found or "translation_info" not in func.attributes:
                continue
            roots = []

            def find(op, roots=roots):
                if "lowering_config" in op.attributes:
                    lv = _levels(str(op.attributes["lowering_config"]))
                    if "distribution" in lv:
                        roots.append((op.name, lv))
                return ir.WalkResult.ADVANCE

            func.walk(find)
            if len(roots) != 1:
                continue
            root, lv = roots[0]
            n = len(lv["distribution"])
            par = np.zeros(n, dtype=np.int64)
            red = np.zeros(n, dtype=np.int64)
            p = lv.get("vector_common_parallel", ())
            r = lv.get("vector_reduction", ())
            par[: len(p)] = p[:n]
            red[: len(r)] = r[:n]
            m = re.search(r"pipeline<([A-Za-z0-9_]+)>", str(func.attributes["translation_info"]))
            found[name] = {
                "root": root,
                "pipeline": m.group(1) if m else None,
                "workgroup": lv["distribution"],
                "vector": tuple(np.where(par != 0, par, red)),
            }
    return found
