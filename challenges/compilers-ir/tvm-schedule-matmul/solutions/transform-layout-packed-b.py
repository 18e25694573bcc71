"""RIGHT (alternative, the statement's "going further" step): the required nest, plus B packed once
into a buffer of its own laid out as [ceil(N / tj), K, tj] (cache_read + transform_layout with pad_value=0.0), so
the vectorized inner j loop reads B at stride 1. The padding reads B only in the branch of a T.if_then_else where
the index is inside B (red team round 4: TVM's OOBChecker ignores that condition)."""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    ti, tj, tk = tiles["i"], tiles["j"], tiles["k"]
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, ti])
    j0, j1 = sch.split(j, factors=[None, tj])
    k0, k1 = sch.split(k, factors=[None, tk])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    packed = sch.cache_read(block, 1, "global")
    sch.transform_layout(packed, ("write", 0), lambda kk, jj: (jj // tj, kk, jj % tj), pad_value=0.0)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
