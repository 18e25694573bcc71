"""Neumaier summation in float32 over lanes, each lane's rounding errors added one after another into its own compensation.

The input is cut into ``k`` rows of ``m`` lanes. Each lane runs Neumaier's
algorithm down its column: a running float32 sum ``s`` and a running float32
compensation ``c`` that collects the rounding error of every addition
exactly (TwoSum's error term, computed with the magnitude test that makes it
exact whichever operand is larger). The ``m`` lane sums are then summed the
same way, level by level, until one number is left; the compensations of
every level are added at the very end.

The mistake (the package's own reference had it until issue 27's round): a
lane's compensation is a running float32 sum of its k rounding errors, one
after another, so it is off by about k*u of their total, with k about
sqrt(n), hundreds. When the errors all have one sign (many copies of 0.1 and
one term that cancels them) that is far past the bound's second-order term.
"""

from __future__ import annotations

import math

import torch


def _neumaier_lanes(rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Sum a (k, m) float32 tensor down its columns: (sums, compensations), each (m,)."""
    s = torch.zeros(rows.shape[1], dtype=torch.float32)
    c = torch.zeros_like(s)
    for y in rows:
        t = s + y
        # The rounding error of s + y, exactly: subtract the larger operand first.
        c = c + torch.where(s.abs() >= y.abs(), (s - t) + y, (y - t) + s)
        s = t
    return s, c


def total(x: torch.Tensor) -> torch.Tensor:
    """The sum of a 1-D float16/bfloat16/float32 tensor, as a 0-d float32 tensor."""
    v = x.reshape(-1).to(torch.float32)  # float16/bfloat16 -> float32 is exact
    compensation = torch.zeros((), dtype=torch.float32)
    while v.numel() > 1:
        n = v.numel()
        k = max(2, math.isqrt(n))  # rows: the serial length of each lane
        m = -(-n // k)  # lanes
        padded = torch.cat([v, v.new_zeros(k * m - n)])  # zeros change no sum
        v, c = _neumaier_lanes(padded.reshape(k, m))
        compensation = compensation + c.sum()  # second-order small: float32 is enough
    if v.numel() == 0:
        return torch.zeros((), dtype=torch.float32)
    return v[0] + compensation
