"""A correct softmax, and log_softmax as the log of it.

Once a probability underflows (below 6e-8 in float16, 1e-45 even in
float32), its log is -inf although the true log-probability is a modest
finite number; and long before that, a subnormal probability has lost most
of its digits.
"""

from __future__ import annotations

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    xf = x.to(torch.float32)
    e = torch.exp(xf - xf.amax(dim, keepdim=True))
    return (e / e.sum(dim, keepdim=True)).to(x.dtype)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return torch.log(softmax(x, dim))
