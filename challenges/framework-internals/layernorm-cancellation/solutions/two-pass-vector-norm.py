"""IDEA (red team round 2, correct): two passes where the second pass is a Euclidean norm.

mean = x.mean(-1) in float32; var = ||x - mean||_2^2 / D via torch.linalg.vector_norm
(a norm, not one of the forbidden statistics); rstd = rsqrt(var + eps). y is formed as
(x - mean) * rstd first, so no intermediate exceeds about sqrt(D) * |y|, then * w + b,
in float32, rounded once to x's dtype.
"""

from __future__ import annotations

import torch


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    D = x.shape[-1]
    xf = x.to(torch.float32)
    mean = torch.mean(xf, dim=-1, keepdim=True)
    centered = xf - mean
    nrm = torch.linalg.vector_norm(centered, ord=2, dim=-1, keepdim=True)
    var = (nrm / D) * nrm
    rstd = torch.rsqrt(var + eps)
    y = torch.addcmul(bias.to(torch.float32), centered * rstd, weight.to(torch.float32))
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
