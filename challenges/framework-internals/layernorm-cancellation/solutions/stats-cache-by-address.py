"""MISTAKE (red team round 3): memoises the row statistics of the last input, keyed on (data_ptr, shape, stride, dtype, eps),
to skip the two reductions when the same activation is normalised again.

An input with other values at the same address (updated in place, or a fresh tensor
allocated where a freed one lived) gets the stale mean and rstd.
"""

from __future__ import annotations

import torch

_last: dict = {}


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5):
    xf = x.to(torch.float32)
    key = (x.data_ptr(), tuple(x.shape), x.stride(), x.dtype, eps)
    if key in _last:
        mean, rstd = _last[key]
        centered = xf - mean
    else:
        mean = xf.mean(-1, keepdim=True)
        centered = xf - mean
        var = (centered * centered).mean(-1, keepdim=True)
        rstd = 1.0 / torch.sqrt(var + eps)
        _last.clear()
        _last[key] = (mean, rstd)
    y = centered * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
