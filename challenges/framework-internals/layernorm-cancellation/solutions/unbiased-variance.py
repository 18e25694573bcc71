"""Two-pass in float32, but divides by D - 1 (Bessel's correction).

torch.var's default is the sample variance; layer norm uses the population
variance, dividing by D.
"""

from __future__ import annotations

import torch


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    xf = x.to(torch.float32)
    d = xf.shape[-1]
    mean = xf.mean(-1, keepdim=True)
    centered = xf - mean
    var = (centered * centered).sum(-1, keepdim=True) / max(d - 1, 1)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = centered * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
