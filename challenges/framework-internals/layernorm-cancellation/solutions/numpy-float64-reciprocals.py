"""MISTAKE (red team round 2): a Welford loop whose 1/k factors are precomputed with numpy.

`1.0 / np.arange(1, D + 1)` is a float64 array, and `torch.from_numpy` wraps it as a
float64 tensor before `.to(torch.float32)`. The statement: "Create no float64
tensors". All arithmetic on the data is float32 and the values are within bounds.
"""

from __future__ import annotations

import numpy as np
import torch


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    D = x.shape[-1]
    xf = x.to(torch.float32)
    inv_k = torch.from_numpy(1.0 / np.arange(1, D + 1)).to(torch.float32)
    mean = torch.zeros(x.shape[:-1], dtype=torch.float32)
    m2 = torch.zeros(x.shape[:-1], dtype=torch.float32)
    for k in range(D):
        xk = xf[..., k]
        delta = xk - mean
        mean = mean + delta * inv_k[k]
        m2 = m2 + delta * (xk - mean)
    var = m2 / D
    rstd = 1.0 / torch.sqrt(var + eps)
    y = (xf - mean.unsqueeze(-1)) * rstd.unsqueeze(-1) * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean, rstd
