# Correct, written differently (red team round 3, right-content-keyed-cache.py; compile_and_run
# called by the statement's parameter names, after right-keyword-compile-call.py).
# It keeps a cache ACROSS calls, but keyed by everything the outputs depend
# on: the exact IR text and the full bytes, dtype and shape of every input (outputs are a
# deterministic function of those). Same text + same input values -> same outputs, so the cache can
# save compiles but never change an answer; a changed-in-place array has new bytes and misses.
# The verdict is recomputed each call against this call's expected.
from __future__ import annotations

import hashlib

import numpy as np

RTOL, ATOL = 1e-4, 1e-5
_OUTPUTS: dict[tuple[str, str], list[np.ndarray]] = {}


def inputs_key(inputs) -> str:
    h = hashlib.sha256()
    for a in inputs:
        a = np.ascontiguousarray(a, dtype=np.float32)  # exactly what compile_and_run feeds IREE
        h.update(repr(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def is_good(outputs, expected):
    if len(outputs) != len(expected):
        return False
    for y, e in zip(outputs, expected, strict=True):
        y = np.asarray(y, dtype=np.float64)
        if y.shape != e.shape or not np.all(np.abs(y - e) <= ATOL + RTOL * np.abs(e)):
            return False
    return True


def find_broken_pass(passes, inputs, expected, compile_and_run):
    key_in = inputs_key(inputs)

    def run(ir):
        key = (ir, key_in)
        if key not in _OUTPUTS:
            _OUTPUTS[key] = [np.array(y, copy=True) for y in compile_and_run(ir_text=ir, inputs=inputs)]
        return [y.copy() for y in _OUTPUTS[key]]

    candidates = [i for i, (_, ir) in enumerate(passes) if i == 0 or ir != passes[i - 1][1]]
    expected = [np.asarray(e, dtype=np.float64) for e in expected]
    lo, hi = 0, len(candidates)
    while lo < hi:
        mid = (lo + hi) // 2
        if is_good(run(passes[candidates[mid]][1]), expected):
            lo = mid + 1
        else:
            hi = mid
    return candidates[lo] if lo < len(candidates) else None
