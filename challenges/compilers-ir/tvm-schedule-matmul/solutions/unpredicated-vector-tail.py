"""Splits j with ``disable_predication=True``, to keep the vector lanes.

The statement's "Going further" explains that a tail on j puts a guard
inside the vectorized loop and costs the lanes. Switching the guard off
removes it, and the structure is still the required one. But without the
predicate the last j tile runs past N: the update reads ``B[k, j]`` for
j >= N (the next row of B, or past its end) and the write-back copies
``C[i, j]`` for j >= N, which is the start of the next row of C, or past
the end of C for the last row. Confirmed outside the grader: TVM's own
``tvm.s_tir.analysis.OOBChecker()`` refuses the scheduled module (the copy
block writes outside C), the block iterator ``v_j`` can exceed N - 1
(``T.axis.spatial(N, j_0 * tj + j_1)`` with no ``T.where``), and against
numpy the first elements of rows are overwritten with the previous row's
garbage (or the process aborts on heap corruption when the last row writes
past C's end).
"""

from __future__ import annotations

import tvm


def schedule_matmul(sch: tvm.s_tir.Schedule, tiles: dict[str, int]) -> tvm.s_tir.Schedule:
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, tiles["i"]])
    j0, j1 = sch.split(j, factors=[None, tiles["j"]], disable_predication=True)  # the mistake
    k0, k1 = sch.split(k, factors=[None, tiles["k"]])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch
