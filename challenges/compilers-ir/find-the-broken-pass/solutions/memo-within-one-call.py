"""Correct alternative without a change filter: bisect over every dump index, memoising verdicts by text.

The outcomes are 0..n-1 and "none" (n). A plain binary search over n+1 outcomes
needs ceil(log2(n+1)) probes, within ceil(log2(n)) + 2; the memo only avoids
compiling a text twice. Because the predicate is monotone in the dump index,
the boundary found is the first broken dump. Local names `budget` and `calls`
are this function's own bookkeeping (not compile_and_run's counter).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

RTOL, ATOL = 1e-4, 1e-5


def find_broken_pass(
    passes: Sequence[tuple[str, str]],
    inputs: Sequence[np.ndarray],
    expected: Sequence[np.ndarray],
    compile_and_run: Callable[[str, Sequence[np.ndarray]], list[np.ndarray]],
) -> int | None:
    n = len(passes)
    budget = math.ceil(math.log2(max(n, 2))) + 2  # my own ceiling, from the statement
    calls = 0
    exp = [np.asarray(e, dtype=np.float64) for e in expected]
    verdicts: dict[str, bool] = {}

    def good(i: int) -> bool:
        nonlocal calls
        ir = passes[i][1]
        if ir not in verdicts:
            calls += 1
            assert calls <= budget
            outs = compile_and_run(ir, inputs)
            verdicts[ir] = len(outs) == len(exp) and all(
                np.shape(y) == e.shape and bool(np.all(np.abs(np.asarray(y, np.float64) - e) <= ATOL + RTOL * np.abs(e)))
                for y, e in zip(outs, exp)
            )
        return verdicts[ir]

    lo, hi = 0, n  # answer in [lo, hi]; hi == n means none
    while lo < hi:
        mid = (lo + hi) // 2
        if good(mid):
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < n else None
