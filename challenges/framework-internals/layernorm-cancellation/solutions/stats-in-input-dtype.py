"""Two-pass, but the mean and variance are computed and kept in x's dtype.

The formula is right and nothing cancels, but the mean is rounded to
float16/bfloat16 before it is subtracted: with a mean of 1024 in float16 the
rounding alone can be 0.5, a quarter of the spread. Squares of float16
values above 256 overflow as well.
"""

from __future__ import annotations

import torch


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    mean = x.mean(-1, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = centered * rstd * weight + bias
    return y, mean.squeeze(-1).to(torch.float32), rstd.squeeze(-1).to(torch.float32)
