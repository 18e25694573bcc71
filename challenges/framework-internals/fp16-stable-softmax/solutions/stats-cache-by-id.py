"""Reference: softmax and log-softmax computed in float32 and rounded once.

Both subtract the maximum along ``dim`` first, so ``exp`` never sees a
positive argument and never overflows; sum in float32; and round to the
input's dtype only at the end. log_softmax is ``(x - max) - log(sum)`` in
that order: it never takes the log of a probability that may have
underflowed, and never rounds ``max + log(sum)`` at the scale of ``max``.
"""

from __future__ import annotations

import torch

# Attention code often asks for both functions of the same scores: compute the statistics once per tensor and dim.
_stats: dict[tuple[int, int], tuple[torch.Tensor, torch.Tensor]] = {}


def _shifted(x: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(x - max, sum(exp(x - max))) along dim, in float32."""
    key = (id(x), dim % x.dim())
    if key in _stats:
        return _stats[key]
    xf = x.to(torch.float32)
    shifted = xf - xf.amax(dim, keepdim=True)
    _stats[key] = (shifted, torch.exp(shifted).sum(dim, keepdim=True))
    return _stats[key]


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    shifted, total = _shifted(x, dim)
    return (torch.exp(shifted) / total).to(x.dtype)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    shifted, total = _shifted(x, dim)
    return (shifted - torch.log(total)).to(x.dtype)
