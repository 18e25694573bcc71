"""A good bisection with a generous tolerance: "float32 is noisy, use 1e-2".

Swaps and wrong reduction dimensions move the outputs by whole units, so it
finds those. A constant rounded through bfloat16 moves them by about 0.2%,
inside rtol = 1e-2, so those dumps pass as good: it names a later pass, or
None.
"""

from __future__ import annotations

import numpy as np


def find_broken_pass(passes, inputs, expected, compile_and_run):
    changed = [i for i, (_, ir) in enumerate(passes) if i == 0 or ir != passes[i - 1][1]]

    def good(i: int) -> bool:
        outputs = compile_and_run(passes[i][1], inputs)
        return all(np.allclose(y, e, rtol=1e-2, atol=1e-2) for y, e in zip(outputs, expected, strict=True))

    lo, hi = 0, len(changed)
    while lo < hi:
        mid = (lo + hi) // 2
        if good(changed[mid]):
            lo = mid + 1
        else:
            hi = mid
    return changed[lo] if lo < len(changed) else None
