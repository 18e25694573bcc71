"""Reference: bisect the pipeline over the dumps whose text changed.

Two facts make the search short:

1. The verdict is monotone. Dumps before the broken pass are good, and the
   broken one and every later one are bad. So "is dump i good?" is False
   from some index on, and a binary search finds that index.
2. A pass that leaves the text unchanged cannot be the first broken one,
   because its dump behaves exactly like the one before it. Most passes in
   a small float32 program change nothing, so the first broken dump is one
   of the ~20 dumps whose text differs from its predecessor's. Searching
   only those takes about log2(20) compiles instead of log2(120).

The answer can be any of those candidates, or None when nothing is broken,
so the search runs over len(candidates) + 1 outcomes. It assumes nothing
about the first or the last dump.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
    candidates = [i for i, (_, ir) in enumerate(passes) if i == 0 or ir != passes[i - 1][1]]
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
