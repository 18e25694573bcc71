"""Correct, written differently: a plain binary search over every dump.

It does not skip the dumps that repeat their predecessor's text, so it pays
ceil(log2(n + 1)) compiles: 7 for 72 or 124 dumps, 8 for 146. That is still
inside the budget of ceil(log2(n)) + 2. Verdicts are memoized by index, and
the tolerance is the statement's, through np.allclose.
"""

from __future__ import annotations

import numpy as np


def find_broken_pass(passes, inputs, expected, compile_and_run):
    verdicts: dict[int, bool] = {}

    def good(i: int) -> bool:
        if i not in verdicts:
            outputs = compile_and_run(passes[i][1], inputs)
            verdicts[i] = len(outputs) == len(expected) and all(
                np.allclose(y.astype(np.float64), e, rtol=1e-4, atol=1e-5) for y, e in zip(outputs, expected, strict=True)
            )
        return verdicts[i]

    lo, hi = 0, len(passes)  # passes[:lo] good, passes[hi:] broken; hi == len(passes) means none
    while lo < hi:
        mid = (lo + hi) // 2
        if good(mid):
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < len(passes) else None
