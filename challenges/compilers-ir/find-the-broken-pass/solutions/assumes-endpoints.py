"""A bisection that takes the endpoints for granted.

"The input is fine and the output is broken, that is why we are here": it
starts from lo = 0 (assumed good) and hi = n - 1 (assumed broken) and never
compiles either. It saves two compiles and gets both edges wrong. When the
very first pass is broken it names pass 1, and when nothing is broken it
names the last pass instead of None.
"""

from __future__ import annotations

import numpy as np


def find_broken_pass(passes, inputs, expected, compile_and_run):
    def good(i: int) -> bool:
        outputs = compile_and_run(passes[i][1], inputs)
        return all(np.allclose(y.astype(np.float64), e, rtol=1e-4, atol=1e-5) for y, e in zip(outputs, expected, strict=True))

    lo, hi = 0, len(passes) - 1  # invariant: lo good, hi broken (both assumed, never checked)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if good(mid):
            lo = mid
        else:
            hi = mid
    return hi
