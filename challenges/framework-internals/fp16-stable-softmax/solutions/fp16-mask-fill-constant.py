"""Softmax / log-softmax in float32; masked (-inf) logits replaced by a large
negative constant first (the usual attention trick to avoid inf - inf), and
put back as 0 / -inf at the end.

Mistake: the fill value is float16's lowest (-65504), used for every dtype;
bfloat16/float32 logits may lie below it, and then the masked entries take
over the max and the sum.
"""
from __future__ import annotations

import torch

MASK_VALUE = -65504.0   # finfo(float16).min, "safe" for half precision


def _prep(x: torch.Tensor, dim: int):
    xf = x.to(torch.float32)
    masked = torch.isneginf(xf)
    xf = torch.where(masked, torch.full_like(xf, MASK_VALUE), xf)
    shifted = xf - xf.amax(dim, keepdim=True)
    return masked, shifted, torch.exp(shifted).sum(dim, keepdim=True)


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    masked, shifted, total = _prep(x, dim)
    y = torch.exp(shifted) / total
    return torch.where(masked, torch.zeros_like(y), y).to(x.dtype)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    masked, shifted, total = _prep(x, dim)
    y = shifted - torch.log(total)
    return torch.where(masked, torch.full_like(y, float("-inf")), y).to(x.dtype)
