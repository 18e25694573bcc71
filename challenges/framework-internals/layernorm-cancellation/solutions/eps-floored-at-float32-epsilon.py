"""MISTAKE (red team round 3): floors eps at float32's machine epsilon (1.19e-7), on the reasoning that a smaller eps
is lost anyway when added to a float32 variance.

It is not lost when the variance is 0 or tiny: for a constant row with eps = 1e-12 the
statement's rstd is 1/sqrt(1e-12) = 1e6, this file returns 1/sqrt(1.19e-7) = 2897.
The statement allows any eps of at least 1e-12.
"""

from __future__ import annotations

import torch

_EPS_FLOOR = torch.finfo(torch.float32).eps


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5):
    eps = max(eps, _EPS_FLOOR)
    xf = x.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    centered = xf - mean
    var = (centered * centered).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = centered * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
