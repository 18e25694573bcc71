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


# Each buffer the kernel is given lies inside a larger allocation of the probe's own, between guard zones filled
# with a canary (a quiet NaN whose payload names the buffer). A schedule that reads or writes past a buffer (a split
# whose tail predicate was switched off, an unguarded copy) then meets the canary, not the C heap: its results are
# the same on every run, and a write past a buffer is seen as the canary changed. Without the guards such a write
# landed in whatever the allocator had put there: the probe passed, gave wrong values, or aborted on a corrupted heap,
# so one wrong solution scored differently from run to run. The canaries differ per buffer, so a value read from
# A's or B's guard and written past C is not mistaken for C's own canary.
CANARY_BITS = {"A": 0x7FC0A0A1, "B": 0x7FC0B0B1, "C": 0x7FC0C0C1}
GUARD_BEFORE = 1024  # float32 elements before each buffer (a multiple of 16: the buffer stays 64-byte aligned)


def guard_after(rows: int, cols: int, tiles: dict[str, int]) -> int:
    """float32 elements of guard after a rows x cols buffer: enough for any loop of the schedule to run a whole tile
    past the end of each axis (a tile past the last row, and a tile past the last column of that row)."""
    widest = max([64, *(int(t) for t in tiles.values())])
    return widest * (cols + 1) + 64


class Guarded:
    """A float32 matrix inside a guarded allocation: ``view`` is the buffer, ``tensor`` a zero-copy TVM tensor of it."""

    def __init__(self, name: str, values: np.ndarray, after: int) -> None:
        self.name = name
        self.size = values.size
        self.whole = np.empty(GUARD_BEFORE + self.size + after + 16, dtype=np.float32)
        self.whole.view(np.uint32)[:] = CANARY_BITS[name]
        self.start = (-self.whole.ctypes.data // 4) % 16 + GUARD_BEFORE  # 64-byte aligned, as TVM's own buffers
        self.view = self.whole[self.start : self.start + self.size].reshape(values.shape)
        self.view[...] = values
        self.tensor = tvm.runtime.from_dlpack(self.view)

    def written_outside(self) -> dict[str, int]:
        """How many guard elements before and after the buffer no longer hold the canary."""
        bits = self.whole.view(np.uint32)
        before = int(np.count_nonzero(bits[: self.start] != CANARY_BITS[self.name]))
        after = int(np.count_nonzero(bits[self.start + self.size :] != CANARY_BITS[self.name]))
        return {"before": before, "after": after} if before or after else {}


def run_product(solution: Any, M: int, N: int, K: int, tiles: dict[str, int], seed: int, timed: bool = False) -> dict[str, Any]:
    """Compile the candidate's schedule, run it on guarded buffers, and (if ``timed``) time it against the naive
    schedule. ``outside`` maps a buffer to how much of its guards the run wrote (empty when none)."""
    module = tvm.compile(scheduled(solution, M, N, K, tiles).mod, target="llvm").jit()
    a = Guarded("A", operand(M, K, seed), guard_after(M, K, tiles))
    b = Guarded("B", operand(K, N, seed + 1), guard_after(K, N, tiles))
    c = Guarded("C", np.full((M, N), np.nan, dtype=np.float32), guard_after(M, N, tiles))  # untouched elements stay NaN
    module["main"](a.tensor, b.tensor, c.tensor)
    outside = {g.name: w for g in (a, b, c) if (w := g.written_outside())}
    obs: dict[str, Any] = {"shape": [M, N, K], "tiles": dict(tiles), "seed": seed, "C": c.view.copy(), "outside": outside}
    if timed:
        naive = tvm.compile(tvm.IRModule({"main": naive_matmul(M, N, K)}), target="llvm").jit()
        scratch = Guarded("C", np.zeros((M, N), dtype=np.float32), guard_after(M, N, tiles))
        obs["naive_ms"] = _median_ms(naive, [a.tensor, b.tensor, scratch.tensor])
        obs["yours_ms"] = _median_ms(module, [a.tensor, b.tensor, scratch.tensor])
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
