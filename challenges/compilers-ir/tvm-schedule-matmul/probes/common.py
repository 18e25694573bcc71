"""What the public and hidden probes of tvm-schedule-matmul share, imported by both as ``probe_common``."""

from __future__ import annotations

from typing import Any

import numpy as np
import tvm
from tvm import te

# ---------------------------------------------------------------- building, running and reading a schedule


def naive_matmul(M: int, N: int, K: int) -> Any:
    """C[i, j] = sum_k A[i, k] * B[k, j] in float32: one block "C" under the loops i, j, k."""
    A = te.placeholder((M, K), "float32", name="A")
    B = te.placeholder((K, N), "float32", name="B")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C])


def operand(rows: int, cols: int, seed: int) -> np.ndarray:
    """A float32 matrix with entries in [-1, 1), from a splitmix64 hash of (seed, index).

    Pure integer arithmetic, so the trusted check regenerates exactly the same
    matrix from the seed (probes/checks.py has the same function).
    """
    x = np.arange(rows * cols, dtype=np.uint64) + np.uint64(seed * 0x9E3779B97F4A7C15 % 2**64)
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    # 24 random bits: every value is exact in float32.
    return ((x >> np.uint64(40)).astype(np.float64) / 2.0**23 - 1.0).astype(np.float32).reshape(rows, cols)


def scheduled(solution: Any, M: int, N: int, K: int, tiles: dict[str, int]) -> Any:
    """The candidate's schedule of the naive matmul for this shape and these tiles."""
    sch = tvm.s_tir.Schedule(naive_matmul(M, N, K))
    out = solution.schedule_matmul(sch, dict(tiles))
    if not isinstance(out, tvm.s_tir.Schedule):
        raise TypeError(f"schedule_matmul must return the tvm.s_tir.Schedule it transformed, got {type(out).__name__}")
    return out


def _median_ms(module: Any, args: list[Any]) -> float:
    """The median of 5 timed calls, after one untimed call (information only: never graded)."""
    module["main"](*args)
    timer = module.time_evaluator("main", tvm.cpu(), number=1, repeat=5)
    return float(timer(*args).median * 1e3)


def run_product(solution: Any, M: int, N: int, K: int, tiles: dict[str, int], seed: int, timed: bool = False) -> dict[str, Any]:
    """Compile the candidate's schedule, run it, and (if ``timed``) time it against the naive schedule."""
    module = tvm.compile(scheduled(solution, M, N, K, tiles).mod, target="llvm").jit()
    a = tvm.runtime.tensor(operand(M, K, seed))
    b = tvm.runtime.tensor(operand(K, N, seed + 1))
    c = tvm.runtime.tensor(np.full((M, N), np.nan, dtype=np.float32))  # untouched elements stay NaN
    module["main"](a, b, c)
    obs: dict[str, Any] = {"shape": [M, N, K], "tiles": dict(tiles), "seed": seed, "C": c.numpy()}
    if timed:
        naive = tvm.compile(tvm.IRModule({"main": naive_matmul(M, N, K)}), target="llvm").jit()
        scratch = tvm.runtime.tensor(np.zeros((M, N), dtype=np.float32))
        obs["naive_ms"] = _median_ms(naive, [a, b, scratch])
        obs["yours_ms"] = _median_ms(module, [a, b, scratch])
    return obs


_ITER_KINDS = {0: "spatial", 2: "reduce"}


def loop_nest(func: Any) -> dict[str, Any]:
    """Every loop and every block of a scheduled PrimFunc, as plain data.

    ``loops`` are in pre-order: {"var", "extent" (an int, or the expression as
    text), "kind" ("serial", "parallel", "vectorized", "unrolled", ...),
    "parent" (index of the enclosing loop, or -1)}. ``blocks`` are in
    pre-order too (the root block left out): {"name", "loops" (indices of the
    enclosing loops, outermost first), "at" (how many loops come before it in
    pre-order), "iters" (per block iterator, in order:
    its kind and the indices of the loops its binding uses), "reads",
    "writes" ([buffer name, storage scope] pairs)}.
    """
    loops: list[dict[str, Any]] = []
    blocks: list[dict[str, Any]] = []
    loop_vars: list[Any] = []  # parallel to ``loops``

    def region(regions: Any) -> list[list[str]]:
        return [[str(r.source.name), str(r.source.scope())] for r in regions]

    def visit(node: Any, stack: list[int]) -> None:
        if node is None:
            return
        if isinstance(node, tvm.tirx.For):
            index = len(loops)
            extent = node.extent
            loops.append({
                "var": str(node.loop_var.name),
                "extent": int(extent.value) if isinstance(extent, tvm.tirx.IntImm) else str(extent),
                "kind": tvm.tirx.ForKind(int(node.kind)).name.lower(),
                "parent": stack[-1] if stack else -1,
            })  # fmt: skip
            loop_vars.append(node.loop_var)
            visit(node.body, [*stack, index])
        elif isinstance(node, tvm.s_tir.SBlockRealize):
            block = node.block
            if stack or block.name_hint != "root":
                iters = []
                for iv, value in zip(block.iter_vars, node.iter_values, strict=True):
                    used = tvm.tirx.analysis.undefined_vars(value)
                    iters.append({
                        "kind": _ITER_KINDS.get(int(iv.iter_type), str(int(iv.iter_type))),
                        "loops": [i for i in stack if any(v.same_as(loop_vars[i]) for v in used)],
                    })  # fmt: skip
                blocks.append({
                    "name": str(block.name_hint), "loops": list(stack), "at": len(loops), "iters": iters,
                    "reads": region(block.reads), "writes": region(block.writes),
                })  # fmt: skip
            visit(block.init, stack)
            visit(block.body, stack)
        elif isinstance(node, tvm.tirx.SeqStmt):
            for child in node.seq:
                visit(child, stack)
        else:  # IfThenElse, AllocBuffer, DeclBuffer, AttrStmt, ...: follow their statements
            for attr in ("body", "then_case", "else_case"):
                child = getattr(node, attr, None)
                if isinstance(child, tvm.tirx.Stmt):
                    visit(child, stack)

    visit(func.body, [])
    params = [str(p.name) for p in func.params]
    return {"params": params, "loops": loops, "blocks": blocks}


def structure(solution: Any, M: int, N: int, K: int, tiles: dict[str, int]) -> dict[str, Any]:
    """The loop structure of the candidate's schedule; the checks compare it with the required one."""
    nest = loop_nest(scheduled(solution, M, N, K, tiles).mod["main"])
    return {"shape": [M, N, K], "tiles": dict(tiles), **nest}
