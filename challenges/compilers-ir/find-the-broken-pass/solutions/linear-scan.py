"""Right answers, too many compiles: a linear scan from the first dump.

The comparison is right (the statement's tolerance, every output), and the
scan stops at the first broken dump, so the answer is always correct. But a
break in the middle of 124 dumps costs 80 compiles, and a healthy pipeline
costs all n of them. The bisect probes allow ceil(log2(n)) + 2.
"""

from __future__ import annotations

import numpy as np


def find_broken_pass(passes, inputs, expected, compile_and_run):
    for index, (_name, ir) in enumerate(passes):
        outputs = compile_and_run(ir, inputs)
        good = all(np.allclose(np.asarray(y, np.float64), e, rtol=1e-4, atol=1e-5) for y, e in zip(outputs, expected, strict=True))
        if not good:
            return index
    return None
