"""A good bisection with the tolerance loosened tenfold: "rtol = 1e-4 is too strict for float32, use 1e-3".

Everything else is right: the statement's atol, every output, the edges, a
search over the dumps whose text changed. But rtol = 1e-3 is ten times the
statement's bound. A constant rounded through bfloat16 that feeds an exp or
a tanh moves the outputs by only a few times the statement's bound, which
is inside 1e-3, so those broken dumps pass as good and it names a later
pass, or None.
"""

from __future__ import annotations

import numpy as np


def find_broken_pass(passes, inputs, expected, compile_and_run):
    changed = [i for i, (_, ir) in enumerate(passes) if i == 0 or ir != passes[i - 1][1]]

    def good(i: int) -> bool:
        outputs = compile_and_run(passes[i][1], inputs)
        return all(np.allclose(np.float64(y), e, rtol=1e-3, atol=1e-5) for y, e in zip(outputs, expected, strict=True))

    lo, hi = 0, len(changed)
    while lo < hi:
        mid = (lo + hi) // 2
        if good(changed[mid]):
            lo = mid + 1
        else:
            hi = mid
    return changed[lo] if lo < len(changed) else None
