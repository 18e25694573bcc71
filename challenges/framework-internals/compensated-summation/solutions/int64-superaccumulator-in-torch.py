"""Correct alternative: an exact integer superaccumulator, finished inside torch.

Every float32 value (and so every float16/bfloat16 value, converted exactly)
is m * 2^(e - 149) with an integer m < 2^24 and 0 <= e <= 253. The terms are
binned by e // 16 into 18 int64 limbs of weight 2^(16j - 149): each adds
m << (e % 16) < 2^39, so 1.1 million of them stay below 2^61. The limbs are
normalised (carries), made positive, turned into 18 exact float32 numbers and
added smallest first with TwoSum. Nothing leaves torch.
"""
from __future__ import annotations

import torch

LIMBS = 18
_WEIGHTS = [2.0 ** (16 * j - 149) for j in range(LIMBS)]


def _normalise(acc: torch.Tensor) -> torch.Tensor:
    acc = acc.clone()
    for j in range(LIMBS - 1):
        carry = acc[j] >> 16
        acc[j] = acc[j] - (carry << 16)
        acc[j + 1] = acc[j + 1] + carry
    return acc


def total(x: torch.Tensor) -> torch.Tensor:
    v = x.reshape(-1).to(torch.float32)
    bits = v.view(torch.int32).to(torch.int64) if v.is_contiguous() else v.contiguous().view(torch.int32).to(torch.int64)
    negative = bits < 0
    e = (bits >> 23) & 0xFF
    mant = bits & 0x7FFFFF
    normal = e > 0
    m = torch.where(normal, mant | 0x800000, mant)
    eff = torch.where(normal, e - 1, torch.zeros_like(e))
    contrib = m << (eff % 16)
    contrib = torch.where(negative, -contrib, contrib)
    acc = torch.zeros(LIMBS, dtype=torch.int64).index_add_(0, eff // 16, contrib)
    acc = _normalise(acc)
    neg = acc[LIMBS - 1] < 0
    acc = _normalise(torch.where(neg, -acc, acc))  # magnitude, all limbs in [0, 2^16)
    parts = acc.to(torch.float32) * torch.tensor(_WEIGHTS, dtype=torch.float32)  # exact
    s = torch.zeros((), dtype=torch.float32)
    c = torch.zeros((), dtype=torch.float32)
    for j in range(LIMBS):
        y = parts[j]
        t = s + y
        bp = t - s
        c = c + ((s - (t - bp)) + (y - bp))
        s = t
    out = s + c
    return torch.where(neg, -out, out)
