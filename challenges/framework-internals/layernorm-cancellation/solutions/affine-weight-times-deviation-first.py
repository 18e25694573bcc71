"""MISTAKE (red team round 2): y is written as the textbook gamma * (x - mu) / sigma + beta.

The product weight * (x - mean) is formed before dividing by sigma. In float32 it
overflows to inf when |x - mean| * |weight| > 3.4e38, e.g. bfloat16 or float32
activations of 1e15 (allowed) with a weight of 1e24 (allowed: weight has x's dtype
and no range limit), although y itself, about +-1e24, is finite. The statement
requires every output to be finite and within the bound. Statistics are exact.
"""

from __future__ import annotations

import torch


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    xf = x.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    centered = xf - mean
    var = (centered * centered).mean(-1, keepdim=True)
    sigma = torch.sqrt(var + eps)
    y = weight.to(torch.float32) * centered / sigma + bias.to(torch.float32)
    rstd = 1.0 / sigma
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
