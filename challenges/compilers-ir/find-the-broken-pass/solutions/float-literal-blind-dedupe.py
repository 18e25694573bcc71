"""Red team round 1: the "did this pass change anything?" test compares dumps with float literals masked.

"Passes re-print folded constants with other digits, so ignore them": a
constant rounded through bfloat16 at a pass that changes nothing on the
correct program (0.333333343 became 0.333984375 at symbol-dce) is the only
change in that dump, which is then never a candidate: the search names a
later pass, or None. Everything else is the reference's bisection.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import re

import numpy as np

RTOL, ATOL = 1e-4, 1e-5


def is_good(outputs: Sequence[np.ndarray], expected: Sequence[np.ndarray]) -> bool:
    """Every element of every output within atol + rtol * |expected| (both sides in float64)."""
    if len(outputs) != len(expected):
        return False
    for y, e in zip(outputs, expected, strict=True):
        y = np.asarray(y, dtype=np.float64)
        if y.shape != e.shape or not np.all(np.abs(y - e) <= ATOL + RTOL * np.abs(e)):
            return False
    return True


def find_broken_pass(
    passes: Sequence[tuple[str, str]],
    inputs: Sequence[np.ndarray],
    expected: Sequence[np.ndarray],
    compile_and_run: Callable[[str, Sequence[np.ndarray]], list[np.ndarray]],
) -> int | None:
    # Dumps that differ from the one before them; the first dump always counts.
    float_literal = re.compile(r"[-+]?\d+\.\d*(?:[eE][-+]?\d+)?|0x[0-9A-Fa-f]{8,16}")
    shapes = [float_literal.sub("<f>", ir) for _, ir in passes]
    candidates = [i for i in range(len(passes)) if i == 0 or shapes[i] != shapes[i - 1]]
    expected = [np.asarray(e, dtype=np.float64) for e in expected]

    # Invariant: candidates[:lo] are good, candidates[hi:] are broken
    # (hi == len(candidates) stands for "none is broken").
    lo, hi = 0, len(candidates)
    while lo < hi:
        mid = (lo + hi) // 2
        if is_good(compile_and_run(passes[candidates[mid]][1], inputs), expected):
            lo = mid + 1
        else:
            hi = mid
    return candidates[lo] if lo < len(candidates) else None
