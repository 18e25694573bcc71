"""Reference: softmax and log-softmax computed in float32 and rounded once.

Both subtract the maximum along ``dim`` first, so ``exp`` never sees a
positive argument and never overflows; sum in float32; and round to the
input's dtype only at the end. log_softmax is ``(x - max) - log(sum)`` in
that order: it never takes the log of a probability that may have
underflowed, and never rounds ``max + log(sum)`` at the scale of ``max``.
"""

from __future__ import annotations

import torch


def _shifted(x: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(x - max, sum(exp(x - max))) along dim, in float32."""
    xf = x.to(torch.float32)
    shifted = xf - xf.amax(dim, keepdim=True)
    return shifted, torch.exp(shifted).sum(dim, keepdim=True)


_ONES: dict[tuple, torch.Tensor] = {}


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if x.shape[dim] == 1:
        # One entry per slice: every probability is exactly 1. Keep one tensor of ones per shape and dtype.
        key = (tuple(x.shape), x.dtype)
        if key not in _ONES:
            _ONES[key] = torch.ones(x.shape, dtype=x.dtype)
        return _ONES[key]
    shifted, total = _shifted(x, dim)
    return (torch.exp(shifted) / total).to(x.dtype)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    shifted, total = _shifted(x, dim)
    return (shifted - torch.log(total)).to(x.dtype)
