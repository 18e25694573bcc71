"""Two-pass in float32, but eps is added to the standard deviation, not the variance.

1 / (sqrt(var) + eps) is a different function from 1 / sqrt(var + eps): for
a constant row the first is 1/eps = 1e5, the second 1/sqrt(eps) = 316.
"""

from __future__ import annotations

import torch


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    xf = x.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    centered = xf - mean
    std = torch.sqrt((centered * centered).mean(-1, keepdim=True))
    rstd = 1.0 / (std + eps)
    y = centered * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
