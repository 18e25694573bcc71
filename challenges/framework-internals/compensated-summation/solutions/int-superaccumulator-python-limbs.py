"""WRONG since red team round 1 (sent as a right file): exact summation in integer arithmetic, then one correct
rounding to float32, but the limbs are read into Python integers with ``.tolist()``. They are computed from the
values (their bits, through ``view(torch.int32)``), so that takes values out of torch, which the rules forbid
whatever the dtype: an exact integer accumulator is allowed only if it finishes in torch.

Every float32 value is m * 2^(b) * 2^-149 with an integer mantissa m < 2^24 and
a bit offset b in [0, 253] (float16/bfloat16 values convert to float32
exactly). The bit patterns are read with ``view(torch.int32)`` and each
shifted mantissa is split over two 32-bit limbs of a 9-limb fixed-point
"superaccumulator", added with ``index_add_`` on int64 (each limb stays below
2^53 for a few million terms). The limbs are combined into one exact Python
integer (integer ``.tolist()`` only: no float leaves torch, but values do) and rounded
to nearest-even into a float32 bit pattern, which is viewed back as float32.
The result is the exact sum correctly rounded: error <= u*|S|.
"""

from __future__ import annotations

import torch

_LIMBS = 9  # bits 0 .. 253 + 55, in 32-bit limbs


def _to_float32(bits: int) -> torch.Tensor:
    if bits >= 1 << 31:
        bits -= 1 << 32
    return torch.tensor([bits], dtype=torch.int32).view(torch.float32).reshape(()).clone()


def total(x: torch.Tensor) -> torch.Tensor:
    v = x.reshape(-1).to(torch.float32).contiguous()
    if v.numel() == 0:
        return torch.zeros((), dtype=torch.float32)
    raw = v.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    negative = (raw >> 31) == 1
    e = (raw >> 23) & 0xFF
    frac = raw & 0x7FFFFF
    mant = torch.where(e > 0, frac | 0x800000, frac)
    b = torch.clamp(e, min=1) - 1
    limb = b // 32
    w = mant << (b % 32)  # < 2^55
    sgn = torch.where(negative, -1, 1).to(torch.int64)
    acc = torch.zeros(_LIMBS, dtype=torch.int64)
    acc.index_add_(0, limb, sgn * (w & 0xFFFFFFFF))
    acc.index_add_(0, limb + 1, sgn * (w >> 32))
    exact = 0
    for j, a in enumerate(acc.tolist()):  # int64 -> Python int, exact
        exact += a << (32 * j)
    # exact * 2^-149 is the sum. Round |exact| to 24 significant bits, nearest even.
    sign_bit = (1 << 31) if exact < 0 else 0
    a = -exact if exact < 0 else exact
    nb = a.bit_length()
    if nb <= 24:
        return _to_float32(sign_bit | a)  # subnormal or smallest binade: exact
    shift = nb - 24
    q = a >> shift
    rem = a - (q << shift)
    half = 1 << (shift - 1)
    if rem > half or (rem == half and (q & 1)):
        q += 1
        if q == 1 << 24:
            q >>= 1
            shift += 1
    if shift + 1 >= 255:
        return _to_float32(sign_bit | (0xFF << 23))  # beyond float32's range
    return _to_float32(sign_bit | ((shift << 23) + q))
