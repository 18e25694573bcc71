"""MISTAKE (red team round 2): the parameters are named (input, gamma, beta, eps), the paper's
names, instead of the statement's (x, weight, bias, eps).

`layer_norm(x, weight=w, bias=b)` raises TypeError (unexpected keyword argument);
positional calls work.
"""

from __future__ import annotations

import torch


def layer_norm(
    input: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    xf = input.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    centered = xf - mean
    var = (centered * centered).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = centered * rstd * gamma.to(torch.float32) + beta.to(torch.float32)
    return y.to(input.dtype), mean.squeeze(-1), rstd.squeeze(-1)
