"""Softmax and log-softmax with shortcuts for trivial slices, each returning a tensor of its own.

A slice of one entry has probability exactly 1 and log-probability exactly 0, whatever its logit (every slice
holds a finite value), and an empty tensor has nothing to compute: both skip the arithmetic, but build a new
tensor on every call, so the caller may change its input or result in place afterwards. Every other slice is
shifted by its maximum in float32, summed in float32, and rounded once to the input's dtype.
"""

from __future__ import annotations

import torch


def _trivial(x: torch.Tensor, dim: int, fill: float) -> torch.Tensor | None:
    """A new contiguous tensor of fill when every slice along dim has one entry (or there is none), else None."""
    if x.numel() == 0 or x.size(dim) == 1:
        return torch.full(x.shape, fill, dtype=x.dtype)
    return None


def _stats(x: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    wide = x.float()
    top = torch.amax(wide, dim=dim, keepdim=True)
    shifted = torch.sub(wide, top)
    return shifted, torch.sum(torch.exp(shifted), dim=dim, keepdim=True)


def softmax(x: torch.Tensor, /, dim: int = -1) -> torch.Tensor:
    quick = _trivial(x, dim, 1.0)
    if quick is not None:
        return quick
    shifted, total = _stats(x, dim)
    return torch.div(torch.exp(shifted), total).to(dtype=x.dtype)


def log_softmax(x: torch.Tensor, /, dim: int = -1) -> torch.Tensor:
    quick = _trivial(x, dim, 0.0)
    if quick is not None:
        return quick
    shifted, total = _stats(x, dim)
    return torch.sub(shifted, torch.log(total)).to(dtype=x.dtype)
