"""RIGHT (alternative): write cache in "global" scope, the tile loops built with explicit outer factors
ceil(n / t), and the inner i loop unrolled (the compiled probes have i tiles of at most 1000: about a second to
compile; red team round 4)."""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    block = sch.get_sblock("C")
    loops = sch.get_loops(block)
    outer, inner = {}, {}
    for axis, loop in zip("ijk", loops, strict=True):
        n, t = int(sch.get(loop).extent), int(tiles[axis])
        outer[axis], inner[axis] = sch.split(loop, factors=[(n + t - 1) // t, t])
    sch.reorder(outer["i"], outer["j"], outer["k"], inner["i"], inner["k"], inner["j"])
    copy = sch.cache_write(block, 0, "global")
    sch.reverse_compute_at(copy, outer["j"])
    sch.unroll(inner["i"])
    sch.vectorize(inner["j"])
    sch.parallel(outer["i"])
    return sch
