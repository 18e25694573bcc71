"""A good bisection that judges a dump by its average error, not element by element.

"A dump is good when its error is within tolerance": it takes the mean of
|y - e| over each output and holds it to atol + rtol * mean(|e|), with the
statement's rtol and atol. That finds swaps, wrong reduction dimensions and
constants that shift every element alike. A constant rounded through
bfloat16 that goes through a tanh moves a few elements by several times the
bound and most of them hardly at all: the average stays inside, so that
broken dump passes as good and it names a later pass, or None.
"""

from __future__ import annotations

import numpy as np


def find_broken_pass(passes, inputs, expected, compile_and_run):
    changed = [i for i, (_, ir) in enumerate(passes) if i == 0 or ir != passes[i - 1][1]]

    def good(i: int) -> bool:
        outputs = compile_and_run(passes[i][1], inputs)
        return all(np.mean(np.abs(np.float64(y) - e)) <= 1e-5 + 1e-4 * np.mean(np.abs(e)) for y, e in zip(outputs, expected, strict=True))

    lo, hi = 0, len(changed)
    while lo < hi:
        mid = (lo + hi) // 2
        if good(changed[mid]):
            lo = mid + 1
        else:
            hi = mid
    return changed[lo] if lo < len(changed) else None
