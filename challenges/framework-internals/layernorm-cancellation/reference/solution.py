"""Reference: layer norm with a two-pass variance in float32.

The first pass computes the mean; the second averages the squared deviations
from it. The deviations are small numbers computed exactly-ish (two close
float32 values subtract without error), so nothing cancels; E[x^2] - E[x]^2
would subtract two huge, nearly equal numbers instead.
"""

from __future__ import annotations

import torch


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Normalise over the last dim: (y in x.dtype, mean and rstd in float32 of shape x.shape[:-1])."""
    xf = x.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    centered = xf - mean
    var = (centered * centered).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = centered * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
