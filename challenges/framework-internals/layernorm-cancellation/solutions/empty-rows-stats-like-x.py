"""MISTAKE (red team round 3): the early return for inputs with no rows builds the statistics with x.new_empty,
so they take x's dtype: float16/bfloat16 instead of float32 when x is a half tensor with no rows.

The statement: mean and rstd are float32 whatever the dtype of x.
"""

from __future__ import annotations

import torch


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5):
    if x.numel() == 0:                               # nothing to normalise
        stats_shape = x.shape[:-1]
        return torch.empty_like(x), x.new_empty(stats_shape), x.new_empty(stats_shape)
    xf = x.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    centered = xf - mean
    var = (centered * centered).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = centered * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
