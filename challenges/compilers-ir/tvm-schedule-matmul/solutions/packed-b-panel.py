"""RIGHT (alternative): the required nest plus a staged read of B.

Same split / reorder / write cache as the statement asks, but B is also staged through a
local cache (cache_read) computed under k_0, so each (j_0, k_0) step copies its tk x tj block
of B (guarded by TVM's tail predicate) before the inner loops reuse it. The cache of B is an
extra block of our own; the update still sits under the six required loops.
"""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    ti, tj, tk = (int(tiles[a]) for a in ("i", "j", "k"))
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, ti])
    j0, j1 = sch.split(j, factors=[None, tj])
    k0, k1 = sch.split(k, factors=[None, tk])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    b_cache = sch.cache_read(block, 1, "local")
    sch.compute_at(b_cache, k0)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
