"""Schedule a tiled matmul with TVM's TensorIR (apache-tvm 0.27).

Write ``schedule_matmul(sch, tiles)``: transform the naive matmul in ``sch``
into the loop nest the statement requires, and return the schedule. The
version below leaves the naive loops as they are: correct, and slow.

Below it are the helpers the probes use, for your local experiments: run
this file to print your scheduled TIR, check it against numpy on a shape
with tails, and time it against the naive schedule. The probes build their
own copies; you do not need to keep these.
"""

from __future__ import annotations

import time

import numpy as np
import tvm
from tvm import te


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    """Tile, reorder, cache, vectorize and parallelize the block "C" of ``sch``.

    ``tiles`` is {"i": ti, "j": tj, "k": tk}. The naive loops are i, j, k:
    ``sch.get_loops(sch.get_sblock("C"))``.
    """
    # TODO: split, reorder, cache_write + reverse_compute_at, vectorize, parallel.
    return sch


# ---------------------------------------------------------------- helpers for local experiments


def naive_matmul(M: int, N: int, K: int) -> tvm.tirx.PrimFunc:
    """C[i, j] = sum_k A[i, k] * B[k, j] in float32: one block "C" under the loops i, j, k."""
    A = te.placeholder((M, K), "float32", name="A")
    B = te.placeholder((K, N), "float32", name="B")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C])


def build(M: int, N: int, K: int, tiles: dict[str, int] | None) -> tvm.runtime.Module:
    """Compile the naive matmul (``tiles=None``) or your schedule of it for the CPU."""
    sch = tvm.s_tir.Schedule(naive_matmul(M, N, K))
    if tiles is not None:
        sch = schedule_matmul(sch, dict(tiles))
    return tvm.compile(sch.mod, target="llvm").jit()


def median_ms(module: tvm.runtime.Module, *args: tvm.runtime.Tensor) -> float:
    module["main"](*args)  # one untimed call first
    timer = module.time_evaluator("main", tvm.cpu(), number=1, repeat=5)
    return float(timer(*args).median * 1e3)


if __name__ == "__main__":
    M, N, K = 45, 37, 29
    tiles = {"i": 16, "j": 8, "k": 4}
    sch = schedule_matmul(tvm.s_tir.Schedule(naive_matmul(M, N, K)), dict(tiles))
    print(sch.mod.script())

    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    c = tvm.runtime.tensor(np.full((M, N), np.nan, dtype=np.float32))  # elements never written stay NaN
    build(M, N, K, tiles)["main"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), c)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = 1e-4 * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
    print("correct:", bool(np.all(np.abs(c.numpy() - exact) <= bound)))

    S = 256
    args = [tvm.runtime.tensor(np.ones((S, S), np.float32)) for _ in range(3)]
    t0 = time.perf_counter()
    naive, yours = median_ms(build(S, S, S, None), *args), median_ms(build(S, S, S, {"i": 32, "j": 32, "k": 4}), *args)
    print(f"{S}-cube: naive {naive:.2f} ms, yours {yours:.2f} ms, speed-up {naive / yours:.1f}x ({time.perf_counter() - t0:.1f} s)")
