"""Wrong: the statistics are returned with ``squeeze()``, which drops EVERY size-1 dimension.

The two-pass arithmetic is the reference's, and ``squeeze()`` does give the
0-d mean and rstd the statement asks for when x is 1-D, and the right shape
for every x whose leading dimensions are all larger than 1. For an x of shape
(1, 256), (4, 1, 128), (1, 3, 64) or (1, 1) the statistics come back as (),
(4,), (3,) and () instead of x.shape[:-1] = (1,), (4, 1), (1, 3) and (1,): a
batch of one sequence, or a sequence of one token, loses an axis, and code
that broadcasts mean[..., None] against x then fails or broadcasts wrongly.

Confirmed outside the grader: for those inputs this file's mean and rstd
shapes differ from x.shape[:-1] (the statement's table, and what
``xf.mean(-1)`` returns); the values are the reference's, within the bounds
of the float64 truth.
"""

from __future__ import annotations

import torch


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    xf = x.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    centered = xf - mean
    var = (centered * centered).mean(-1, keepdim=True)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = centered * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(), rstd.squeeze()
