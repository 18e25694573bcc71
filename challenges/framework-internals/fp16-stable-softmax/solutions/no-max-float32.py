"""Computes in float32 but never subtracts the maximum.

float32 does not save exp(x): it overflows for x > 88.7, and the row becomes
inf / inf = NaN. Inputs of float16 are at most 65504 and bfloat16 inputs can
reach 3e38.
"""

from __future__ import annotations

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    e = torch.exp(x.to(torch.float32))
    return (e / e.sum(dim, keepdim=True)).to(x.dtype)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    xf = x.to(torch.float32)
    return (xf - torch.log(torch.exp(xf).sum(dim, keepdim=True))).to(x.dtype)
