"""Red team round 1: a pass that runs many times is suspected only at its first run that changed the IR.

"If canonicalize was correct once, running it again is correct too": once a
pass name has been a candidate, its later runs are not. The statement lets
any run be the broken one; when the third run of canonicalize on @main
breaks the program (its second run already changed the IR), the search
names a later pass. Everything else is the reference's bisection.
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
    seen_names: set[str] = set()
    candidates = []
    for i, (name, ir) in enumerate(passes):
        if i == 0 or (ir != passes[i - 1][1] and name not in seen_names):
            candidates.append(i)
            seen_names.add(name)
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
