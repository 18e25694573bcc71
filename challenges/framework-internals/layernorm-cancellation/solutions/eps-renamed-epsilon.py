"""MISTAKE (red team round 2): the fourth parameter is named `epsilon`, not `eps`.

The statement's signature is `layer_norm(x, weight, bias, eps=1e-5)`. A call
`layer_norm(x, w, b, eps=0.1)` raises TypeError (unexpected keyword argument).
Positional and default calls work.
"""

from __future__ import annotations

import torch


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, epsilon: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    xf = x.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    centered = xf - mean
    var = (centered * centered).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + epsilon)
    y = centered * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
