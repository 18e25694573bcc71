"""Reference: Neumaier (improved Kahan) summation in float32, vectorised over lanes.

The input is cut into ``k`` rows of ``m`` lanes. Each lane runs Neumaier's
algorithm down its column: a running float32 sum ``s``, and the rounding
error of every addition, exactly (TwoSum's error term, computed with the
magnitude test that makes it exact whichever operand is larger), kept per
element. The ``m`` lane sums are then summed the same way, level by level,
until one number is left; each level's errors are summed in one float32
reduction and added at the very end.
"""

from __future__ import annotations

import math

import torch

MAX_LEVELS = 64


def _neumaier_lanes(rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Sum a (k, m) float32 tensor down its columns: (the m lane sums, the k*m rounding errors).

    Each error is kept rather than added into a running compensation: a
    lane's k errors summed one after another in float32 would be off by
    about k*u of their total (k is about sqrt(n), hundreds), while one
    ``torch.sum`` over all of them is off by about log2(n)*u, which the
    bound's second-order term allows.
    """
    s = torch.zeros(rows.shape[1], dtype=torch.float32)
    errors = []
    for y in rows:
        t = s + y
        # The rounding error of s + y, exactly: subtract the larger operand first.
        errors.append(torch.where(s.abs() >= y.abs(), (s - t) + y, (y - t) + s))
        s = t
    return s, torch.stack(errors)  # k >= 2 rows: never empty


def total(x: torch.Tensor) -> torch.Tensor:
    """The sum of a 1-D float16/bfloat16/float32 tensor, as a 0-d float32 tensor."""
    v = x.reshape(-1).to(torch.float32)  # float16/bfloat16 -> float32 is exact
    compensation = torch.zeros((), dtype=torch.float32)
    # Each level leaves about sqrt(n) lane sums, so a few levels reach one value (five for 2**32 terms); the bound
    # on the loop keeps a mistake in its exit test from spinning forever.
    for _ in range(MAX_LEVELS):
        if v.numel() <= 1:
            break
        n = v.numel()
        k = max(2, math.isqrt(n))  # rows: the serial length of each lane
        m = -(-n // k)  # lanes
        padded = torch.cat([v, v.new_zeros(k * m - n)])  # zeros change no sum
        v, errors = _neumaier_lanes(padded.reshape(k, m))
        compensation = compensation + errors.sum()  # one float32 reduction of second-order terms
    if v.numel() == 0:
        return torch.zeros((), dtype=torch.float32)
    return v[0] + compensation
