"""MISTAKE (red team round 2): the affine step is folded into y = x * a + c with
a = rstd * w and c = b - mean * a.

Algebraically equal and accurate for ordinary weights, but mean * a = mean * rstd * w
is formed explicitly: with |x| ~ 1e15 (allowed) and a weight of 1e24 (allowed: x's dtype,
no range limit), mean * a ~ 1e45 overflows float32, c = -inf, and y = inf - inf = NaN
where the exact y is finite (+-1e24, or b on a constant row). The statistics are right.

Otherwise: mean = x.mean(-1) in float32, var = ||x - mean||_2^2 / D via
torch.linalg.vector_norm, rstd = rsqrt(var + eps), y rounded once to x's dtype.
"""

from __future__ import annotations

import torch


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    D = x.shape[-1]
    xf = x.to(torch.float32)
    mean = torch.mean(xf, dim=-1, keepdim=True)
    nrm = torch.linalg.vector_norm(xf - mean, ord=2, dim=-1, keepdim=True)
    var = (nrm / D) * nrm
    rstd = torch.rsqrt(var + eps)
    a = rstd * weight.to(torch.float32)
    c = bias.to(torch.float32) - mean * a
    y = torch.addcmul(c, xf, a)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
