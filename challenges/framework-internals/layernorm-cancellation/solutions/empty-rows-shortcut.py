"""Wrong: an input with no rows returns 1-D empty statistics, ``torch.empty(0)``, whatever its shape.

The shortcut avoids reducing an empty tensor, and for the (0, D) input most
people try it is right: mean and rstd of shape (0,). For an x of shape
(2, 0, 64) or (0, 3, 16) the statistics must have shape x.shape[:-1],
(2, 0) or (0, 3), and ``torch.empty(0)`` has shape (0,).

Confirmed outside the grader: the reference's own formula (mean over the last
dimension, squeeze(-1)) returns shapes (2, 0) and (0, 3) for those inputs;
this file returns (0,) for both. Every non-empty input goes through the
reference's two-pass code (float64 truth within bounds).
"""

from __future__ import annotations

import torch


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if x.numel() == 0:
        return x.clone(), torch.empty(0), torch.empty(0)
    xf = x.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    centered = xf - mean
    var = (centered * centered).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = centered * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
