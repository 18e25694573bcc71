"""WRONG: scales everything up by 2**40 "so subnormals become normal", scales back at the end.

Mistake: to keep subnormal inputs and error terms away from the subnormal range the
candidate multiplies by 2**40 and divides at the end. Any term above ~2**88 (3e26)
becomes inf, so values near the top of float32's range give inf/nan.
Breaks: "Its values are finite, and sum(|x_i|) is below 2^127 ... Each result must be
finite" (dynamic range: "values near the top of float32's range").
"""

from __future__ import annotations

import torch

SCALE = 2.0**40


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def total(x: torch.Tensor) -> torch.Tensor:
    v = x.reshape(-1).to(torch.float32) * SCALE
    if v.numel() == 0:
        return torch.zeros((), dtype=torch.float32)
    errs = []
    while v.numel() > 1:
        if v.numel() % 2:
            v = torch.cat([v, v.new_zeros(1)])
        v, e = _two_sum(v[0::2], v[1::2])
        errs.append(e)
    comp = torch.cat(errs).sum() if errs else torch.zeros((), dtype=torch.float32)
    return (v[0] + comp) / SCALE
