# Correct (red team round 3): the first parameter named `input`, as torch names it; `dim` keeps its name and default.
# The starter makes `x` positional-only (`/`), as the statement says the probes pass it: its name is free.
from __future__ import annotations
import torch


def _shifted(input, dim):
    xf = input.to(torch.float32)
    shifted = xf - torch.max(xf, dim, keepdim=True).values
    return shifted, torch.exp(shifted).sum(dim, keepdim=True)


def softmax(input: torch.Tensor, dim: int = -1) -> torch.Tensor:
    shifted, total = _shifted(input, dim)
    return torch.div(torch.exp(shifted), total).to(input.dtype)


def log_softmax(input: torch.Tensor, dim: int = -1) -> torch.Tensor:
    shifted, total = _shifted(input, dim)
    return torch.sub(shifted, torch.log(total)).to(input.dtype)
