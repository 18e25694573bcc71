"""Red team round 1: never suspects a run of canonicalize or CSE.

"Upstream canonicalization and CSE are battle-tested, the bug is in an IREE
pass": besides the dumps identical to the one before them, it drops every
`canonicalize` and `cse` dump from the candidates. The statement lets any
pass be the broken one; when it is a run of canonicalize or CSE, the search
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
    candidates = [
        i for i, (name, ir) in enumerate(passes)
        if i == 0 or (ir != passes[i - 1][1] and name.split()[0] not in ("canonicalize", "cse"))
    ]
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
