"""Correct, written differently: unchanged dumps are recognised by a SHA-256 of their text, and the
search is a bisection over the distinct dumps with "nothing broken" as one more outcome.

It imports hashlib, a harmless standard-library module: a sealed package must not refuse it
(issue 27: this solution used to get rule_violation, score 0). Hashing stands in for comparing
whole texts, which a candidate may well do to save memory on large dumps.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import numpy as np


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _close(outputs: Sequence[np.ndarray], expected: Sequence[np.ndarray]) -> bool:
    if len(outputs) != len(expected):
        return False
    for got, want in zip(outputs, expected, strict=True):
        got64 = np.asarray(got, dtype=np.float64)
        want64 = np.asarray(want, dtype=np.float64)
        if got64.shape != want64.shape:
            return False
        if not bool(np.all(np.abs(got64 - want64) <= 1e-5 + 1e-4 * np.abs(want64))):
            return False
    return True


def find_broken_pass(
    passes: Sequence[tuple[str, str]],
    inputs: Sequence[np.ndarray],
    expected: Sequence[np.ndarray],
    compile_and_run: Callable[[str, Sequence[np.ndarray]], list[np.ndarray]],
) -> int | None:
    digests = [_digest(ir) for _, ir in passes]
    changed = [i for i in range(len(passes)) if i == 0 or digests[i] != digests[i - 1]]
    # The answer is changed[k] for the first broken k, or None (k == len(changed)).
    first_bad = len(changed)
    low, high = 0, len(changed) - 1
    while low <= high:
        middle = (low + high) // 2
        if _close(compile_and_run(passes[changed[middle]][1], inputs), expected):
            low = middle + 1
        else:
            first_bad = middle
            high = middle - 1
    return changed[first_bad] if first_bad < len(changed) else None
