"""Subtracts the maximum, but does all the arithmetic in the input's dtype.

Nothing overflows, but every step (x - max, exp, the sum, the division, the
log) rounds to float16 or bfloat16: the errors of three or four roundings
add up to several ulps, and log(sum) near 1 loses the digits that decide the
top logit's log-probability.
"""

from __future__ import annotations

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    e = torch.exp(x - x.amax(dim, keepdim=True))
    return e / e.sum(dim, keepdim=True)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    shifted = x - x.amax(dim, keepdim=True)
    return shifted - torch.log(torch.exp(shifted).sum(dim, keepdim=True))
